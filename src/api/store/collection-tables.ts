import { sql, type Kysely } from 'kysely';
import type { Store } from '../../platform/store/dialect.js';
import { sqlOf } from '../../platform/store/sql.js';
import type { CollectionModel, CollectionRegistry } from '../../contract/collections.js';
import { SYSTEM_SORT_FIELDS } from '../../platform/config/record-fields.js';

// Each collection has its own table r_<name>; this brings the tables in line with the config:
// creates what is missing, adds and backfills columns for new filter/sort fields, adds indexes.
// It never drops anything: removing a collection from the config leaves its data in place.

export interface SyncReport {
  created: string[];
  columnsAdded: string[];
  indexesCreated: number;
}

async function existingColumns(store: Store, table: string): Promise<Set<string> | null> {
  const tables = await sqlOf(store).introspection.getTables();
  const found = tables.find((t) => t.name === table);
  return found ? new Set(found.columns.map((c) => c.name)) : null;
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
  return out;
}

export async function syncCollectionTables(store: Store, collections: CollectionRegistry): Promise<SyncReport> {
  const report: SyncReport = { created: [], columnsAdded: [], indexesCreated: 0 };
  const db = sqlOf(store) as unknown as Kysely<any>;
  for (const model of collections.values()) {
    const columns = await existingColumns(store, model.table);
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
    const nullable = model.columns.map((c) => c.column);
    for (const index of indexesOf(model)) {
      await store.createIndex(model.table, index.name, index.columns, nullable);
      report.indexesCreated++;
    }
  }
  return report;
}
