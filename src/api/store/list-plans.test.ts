// A filtered, limited list over 1,000,000 records must not scan them all (docs/api.md#indexes). The
// queries checked are the ones Records.list really runs: they are captured from a Kysely
// instance with a query log that stands in for the store's own, then EXPLAINed by the store.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect, sql, type CompiledQuery } from 'kysely';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { loadConfig, DEMO_CONFIG } from '../../platform/config/load.js';
import { forgetStatistics } from '../../platform/store/sqlite-statistics.js';
import { openStore } from '../../platform/store/open-store.js';
import type { Store } from '../../platform/store/store.js';
import { migrateCore } from '../../platform/store/migrations.js';
import { sqlOf } from '../../platform/store/sql.js';
import { KeyRing } from '../../platform/crypto/keys.js';
import { syncCollectionTables } from './collection-tables.js';
import { mayCreateExtension } from './search-index/postgres.js';
import type { AppContext } from '../../contract/context.js';
import type { Caller } from '../../contract/caller.js';
import { buildCollections, type CollectionRegistry } from '../../contract/collections.js';
import { Links } from '../links.js';
import { Records } from '../records.js';
import { parseListQuery } from '../query.js';
import { createPgDatabase, pgAvailable, TEST_DATABASE_URL } from '../../../test/helpers/server.js';

// 1,000,000 rows take a minute to load on a small machine; the plans (chosen from ANALYZE
// statistics) are the same from a few hundred thousand rows on. GATEHOUSE_PLAN_ROWS=1000000 checks
// the figure exactly.
const ROWS = Number(process.env.GATEHOUSE_PLAN_ROWS ?? 200_000);
const OWNERS = 100;
const CITIES = 1000;
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const caller = (subject: string): Caller => ({
  subject,
  clientId: 'plan',
  scopes: new Set(),
  tokenHash: '',
  grantId: '',
  tokenType: 'bearer',
  origins: [],
  expiresAt: Number.MAX_SAFE_INTEGER,
});

/** Records over a Kysely that logs every query it runs; returns the captured queries of one call. */
function recordingRecords(store: Store, collections: CollectionRegistry, logged: Kysely<any>, captured: CompiledQuery[]) {
  void captured;
  const config = loadConfig({ file: DEMO_CONFIG, dataDir: tmpdir(), env: {} });
  // Every statement through the logging Kysely (not SQLite's direct read, which runs the same SQL).
  const ctx = { config, store: { ...store, db: logged, readNow: undefined }, redis: null, collections, keys: new KeyRing(store) } as unknown as AppContext;
  return new Records(ctx, new Links(() => 'https://127.0.0.1:8443', 1, collections));
}

interface Case {
  name: string;
  collection: string;
  query: Record<string, string>;
  /** The index must also deliver the order: no sort step over every matching row. */
  ordered?: boolean;
  /**
   * PostgreSQL may seek a compound index on the filter and sort its matches (it estimates a
   * handful of rows per owner and city): a sort bounded by the matches, not by the table.
   */
  maySortMatches?: boolean;
  /** The count must be served by this index alone (a compound index of the config's `indexes`). */
  countIndex?: RegExp;
  /** Every statement's plan must match this. */
  plan?: RegExp;
}

const CASES: Case[] = [
  { name: 'zoos filtered on city (owner collection), default sort, limited', collection: 'zoos', query: { city: 'City7', limit: '20' }, ordered: true, maySortMatches: true },
  {
    name: 'zoos filtered on city and a founded range: the page seeks city, the count reads the compound index only',
    collection: 'zoos',
    query: { city: 'City7', 'founded[lt]': '1900', limit: '20' },
    // PostgreSQL may seek the compound index and sort its matches (bounded by them, not the table).
    countIndex: /COVERING INDEX r_zoos_x_city_x_founded|Index Only Scan using r_zoos_x_city_x_founded/,
  },
  { name: 'zoos filtered on city and sorted by name', collection: 'zoos', query: { city: 'City7', sortby: 'name', limit: '5' } },
  { name: 'zoos filtered on founded (integer), second page', collection: 'zoos', query: { founded: '1907', limit: '10', offset: '10' } },
  { name: 'zoos, no filter, sorted by created_at descending', collection: 'zoos', query: { sortby: 'created_at', order: 'desc', limit: '20' }, ordered: true },
  { name: 'zoos, no filter, sorted by updated_at', collection: 'zoos', query: { sortby: 'updated_at', limit: '20' }, ordered: true },
];

/** PostgreSQL: a search of an owner collection seeks the owner and the word in one GIN index (btree_gin). */
const PG_SEARCH: Case[] = [
  {
    name: 'zoos searched for a word (q=), ranked: owner and word from one index',
    collection: 'zoos',
    query: { q: 'City7', limit: '20' },
    plan: /Bitmap Index Scan on r_zoos_search\b[^\n]*\n\s*Index Cond: \(\(owner = [^\n]*\) AND \(search_vector @@ /,
  },
];

/** A sort on a declared (nullable) field with no filter: only an index in the same NULLS order avoids a sort. */
const FIELD_SORT: Case[] = [
  { name: 'zoos sorted by name, no filter', collection: 'zoos', query: { sortby: 'name', limit: '20' }, ordered: true },
  { name: 'zoos sorted by founded descending, no filter', collection: 'zoos', query: { sortby: 'founded', order: 'desc', limit: '20' }, ordered: true },
];

async function checkPlans(
  store: Store,
  logged: Kysely<any>,
  captured: CompiledQuery[],
  planOk: (line: string) => boolean,
  fullScan: RegExp,
  sortStep: RegExp,
  report: (message: string) => void,
  cases: Case[] = CASES,
  engine: 'sqlite' | 'postgres' = 'sqlite',
) {
  const collections = buildCollections(loadConfig({ file: DEMO_CONFIG, dataDir: tmpdir(), env: {} }).collections);
  const records = recordingRecords(store, collections, logged, captured);
  for (const c of cases) {
    const model = collections.get(c.collection)!;
    captured.length = 0;
    const started = Date.now();
    const { rows, total } = await records.list({ model, parentId: null }, caller('client:owner7'), parseListQuery(model, c.query, { defaultLimit: 20, maxLimit: 100 }));
    const elapsed = Date.now() - started;
    assert.ok(rows.length > 0 && rows.length <= 20, `${c.name}: ${rows.length} rows`);
    assert.ok(rows.every((r) => r.owner === 'client:owner7'));
    assert.ok(total > 0);
    const selects = captured.filter((q) => /^select/i.test(q.sql) && q.sql.includes(model.table));
    assert.equal(selects.length, 2, `${c.name}: the page and the count (${captured.map((q) => q.sql).join(' | ')})`);
    for (const q of selects) {
      const plan = await store.explain(q);
      const text = plan.join('\n');
      report(`${c.name}\n  ${q.sql}\n  ${plan.join('\n  ')}`);
      assert.doesNotMatch(text, fullScan, `${c.name}: full scan in\n${q.sql}\n${text}`);
      assert.ok(plan.some(planOk), `${c.name}: no index use in\n${q.sql}\n${text}`);
      const bounded = engine === 'postgres' && c.maySortMatches && /Index Cond: .*x_city/.test(text);
      if (c.ordered && !bounded && /order by/i.test(q.sql)) assert.doesNotMatch(text, sortStep, `${c.name}: sorts every matching row in\n${q.sql}\n${text}`);
      if (c.plan) assert.match(text, c.plan, `${c.name}: unexpected plan for\n${q.sql}\n${text}`);
      if (c.countIndex && /count\(\*\)/i.test(q.sql)) assert.match(text, c.countIndex, `${c.name}: the count reads more than the compound index in\n${q.sql}\n${text}`);
    }
    // Generous bound: a full scan of 1,000,000 rows with a sort takes far longer than this.
    assert.ok(elapsed < 2000, `${c.name} took ${elapsed} ms`);
  }
}

test(`SQLite: filtered, limited lists over ${ROWS.toLocaleString('en')} zoos search an index, never scan the table`, async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-plan-'));
  dirs.push(dir);
  const file = path.join(dir, 'plan.db');
  const store = await openStore(`sqlite:${file}`);
  const raw = new BetterSqlite3(file);
  try {
    const collections = buildCollections(loadConfig({ file: DEMO_CONFIG, dataDir: dir, env: {} }).collections);
    await migrateCore(store);
    await syncCollectionTables(store, collections);
    raw.pragma('journal_mode = WAL');
    raw.exec(`
      WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS - 1})
      INSERT INTO r_zoos (id, owner, parent_id, version, created_at, updated_at, doc, x_name, x_city, x_founded)
      SELECT printf('%012d', i), 'client:owner' || (i % ${OWNERS}), NULL, 1,
             strftime('%Y-%m-%dT%H:%M:%fZ', 1600000000 + i, 'unixepoch'), strftime('%Y-%m-%dT%H:%M:%fZ', 1600000000 + i, 'unixepoch'),
             json_object('name', 'Zoo ' || i, 'city', 'City' || (i % ${CITIES}), 'founded', 1800 + (i % 200)),
             'Zoo ' || i, 'City' || (i % ${CITIES}), 1800 + (i % 200)
      FROM n;
      ANALYZE;`);
    // What the server keeps of those statistics (it drops the value samples after every ANALYZE),
    // reloaded by the store's own connection: the plans checked are the ones the server runs.
    forgetStatistics(raw);
    await sql`analyze sqlite_schema`.execute(sqlOf(store));
    assert.equal((raw.prepare('select count(*) as n from sqlite_stat4').get() as { n: number }).n, 0);
    assert.equal((raw.prepare('select count(*) as n from r_zoos').get() as { n: number }).n, ROWS);
    const captured: CompiledQuery[] = [];
    const logged = new Kysely<any>({
      dialect: new SqliteDialect({ database: raw }),
      log: (event) => void captured.push(event.query),
    });
    await checkPlans(store, logged, captured, (line) => /^SEARCH r_zoos USING (COVERING )?INDEX r_zoos_/.test(line), /\bSCAN r_zoos\b/, /USE TEMP B-TREE FOR ORDER BY/, (m) => t.diagnostic(m));
    await t.test('a sort on a declared field walks its index', async (st) => {
      await checkPlans(store, logged, captured, (line) => /^SEARCH r_zoos USING (COVERING )?INDEX r_zoos_/.test(line), /\bSCAN r_zoos\b/, /USE TEMP B-TREE FOR ORDER BY/, (m) => st.diagnostic(m), FIELD_SORT);
    });
    await logged.destroy();
  } finally {
    if (raw.open) raw.close();
    await store.close();
  }
});

test('PostgreSQL: the same lists use an index, never a sequential scan', async (t) => {
  if (!pgAvailable) {
    t.skip('PostgreSQL is not reachable (TEST_DATABASE_URL)');
    return;
  }
  const database = await createPgDatabase();
  const store = await openStore(database.url);
  const pool = new pg.Pool({ connectionString: database.url, max: 2 });
  try {
    const collections = buildCollections(loadConfig({ file: DEMO_CONFIG, dataDir: tmpdir(), env: {} }).collections);
    await migrateCore(store);
    await syncCollectionTables(store, collections);
    await sql`
      insert into r_zoos (id, owner, parent_id, version, created_at, updated_at, doc, x_name, x_city, x_founded)
      select lpad(i::text, 12, '0'), 'client:owner' || (i % ${sql.raw(String(OWNERS))}), null, 1,
             to_char(to_timestamp(1600000000 + i) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             to_char(to_timestamp(1600000000 + i) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             json_build_object('name', 'Zoo ' || i, 'city', 'City' || (i % ${sql.raw(String(CITIES))}), 'founded', 1800 + (i % 200))::text,
             'Zoo ' || i, 'City' || (i % ${sql.raw(String(CITIES))}), 1800 + (i % 200)
      from generate_series(0, ${sql.raw(String(ROWS - 1))}) as i`.execute(sqlOf(store));
    await sql`vacuum analyze r_zoos`.execute(sqlOf(store));
    const captured: CompiledQuery[] = [];
    const logged = new Kysely<any>({ dialect: new PostgresDialect({ pool }), log: (event) => void captured.push(event.query) });
    // btree_gin ships with PostgreSQL's contrib; a server built without it gets the vector-only
    // index (the last test of this file checks that layout).
    const btreeGin = (await sql<{ n: number }>`select count(*)::int as n from pg_available_extensions where name = 'btree_gin'`.execute(sqlOf(store))).rows[0].n > 0;
    if (!btreeGin) t.diagnostic('btree_gin is not available on this PostgreSQL: the owner-composite search index is not checked');
    await checkPlans(store, logged, captured, (line) => /Index (Only )?Scan .*on r_zoos|Bitmap Index Scan on r_zoos_/.test(line), /Seq Scan on r_zoos/, /\bSort\b/, (m) => t.diagnostic(m), btreeGin ? [...CASES, ...PG_SEARCH] : CASES, 'postgres');
    await t.test(
      'a sort on a declared field walks its index',
      async (st) => {
        await checkPlans(store, logged, captured, (line) => /Index (Only )?Scan .*on r_zoos|Bitmap Index Scan on r_zoos_/.test(line), /Seq Scan on r_zoos/, /\bSort\b/, (m) => st.diagnostic(m), FIELD_SORT);
      },
    );
    await t.test('a search index built without the owner gets it at the next start, without rewriting the table', { skip: !btreeGin && 'btree_gin is not available' }, async () => {
      const db = sqlOf(store);
      const indexDef = async () => (await sql<{ indexdef: string }>`select indexdef from pg_indexes where indexname = 'r_zoos_search'`.execute(db)).rows[0].indexdef;
      const vectorColumn = async () => (await sql<{ attnum: number }>`select attnum from pg_attribute where attrelid = 'r_zoos'::regclass and attname = 'search_vector'`.execute(db)).rows[0].attnum;
      assert.match(await indexDef(), /USING gin \(owner, search_vector\)/);
      // The layout of the previous version: the vector alone, and its marker.
      await sql`drop index r_zoos_search`.execute(db);
      await sql`create index r_zoos_search on r_zoos using gin (search_vector)`.execute(db);
      await sql`update settings set value = 'name,city' where key = 'search:r_zoos'`.execute(db);
      const column = await vectorColumn();
      const collections = buildCollections(loadConfig({ file: DEMO_CONFIG, dataDir: tmpdir(), env: {} }).collections);
      const report = await syncCollectionTables(store, collections);
      assert.deepEqual(report.searchIndexed, ['zoos']);
      assert.match(await indexDef(), /USING gin \(owner, search_vector\)/);
      assert.equal(await vectorColumn(), column, 'the generated column is the same one (not dropped and added again)');
      assert.deepEqual((await syncCollectionTables(store, collections)).searchIndexed, [], 'nothing to do at the start after');
    });
    await logged.destroy();
  } finally {
    await store.close();
    await pool.end().catch(() => undefined);
    await database.drop();
  }
});

test('PostgreSQL: where btree_gin cannot be created, the search index is the vector alone and searches still answer', async (t) => {
  if (!pgAvailable) {
    t.skip('PostgreSQL is not reachable (TEST_DATABASE_URL)');
    return;
  }
  const database = await createPgDatabase();
  // A role that may create tables in the schema but not extensions in the database.
  const role = `gatehouse_plain_${process.pid}_${Date.now().toString(36)}`;
  const asAdmin = async (url: string, statement: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await asAdmin(database.url, `create role ${role} login`);
  await asAdmin(database.url, `grant create, usage on schema public to ${role}`);
  const url = new URL(database.url);
  url.username = role;
  const store = await openStore(url.toString());
  try {
    const collections = buildCollections(loadConfig({ file: DEMO_CONFIG, dataDir: tmpdir(), env: {} }).collections);
    await migrateCore(store);
    await syncCollectionTables(store, collections);
    const db = sqlOf(store);
    assert.equal((await sql<{ n: number }>`select count(*)::int as n from pg_extension where extname = 'btree_gin'`.execute(db)).rows[0].n, 0);
    const { rows } = await sql<{ indexdef: string }>`select indexdef from pg_indexes where indexname = 'r_zoos_search'`.execute(db);
    assert.match(rows[0].indexdef, /USING gin \(search_vector\)/);
    await sql`insert into r_zoos (id, owner, parent_id, version, created_at, updated_at, doc)
      values ('z1', 'client:one', null, 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '{"name":"Lion Park","city":"Lyon"}'),
             ('z2', 'client:two', null, 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '{"name":"Lion Lodge","city":"Lyon"}')`.execute(db);
    const model = collections.get('zoos')!;
    const records = new Records({ config: loadConfig({ file: DEMO_CONFIG, dataDir: tmpdir(), env: {} }), store, redis: null, collections, keys: new KeyRing(store) } as unknown as AppContext, new Links(() => 'https://127.0.0.1:8443', 1, collections));
    const { rows: found, total } = await records.list({ model, parentId: null }, caller('client:one'), parseListQuery(model, { q: 'lion' }, { defaultLimit: 20, maxLimit: 100 }));
    assert.deepEqual(found.map((r) => r.id), ['z1']);
    assert.equal(total, 1);
    assert.deepEqual((await syncCollectionTables(store, collections)).searchIndexed, [], 'nothing rebuilt at the next start');
    // Creating it was not even tried (no "permission denied" in the server's log at each start):
    // the role may not; with CREATE on the database it may (btree_gin is a trusted extension).
    assert.equal(await mayCreateExtension(store, 'btree_gin'), false);
    const available = (await sql<{ n: number }>`select count(*)::int as n from pg_available_extensions where name = 'btree_gin'`.execute(db)).rows[0].n > 0;
    await asAdmin(database.url, `grant create on database ${new URL(database.url).pathname.slice(1)} to ${role}`);
    assert.equal(await mayCreateExtension(store, 'btree_gin'), available);
    assert.equal(await mayCreateExtension(store, 'no_such_extension'), false);
  } finally {
    await store.close();
    await database.drop();
    await asAdmin(TEST_DATABASE_URL, `drop role if exists ${role}`);
  }
});
