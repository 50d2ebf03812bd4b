import { sql, type CompiledQuery, type Kysely } from 'kysely';
import type { CollectionModel } from '../../contract/collections.js';
import { compiledOnce, count, sqlOf, statementCache, type On } from '../../platform/store/sql.js';
import type { Store } from '../../platform/store/dialect.js';
import type { WriteTx } from '../../platform/store/write-path.js';
import { deleteAttachmentsOf } from './attachments.js';
import { isSystemSortField } from '../../platform/config/record-fields.js';

// Owner of the collection tables (r_<collection>), the tombstones of deleted records and the
// idempotency keys of creates. What a record means to a caller (access, validation) is
// records.ts's business; this module only reads and writes rows.

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

const any = (on: On) => sqlOf(on) as unknown as Kysely<any>;

/** Reading one record by id is the hottest query: compiled once per table. */
export async function readRecordRow(on: On, model: CollectionModel, id: string): Promise<RecordRow | null> {
  const db = any(on);
  const query = compiledOnce(sqlOf(on), `record:${model.table}`, () => db.selectFrom(model.table).select(RECORD_COLUMNS).where('id', '=', '').compile());
  return (await db.executeQuery<RecordRow>({ ...query, parameters: [id] })).rows[0] ?? null;
}

/** When the record with this id was deleted (epoch ms), or null. */
export async function findTombstone(on: On, collection: string, id: string): Promise<number | null> {
  const tomb = await sqlOf(on).selectFrom('tombstones').select('deleted_at').where('collection', '=', collection).where('id', '=', id).executeTakeFirst();
  return tomb ? Number(tomb.deleted_at) : null;
}

/** A filter value as the columns hold it (booleans are stored as 0/1 on both engines). */
export type FilterValue = string | number | boolean;

export interface RowQuery {
  /** Only this owner's rows (access: owner collections), or every owner's. */
  owner: string | null;
  parentId: string | null;
  filters: { field: string; value: FilterValue }[];
  sortby: string;
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
}

function sameValues(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}


/** Lists are built and compiled by Kysely once per shape (collection, filter fields, sort), then reused with new values. */
type ListPlan = { page: CompiledQuery; count: CompiledQuery };
const MAX_LIST_PLANS = 500;

function listPlan(db: Kysely<any>, model: CollectionModel, q: RowQuery, values: unknown[]) {
  let base = db.selectFrom(model.table);
  if (q.owner !== null) base = base.where('owner', '=', q.owner);
  if (q.parentId !== null) base = base.where('parent_id', '=', q.parentId);
  for (const f of q.filters) base = base.where(`x_${f.field}`, '=', typeof f.value === 'boolean' ? Number(f.value) : f.value);
  const sortColumn = isSystemSortField(q.sortby) ? q.sortby : `x_${q.sortby}`;
  let listing = base.select(RECORD_COLUMNS).limit(q.limit).offset(q.offset);
  // NULLs first ascending, last descending, on both engines; the id makes paging stable. The
  // system columns are never NULL: a plain ORDER BY lets PostgreSQL walk their index (a NULLS
  // clause that differs from its default would force a sort of every matching row).
  listing = isSystemSortField(sortColumn)
    ? (sortColumn === 'id' ? listing : listing.orderBy(sortColumn, q.order)).orderBy('id', q.order)
    : listing.orderBy(sql`${sql.ref(sortColumn)} ${sql.raw(q.order === 'asc' ? 'asc nulls first' : 'desc nulls last')}`).orderBy('id', q.order);
  const plan = { page: listing.compile(), count: base.select((eb) => eb.fn.countAll().as('n')).compile() };
  // Reusable only when Kysely placed the values where listRecordRows puts them.
  const reusable = sameValues(plan.page.parameters, [...values, q.limit, q.offset]) && sameValues(plan.count.parameters, values);
  return { plan, reusable };
}

/** A page of rows and the total that match (the total of a short page is told without counting). */
export async function listRecordRows(store: Store, model: CollectionModel, q: RowQuery): Promise<{ rows: RecordRow[]; total: number }> {
  const db = any(store);
  // The values in the order the statements take them (the order of the where clauses above).
  const values: unknown[] = [];
  if (q.owner !== null) values.push(q.owner);
  if (q.parentId !== null) values.push(q.parentId);
  for (const f of q.filters) values.push(typeof f.value === 'boolean' ? Number(f.value) : f.value);

  const cache = statementCache(sqlOf(store));
  const shape = `list:${model.table}|${q.owner !== null}|${q.parentId !== null}|${q.filters.map((f) => f.field).join(',')}|${q.sortby}|${q.order}`;
  let plan = cache.get(shape) as ListPlan | undefined;
  if (!plan) {
    const built = listPlan(db, model, q, values);
    plan = built.plan;
    if (built.reusable) {
      if (cache.size >= MAX_LIST_PLANS) cache.clear();
      cache.set(shape, plan);
    }
  }
  const rows = (await db.executeQuery<RecordRow>({ ...plan.page, parameters: [...values, q.limit, q.offset] })).rows;
  if (rows.length < q.limit && (rows.length > 0 || q.offset === 0)) return { rows, total: q.offset + rows.length };
  const counted = (await db.executeQuery<{ n: number | string }>({ ...plan.count, parameters: values })).rows[0];
  return { rows, total: Number(counted?.n ?? 0) };
}

export async function insertRecordRow(tx: WriteTx, model: CollectionModel, row: RecordRow): Promise<void> {
  await any(tx).insertInto(model.table).values(row).execute();
}

/** Writes the new version of a row; false when the stored version is no longer `expectedVersion`. */
export async function updateRecordRow(tx: WriteTx, model: CollectionModel, row: RecordRow, expectedVersion: number): Promise<boolean> {
  const { id, owner: _owner, created_at: _created, ...set } = row;
  return count(await any(tx).updateTable(model.table).set(set).where('id', '=', id).where('version', '=', expectedVersion).executeTakeFirst()) === 1;
}

/**
 * Deletes a record (if still at `expectedVersion`), its children in `children` and every
 * attachment of both, leaving tombstones so their URLs answer 410. False when the version moved.
 */
export async function deleteRecordTree(tx: WriteTx, model: CollectionModel, row: RecordRow, children: CollectionModel[], now: number): Promise<boolean> {
  const db = any(tx);
  const tombs = [{ collection: model.name, id: row.id, deleted_at: now }];
  for (const child of children) {
    const ids = ((await db.selectFrom(child.table).select('id').where('parent_id', '=', row.id).execute()) as { id: string }[]).map((c) => c.id);
    for (const id of ids) tombs.push({ collection: child.name, id, deleted_at: now });
    await db.deleteFrom(child.table).where('parent_id', '=', row.id).execute();
    await deleteAttachmentsOf(tx, child.name, ids);
  }
  await deleteAttachmentsOf(tx, model.name, [row.id]);
  const gone = count(await db.deleteFrom(model.table).where('id', '=', row.id).where('version', '=', row.version).executeTakeFirst());
  if (gone !== 1) return false;
  for (let i = 0; i < tombs.length; i += 200) await sqlOf(tx).insertInto('tombstones').values(tombs.slice(i, i + 200)).execute();
  return true;
}

export interface IdempotencyKey {
  subject: string;
  key: string;
  collection: string;
  bodyHash: string;
  recordId: string;
}

export async function findIdempotencyKey(on: On, subject: string, key: string): Promise<IdempotencyKey | null> {
  const row = await sqlOf(on).selectFrom('idempotency_keys').selectAll().where('subject', '=', subject).where('key', '=', key).executeTakeFirst();
  return row ? { subject: row.subject, key: row.key, collection: row.collection, bodyHash: row.body_hash, recordId: row.record_id } : null;
}

export async function insertIdempotencyKey(tx: WriteTx, k: IdempotencyKey, now: number): Promise<void> {
  await sqlOf(tx)
    .insertInto('idempotency_keys')
    .values({ subject: k.subject, key: k.key, collection: k.collection, body_hash: k.bodyHash, record_id: k.recordId, created_at: now })
    .execute();
}

export async function purgeIdempotencyKeys(on: On, before: number): Promise<number> {
  return count(await sqlOf(on).deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst());
}

/**
 * Most parameters one statement may bind: SQLite's default SQLITE_MAX_VARIABLE_NUMBER (32766
 * since 3.32; PostgreSQL allows 65535). Multi-row inserts stay well below it.
 */
const MAX_PARAMETERS = 32_766;
/** Rows per multi-row insert at most (beyond this a larger statement saves nothing measurable). */
const MAX_ROWS_PER_INSERT = 256;

/**
 * Inserts many rows of one collection (a chunk of a bulk job): multi-row INSERT statements of
 * 2^k rows, each built and compiled by Kysely once per table and size, so a chunk of any length
 * costs at most log2(256) + ⌈n / 256⌉ statements and the statements remembered stay few.
 */
export async function insertRecordRows(tx: WriteTx, model: CollectionModel, rows: RecordRow[]): Promise<void> {
  if (rows.length === 0) return;
  const db = any(tx);
  const columns = [...RECORD_COLUMNS, ...model.columns.map((c) => c.column)];
  let most = 1;
  while (most * 2 <= MAX_ROWS_PER_INSERT && most * 2 * columns.length <= MAX_PARAMETERS) most *= 2;
  for (let start = 0; start < rows.length; ) {
    let size = most;
    while (size > rows.length - start) size /= 2;
    const query = compiledOnce(sqlOf(tx), `insert-rows:${model.table}:${size}:${columns.join(',')}`, () =>
      db
        .insertInto(model.table)
        .values(Array.from({ length: size }, () => Object.fromEntries(columns.map((c) => [c, null]))))
        .compile(),
    );
    const parameters: unknown[] = new Array(size * columns.length);
    let p = 0;
    for (let r = start; r < start + size; r++) {
      const row = rows[r];
      for (const c of columns) parameters[p++] = row[c] ?? null;
    }
    await db.executeQuery({ ...query, parameters });
    start += size;
  }
}
