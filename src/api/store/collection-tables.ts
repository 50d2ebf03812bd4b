import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Store } from '../../platform/store/store.js';
import { sqlOf } from '../../platform/store/sql.js';
import type { CollectionModel, CollectionRegistry } from '../../contract/collections.js';
import { SYSTEM_SORT_FIELDS } from '../../platform/config/record-fields.js';
import { readSetting, writeSetting } from '../../platform/store/settings.js';
import { columnOfField } from './records.js';
import { syncSearch } from './search-index.js';

// Each collection has its own table r_<name>; this brings the tables in line with the config:
// creates what is missing, adds and backfills columns for new filter/sort fields, adds indexes.
// It never drops anything: removing a collection from the config leaves its data in place.

export interface SyncReport {
  created: string[];
  columnsAdded: string[];
  indexesCreated: number;
  /** Collections whose search index was built now (new or changed `search` fields). */
  searchIndexed: string[];
  /** Mirror columns made again for their field's new type. */
  columnsRebuilt: string[];
}

/** The setting that keeps the type each mirror column was made for. */
const COLUMN_KINDS = 'collection.columns.';

/** The table's columns and their data types as the database names them, or null when there is no table. */
async function existingColumns(store: Store, table: string): Promise<Map<string, string> | null> {
  const tables = await sqlOf(store).introspection.getTables();
  const found = tables.find((t) => t.name === table);
  return found ? new Map(found.columns.map((c) => [c.name, c.dataType.toLowerCase()])) : null;
}

/** The kind each mirror column of the collection was made for, as recorded (and the setting's text). */
async function recordedKinds(store: Store, model: CollectionModel): Promise<{ text: string | null; kinds: Record<string, string> }> {
  const text = await readSetting(store, COLUMN_KINDS + model.name);
  return { text, kinds: text ? (JSON.parse(text) as Record<string, string>) : {} };
}

/** The data types (SQLite's declared type, PostgreSQL's type name) a mirror column of each kind has. */
const DATA_TYPES: Record<string, readonly string[]> = {
  text: ['text'],
  integer: ['integer', 'int8', 'bigint'],
  real: ['real', 'float8', 'double precision'],
  boolean: ['integer', 'int4'],
};

/**
 * The kind a mirror column was made for: as recorded, or, for a column made before kinds were
 * recorded, what its data type says (a type that fits no kind counts as another kind).
 */
function kindOf(column: string, kinds: Record<string, string>, dataType: string | undefined, want: string): string | undefined {
  if (kinds[column] !== undefined) return kinds[column];
  if (dataType === undefined) return undefined;
  return DATA_TYPES[want]?.includes(dataType) ? want : dataType;
}

/**
 * The mirror columns that exist with the type their field has now: the ones a migration may write
 * (the others are added or made again by the next sync, filled from the migrated documents).
 */
export async function mirrorColumnsInPlace(store: Store, model: CollectionModel): Promise<string[]> {
  const columns = await existingColumns(store, model.table);
  if (!columns) return [];
  const { kinds } = await recordedKinds(store, model);
  return model.columns.filter((c) => columns.has(c.column) && kindOf(c.column, kinds, columns.get(c.column), c.kind) === c.kind).map((c) => c.column);
}

/** Whether the collection's table exists yet (a dry run looks before anything is created). */
export async function collectionTableExists(store: Store, model: CollectionModel): Promise<boolean> {
  return (await existingColumns(store, model.table)) !== null;
}

/** Indexes that keep filtered and sorted lists off full scans; owner collections lead with owner. */
export function indexesOf(model: CollectionModel): { name: string; columns: string[] }[] {
  const lead = model.access === 'owner' ? ['owner'] : [];
  const out: { name: string; columns: string[] }[] = [];
  const add = (suffix: string, columns: string[]) => out.push({ name: `${model.table}_${suffix}`, columns });
  if (lead.length) add('owner', [...lead, 'id']);
  if (model.parent) add('parent', ['parent_id', 'id']);
  for (const c of model.columns) add(c.column, [...lead, c.column, 'id']);
  for (const s of SYSTEM_SORT_FIELDS) if (s !== 'id' && model.sort.includes(s)) add(s, [...lead, s, 'id']);
  for (const fields of model.indexes) {
    const columns = fields.map((f) => columnOfField(model, f));
    // PostgreSQL cuts names at 63 bytes: a long compound name is shortened to a digest of it.
    const suffix = columns.join('_');
    add(model.table.length + 1 + suffix.length <= 63 ? suffix : `ix_${createHash('sha256').update(suffix).digest('hex').slice(0, 16)}`, [...lead, ...columns, 'id']);
  }
  return out;
}

export async function syncCollectionTables(store: Store, collections: CollectionRegistry): Promise<SyncReport> {
  const report: SyncReport = { created: [], columnsAdded: [], indexesCreated: 0, searchIndexed: [], columnsRebuilt: [] };
  const db = sqlOf(store) as unknown as Kysely<any>;
  // Checks the search index layouts make once per sync (search-index.ts).
  const checks = new Map<string, Promise<boolean>>();
  const once = (key: string, check: () => Promise<boolean>) => checks.get(key) ?? (checks.set(key, check()), checks.get(key)!);
  for (const model of collections.values()) {
    const columns = await existingColumns(store, model.table);
    const recorded = await recordedKinds(store, model);
    if (!columns) {
      let create = db.schema
        .createTable(model.table)
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('parent_id', 'text')
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('doc', 'text', (c) => c.notNull());
      for (const c of model.columns) create = create.addColumn(c.column, sql.raw(store.columnType(c.kind)));
      await create.execute();
      report.created.push(model.name);
    } else {
      // A mirror column made for another type of its field (the field was converted) is made again.
      for (const c of model.columns) {
        if (!columns.has(c.column) || kindOf(c.column, recorded.kinds, columns.get(c.column), c.kind) === c.kind) continue;
        await store.dropColumn(model.table, c.column);
        columns.delete(c.column);
        report.columnsRebuilt.push(`${model.name}.${c.field}`);
      }
      for (const c of model.columns) {
        if (columns.has(c.column)) continue;
        await db.schema.alterTable(model.table).addColumn(c.column, sql.raw(store.columnType(c.kind))).execute();
        await db
          .updateTable(model.table)
          .set({ [c.column]: store.jsonField('doc', c.field, c.kind) })
          .execute();
        report.columnsAdded.push(`${model.name}.${c.field}`);
      }
    }
    const kinds = JSON.stringify({ ...recorded.kinds, ...Object.fromEntries(model.columns.map((c) => [c.column, c.kind])) });
    if (kinds !== recorded.text) await writeSetting(store, COLUMN_KINDS + model.name, kinds);
    await store.keepTextInBinaryOrder(model.table, model.columns.filter((c) => c.kind === 'text').map((c) => c.column));
    await normalizeDateTimes(store, model);
    const nullable = model.columns.map((c) => c.column);
    for (const index of indexesOf(model)) {
      await store.createIndex(model.table, index.name, index.columns, nullable);
      report.indexesCreated++;
    }
    if (await syncSearch(store, model, once)) report.searchIndexed.push(model.name);
  }
  return report;
}

/** `format: date-time` mirrors hold UTC instants; rows written before that rule are rewritten once. */
async function normalizeDateTimes(store: Store, model: CollectionModel): Promise<void> {
  const db = sqlOf(store) as unknown as Kysely<any>;
  for (const c of model.columns.filter((col) => col.format === 'date-time')) {
    const marker = `normalized:${model.table}.${c.column}`;
    if ((await readSetting(store, marker)) === 'utc-v1') continue;
    let last = '';
    for (;;) {
      const rows = (await db.selectFrom(model.table).select(['id', c.column]).where('id', '>', last).orderBy('id').limit(1000).execute()) as Record<string, unknown>[];
      if (rows.length === 0) break;
      for (const r of rows) {
        const value = r[c.column];
        const utc = typeof value === 'string' ? utcInstant(value) : null;
        if (utc !== null && utc !== value) await db.updateTable(model.table).set({ [c.column]: utc }).where('id', '=', r.id).execute();
      }
      last = String(rows[rows.length - 1].id);
    }
    await writeSetting(store, marker, 'utc-v1');
  }
}

function utcInstant(value: string): string | null {
  const time = Date.parse(value);
  return Number.isFinite(time) ? new Date(time).toISOString() : null;
}
