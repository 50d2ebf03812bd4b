import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Store } from '../../platform/store/dialect.js';
import { sqlOf } from '../../platform/store/sql.js';
import type { CollectionModel, CollectionRegistry } from '../../contract/collections.js';
import { SYSTEM_SORT_FIELDS } from '../../platform/config/record-fields.js';
import { readSetting, writeSetting } from '../../platform/store/settings.js';
import { columnOfField, ownerRangeStart, searchInOwnerRanges, SEARCH_LAYOUT_OWNER_RANGES, SEARCH_MAX_OWNERS, SEARCH_OWNER_SHIFT, SEARCH_ROWID_MASK } from './records.js';

// Each collection has its own table r_<name>; this brings the tables in line with the config:
// creates what is missing, adds and backfills columns for new filter/sort fields, adds indexes.
// It never drops anything: removing a collection from the config leaves its data in place.

export interface SyncReport {
  created: string[];
  columnsAdded: string[];
  indexesCreated: number;
  /** Collections whose search index was built now (new or changed `search` fields). */
  searchIndexed: string[];
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
  for (const fields of model.indexes) {
    const columns = fields.map((f) => columnOfField(model, f));
    // PostgreSQL cuts names at 63 bytes: a long compound name is shortened to a digest of it.
    const suffix = columns.join('_');
    add(model.table.length + 1 + suffix.length <= 63 ? suffix : `ix_${createHash('sha256').update(suffix).digest('hex').slice(0, 16)}`, [...lead, ...columns, 'id']);
  }
  return out;
}

export async function syncCollectionTables(store: Store, collections: CollectionRegistry): Promise<SyncReport> {
  const report: SyncReport = { created: [], columnsAdded: [], indexesCreated: 0, searchIndexed: [] };
  const db = sqlOf(store) as unknown as Kysely<any>;
  let ownerGin: Promise<boolean> | null = null;
  const canIndexOwnerInGin = () => (ownerGin ??= btreeGin(store));
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
    if (store.engine === 'postgres') await binaryCollation(store, model);
    await normalizeDateTimes(store, model);
    const nullable = model.columns.map((c) => c.column);
    for (const index of indexesOf(model)) {
      await store.createIndex(model.table, index.name, index.columns, nullable);
      report.indexesCreated++;
    }
    if (await syncSearch(store, model, canIndexOwnerInGin)) report.searchIndexed.push(model.name);
  }
  return report;
}

/** PostgreSQL: the search index of an owner collection leads with the owner (btree_gin). */
const SEARCH_LAYOUT_OWNER_GIN = 'owner-gin';

/**
 * Whether PostgreSQL's btree_gin extension is there or could be created now (it lets a GIN index
 * hold the owner beside the search vector). Not an error when it cannot: the search index is then
 * the vector alone. Asked once per sync, by the first owner collection with search fields.
 * Creating it is tried only where the server ships it and the role may create it (a trusted
 * extension needs CREATE on the database, any other a superuser), so that a role without that
 * right does not leave a "permission denied" error in the server's log at every start.
 */
async function btreeGin(store: Store): Promise<boolean> {
  const db = sqlOf(store);
  const installed = async () => (await sql<{ n: number }>`select count(*)::int as n from pg_extension where extname = 'btree_gin'`.execute(db)).rows[0].n > 0;
  if (await installed()) return true;
  if (!(await mayCreateExtension(store, 'btree_gin'))) return false;
  try {
    await sql`create extension if not exists btree_gin`.execute(db);
  } catch {
    // Another process created it meanwhile, or a rule the check above does not know.
  }
  return installed();
}

/** Whether this role may create the extension `name` here (exported for its test). */
export async function mayCreateExtension(store: Store, name: string): Promise<boolean> {
  try {
    const { rows } = await sql<{ may: boolean }>`select has_database_privilege(current_database(), 'CREATE') and exists (
        select 1 from pg_available_extensions a join pg_available_extension_versions v on v.name = a.name and v.version = a.default_version
        where a.name = ${name} and (v.trusted or not v.superuser or (select rolsuper from pg_roles where rolname = current_user))) as may`.execute(sqlOf(store));
    return rows[0].may;
  } catch {
    return true; // a server before PostgreSQL 13 has no `trusted` column: let creating it tell
  }
}

/** Text mirror columns made before binary collation was the rule get it (PostgreSQL rebuilds their indexes). */
async function binaryCollation(store: Store, model: CollectionModel): Promise<void> {
  const db = sqlOf(store);
  for (const c of model.columns.filter((col) => col.kind === 'text')) {
    const { rows } = await sql<{ collation_name: string | null }>`select collation_name from information_schema.columns
      where table_schema = current_schema() and table_name = ${model.table} and column_name = ${c.column}`.execute(db);
    if (rows[0] && rows[0].collation_name !== 'C')
      await sql`alter table ${sql.table(model.table)} alter column ${sql.ref(c.column)} type text collate "C"`.execute(db);
  }
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

/**
 * Full-text search over a collection's `search` fields, kept in step with the records in the same
 * transaction: SQLite, an FTS5 table fed by triggers on the record table; PostgreSQL, a generated
 * tsvector column with a GIN index. Built (and backfilled) when the search fields, or the layout
 * below, change. True when it was (re)built now.
 *
 * `access: owner`: the search index is composite with the owner, as the other indexes of such a
 * collection lead with it. PostgreSQL: a GIN index on (owner, search_vector), which needs the
 * btree_gin extension (in PostgreSQL's contrib, trusted since 13: a role that may create in the
 * database may create it); where it cannot be created, the GIN index on search_vector alone, as
 * before, and the owner is checked on each match's row. SQLite: a record's FTS rowid is its
 * owner's number (`search_owners`) times 2^36 plus the record's rowid (which gatehouse never
 * renumbers: no VACUUM), so one owner's records are one rowid range: a search reads and ranks the
 * caller's matches only, and counts them without reading a record (buildList in records.ts).
 * Other collections: the record's rowid.
 */
async function syncSearch(store: Store, model: CollectionModel, canIndexOwnerInGin: () => Promise<boolean>): Promise<boolean> {
  const marker = `search:${model.table}`;
  const ranges = searchInOwnerRanges(store, model) && model.search.length > 0;
  const ownerGin = store.engine === 'postgres' && model.access === 'owner' && model.search.length > 0 && (await canIndexOwnerInGin());
  // The marker: `<layout>:<fields>`, or the fields alone for the plain layout.
  const layout = ranges ? `${SEARCH_LAYOUT_OWNER_RANGES}:` : ownerGin ? `${SEARCH_LAYOUT_OWNER_GIN}:` : '';
  const fields = model.search.join(',');
  const want = layout + fields;
  const have = (await readSetting(store, marker)) ?? '';
  if (want === have) return false;
  const db = sqlOf(store);
  const fts = `${model.table}_fts`;
  if (store.engine === 'sqlite') {
    if (ranges) {
      // The backfill below must not place a record in another owner's range either: what the
      // trigger refuses one record at a time (RAISE exists only in triggers) is refused here
      // before anything changes. Owners are counted as if each one still needed a new number.
      await sql`create table if not exists search_owners (num integer primary key, subject text not null unique)`.execute(db);
      const { rows } = await sql<{ full: number }>`select coalesce((select max(rowid) from ${sql.table(model.table)}), 0) > ${sql.lit(SEARCH_ROWID_MASK)}
        or coalesce((select max(num) from search_owners), 0) + (select count(distinct owner) from ${sql.table(model.table)}) >= ${sql.lit(SEARCH_MAX_OWNERS)} as full`.execute(db);
      if (rows[0]?.full) throw new Error(`the search index of ${model.name} has no room for its records (a record beyond the 2^36th row, or more than 2^27 owners)`);
    }
    for (const t of ['ai', 'ad', 'au']) await sql`drop trigger if exists ${sql.id(`${fts}_${t}`)}`.execute(db);
    await sql`drop table if exists ${sql.table(fts)}`.execute(db);
    if (model.search.length) {
      const text = (row: 'new' | 'r') =>
        sql.join(
          model.search.map((f) => sql`coalesce(json_extract(${sql.raw(row)}.doc, ${sql.lit('$.' + f)}), '')`),
          sql` || ' ' || `,
        );
      // The FTS rowid of a record (`row`: old or the backfill's r).
      const key = (row: 'old' | 'r') => (ranges ? sql`${ownerRangeStart(sql.raw(`${row}.owner`))} + ${sql.raw(row)}.rowid` : sql`${sql.raw(row)}.rowid`);
      // Indexes the new row. A record beyond its owner's range (2^36 rows) or an owner beyond 2^27
      // would land in another owner's range: refused, never indexed there.
      const index = ranges
        ? sql`insert or ignore into search_owners (subject) values (new.owner);
          insert into ${sql.table(fts)} (rowid, body)
            select case when new.rowid <= ${sql.lit(SEARCH_ROWID_MASK)} and o.num < ${sql.lit(SEARCH_MAX_OWNERS)}
                        then (o.num << ${sql.lit(SEARCH_OWNER_SHIFT)}) + new.rowid
                        else raise(abort, 'the search index has no room for this record') end,
              ${text('new')}
            from search_owners as o where o.subject = new.owner;`
        : sql`insert into ${sql.table(fts)} (rowid, body) values (new.rowid, ${text('new')});`;
      await sql`create virtual table ${sql.table(fts)} using fts5(body, tokenize = 'unicode61 remove_diacritics 2')`.execute(db);
      await sql`create trigger ${sql.id(`${fts}_ai`)} after insert on ${sql.table(model.table)} begin ${index} end`.execute(db);
      await sql`create trigger ${sql.id(`${fts}_ad`)} after delete on ${sql.table(model.table)} begin
        delete from ${sql.table(fts)} where rowid = ${key('old')}; end`.execute(db);
      await sql`create trigger ${sql.id(`${fts}_au`)} after update of doc, owner on ${sql.table(model.table)} begin
        delete from ${sql.table(fts)} where rowid = ${key('old')};
        ${index} end`.execute(db);
      if (ranges) await sql`insert or ignore into search_owners (subject) select distinct owner from ${sql.table(model.table)}`.execute(db);
      await sql`insert into ${sql.table(fts)} (rowid, body) select ${key('r')}, ${text('r')} from ${sql.table(model.table)} as r`.execute(db);
    }
  } else {
    // Only the index changes when only the layout did (the owner joined it): re-adding the
    // generated column would rewrite every row of the table.
    const sameFields = have !== '' && have.slice(have.indexOf(':') + 1) === fields;
    await sql`drop index if exists ${sql.id(`${model.table}_search`)}`.execute(db);
    if (!sameFields) await sql`alter table ${sql.table(model.table)} drop column if exists search_vector`.execute(db);
    if (model.search.length) {
      const text = sql.join(
        model.search.map((f) => sql`coalesce(doc::jsonb ->> ${sql.lit(f)}, '')`),
        sql` || ' ' || `,
      );
      if (!sameFields)
        await sql`alter table ${sql.table(model.table)} add column search_vector tsvector
          generated always as (to_tsvector('simple'::regconfig, ${text})) stored`.execute(db);
      await sql`create index ${sql.id(`${model.table}_search`)} on ${sql.table(model.table)}
        using gin (${sql.raw(ownerGin ? 'owner, ' : '')}search_vector)`.execute(db);
    }
  }
  await writeSetting(store, marker, want);
  return true;
}
