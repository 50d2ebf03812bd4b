import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { CollectionModel } from '../../contract/collections.js';
import { compiledOnce, count, rowsOf, sqlOf, type On } from '../../platform/store/sql.js';
import type { Store } from '../../platform/store/store.js';
import type { WriteTx } from '../../platform/store/write-path.js';
import { deleteAttachmentsOf } from './attachments.js';
import { isSystemSortField } from '../../platform/config/record-fields.js';

// Owner of the collection tables (r_<collection>) and the tombstones of deleted records: the row
// verbs. What a record means to a caller (access, validation) is api/records.ts's business; lists
// are list-plans.ts's, bulk inserts bulk-insert.ts's, the search index search-index.ts's.

/** A row of a collection's own table; x_<field> columns mirror filter and sort fields. */
export interface RecordRow {
  id: string;
  owner: string;
  parent_id: string | null;
  version: number;
  created_at: string;
  updated_at: string;
  doc: string;
  [column: string]: unknown;
}

/** The columns a record is rendered from (the x_<field> mirrors are for filtering and sorting only). */
export const RECORD_COLUMNS = ['id', 'owner', 'parent_id', 'version', 'created_at', 'updated_at', 'doc'] as const;

/** A collection table through Kysely (its columns depend on the config: untyped). */
export const anyTable = (on: On) => sqlOf(on) as unknown as Kysely<any>;

/** The column a field is stored in: system fields as themselves, the parent field as parent_id, the rest x_<field>. */
export function columnOfField(model: CollectionModel, field: string): string {
  if (isSystemSortField(field)) return field;
  if (field === model.parent?.field) return 'parent_id';
  return `x_${field}`;
}

/** Reading one record by id is the hottest query: compiled once per table. */
export async function readRecordRow(on: On, model: CollectionModel, id: string): Promise<RecordRow | null> {
  const db = anyTable(on);
  const query = compiledOnce(sqlOf(on), `record:${model.table}`, () => db.selectFrom(model.table).select(RECORD_COLUMNS).where('id', '=', '').compile());
  return (await rowsOf<RecordRow>(on, { ...query, parameters: [id] }))[0] ?? null;
}

/** When the record with this id was deleted (epoch ms), or null. */
export async function findTombstone(on: On, collection: string, id: string): Promise<number | null> {
  const tomb = await sqlOf(on).selectFrom('tombstones').select('deleted_at').where('collection', '=', collection).where('id', '=', id).executeTakeFirst();
  return tomb ? Number(tomb.deleted_at) : null;
}

/**
 * The children of these parents (expand=<child>): at most `perParent` each, the first by id, in
 * one statement; only `owner`'s when not null.
 */
export async function childRowsOf(store: Store, child: CollectionModel, parentIds: string[], owner: string | null, perParent: number): Promise<RecordRow[]> {
  if (parentIds.length === 0) return [];
  const db = anyTable(store);
  const columns = sql.join(RECORD_COLUMNS.map((c) => sql.ref(c)));
  const ownerClause = owner === null ? sql`` : sql`and owner = ${owner}`;
  const query = sql<RecordRow>`select ${columns} from (
      select ${columns}, row_number() over (partition by parent_id order by id) as n
      from ${sql.table(child.table)} where parent_id in (${sql.join(parentIds)}) ${ownerClause}
    ) as ranked where n <= ${perParent} order by parent_id, id`;
  return (await query.execute(db)).rows;
}

/**
 * A page of the rows `owner` owns, by id, after `afterId` (null: from the first): an owner's
 * export and deletion read with it (owner collections are indexed on owner, id).
 */
export async function ownedRecordRows(on: On, model: CollectionModel, owner: string, afterId: string | null, limit: number): Promise<RecordRow[]> {
  let query = anyTable(on).selectFrom(model.table).select(RECORD_COLUMNS).where('owner', '=', owner);
  if (afterId !== null) query = query.where('id', '>', afterId);
  return (await query.orderBy('id').limit(limit).execute()) as RecordRow[];
}

/** The rows with these ids (expand=parent), in no particular order. */
export async function recordRowsByIds(store: Store, model: CollectionModel, ids: string[]): Promise<RecordRow[]> {
  if (ids.length === 0) return [];
  return (await anyTable(store).selectFrom(model.table).select(RECORD_COLUMNS).where('id', 'in', ids).execute()) as RecordRow[];
}

export async function insertRecordRow(tx: WriteTx, model: CollectionModel, row: RecordRow): Promise<void> {
  await anyTable(tx).insertInto(model.table).values(row).execute();
}

/** Writes the new version of a row; false when the stored version is no longer `expectedVersion`. */
export async function updateRecordRow(tx: WriteTx, model: CollectionModel, row: RecordRow, expectedVersion: number): Promise<boolean> {
  const { id, owner: _owner, created_at: _created, ...set } = row;
  return count(await anyTable(tx).updateTable(model.table).set(set).where('id', '=', id).where('version', '=', expectedVersion).executeTakeFirst()) === 1;
}

/** A record removed with its parent: which collection, which id, whose. */
export interface RemovedChild {
  collection: CollectionModel;
  id: string;
  owner: string;
}

/**
 * Deletes a record (if still at the version of `row`), its children in `children` and every
 * attachment of both, leaving tombstones so their URLs answer 410. Returns the children removed
 * (each is a `record.deleted` event), or null when the record changed meanwhile.
 */
export async function deleteRecordTree(tx: WriteTx, model: CollectionModel, row: RecordRow, children: CollectionModel[], now: number): Promise<RemovedChild[] | null> {
  const db = anyTable(tx);
  const tombs = [{ collection: model.name, id: row.id, deleted_at: now }];
  const removed: RemovedChild[] = [];
  for (const child of children) {
    const rows = (await db.selectFrom(child.table).select(['id', 'owner']).where('parent_id', '=', row.id).orderBy('id').execute()) as { id: string; owner: string }[];
    for (const c of rows) {
      tombs.push({ collection: child.name, id: c.id, deleted_at: now });
      removed.push({ collection: child, id: c.id, owner: c.owner });
    }
    await db.deleteFrom(child.table).where('parent_id', '=', row.id).execute();
    await deleteAttachmentsOf(tx, child.name, rows.map((c) => c.id));
  }
  await deleteAttachmentsOf(tx, model.name, [row.id]);
  const gone = count(await db.deleteFrom(model.table).where('id', '=', row.id).where('version', '=', row.version).executeTakeFirst());
  if (gone !== 1) return null;
  for (let i = 0; i < tombs.length; i += 200) await sqlOf(tx).insertInto('tombstones').values(tombs.slice(i, i + 200)).execute();
  return removed;
}
