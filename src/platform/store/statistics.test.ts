// What the SQLite store removes from ANALYZE's statistics when it opens (and after every
// ANALYZE it runs): the queue tables' and the search tables' rows, and the value samples that
// make SQLite re-plan a statement whenever its parameters change (sqlite-statistics.ts, forgetStatistics).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { openStore } from './open-store.js';
import { sqlOf } from './sql.js';

const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-stats-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('opening the store drops the index value samples and the queue tables statistics, and keeps the rest', async () => {
  const file = path.join(dir, 'stats.db');
  const raw = new BetterSqlite3(file);
  raw.exec(`
    create table things (id text primary key, owner text, city text);
    create index things_city on things (owner, city, id);
    create table events (id integer primary key, time integer);
    create index events_time on events (time);
    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 4999)
    INSERT INTO things SELECT printf('%06d', i), 'owner' || (i % 10), 'city' || (i % 50) FROM n;
    insert into events (time) values (1);
    ANALYZE;`);
  const count = (sqlText: string) => (raw.prepare(sqlText).get() as { n: number }).n;
  // better-sqlite3's SQLite is built with STAT4: ANALYZE kept samples of the index's values.
  assert.ok(count('select count(*) as n from sqlite_stat4') > 0, 'ANALYZE kept value samples (SQLITE_ENABLE_STAT4)');
  assert.equal(count("select count(*) as n from sqlite_stat1 where tbl = 'events'"), 1);

  const store = await openStore(`sqlite:${file}`);
  try {
    assert.equal(count('select count(*) as n from sqlite_stat4'), 0, 'no value samples left');
    assert.equal(count("select count(*) as n from sqlite_stat1 where tbl = 'events'"), 0, 'no statistics for a queue table');
    assert.equal(count("select count(*) as n from sqlite_stat1 where tbl = 'things'"), 2, 'the averages of the other tables stay');
    // The planner still seeks the equality index from the averages alone.
    const plan = await store.explain({ sql: 'select id from things where owner = ? and city = ? order by id limit 20', parameters: ['owner1', 'city1'] });
    assert.match(plan.join('\n'), /SEARCH things USING (COVERING )?INDEX things_city \(owner=\? AND city=\?\)/);
  } finally {
    raw.close();
    await store.close();
  }
});

test('statistics taken while the queue and search tables were tiny are dropped, and the store seeks their keys as in a large table', async () => {
  const file = path.join(dir, 'tiny.db');
  const raw = new BetterSqlite3(file);
  // As at a first start: ANALYZE sees the outbox and FTS5's shadow tables nearly empty (and
  // `PRAGMA optimize` never analyzes them again: nothing the planner does uses an index of theirs).
  raw.exec(`
    create table events (id integer primary key, time integer);
    create virtual table things_fts using fts5(body);
    insert into events (time) values (1);
    insert into things_fts (rowid, body) values (1, 'a zoo');
    ANALYZE;`);
  const rows = (tbl: string) => (raw.prepare('select count(*) as n from sqlite_stat1 where tbl = ?').get(tbl) as { n: number }).n;
  assert.equal(rows('things_fts_data'), 1, 'ANALYZE kept a row count for the FTS5 data table');
  assert.equal(rows('events'), 1);
  const store = await openStore(`sqlite:${file}`);
  try {
    for (const shadow of ['things_fts_data', 'things_fts_idx', 'things_fts_content', 'things_fts_docsize', 'things_fts_config'])
      assert.equal(rows(shadow), 0, `no statistics for ${shadow}`);
    assert.equal(rows('events'), 0);
    // The store's own connection had loaded those counts when it opened: it plans from the
    // defaults now, as for a large table (FTS5 deletes merged segments by this range; the event
    // feed reads by this one). With the tiny counts both were scans of the whole table.
    const plan = async (text: string) => (await store.explain({ sql: text, parameters: [1, 2] })).join('\n');
    assert.match(await plan('select block from things_fts_data where id >= ? and id <= ?'), /SEARCH things_fts_data USING INTEGER PRIMARY KEY/);
    assert.match(await plan('select id from events where id > ? and time > ? order by id limit 100'), /SEARCH events USING INTEGER PRIMARY KEY/);
  } finally {
    raw.close();
    await store.close();
  }
});

test('a LIMIT is written into the statement (bound, SQLite would plan the statement again at every run); other values stay bound', async () => {
  const store = await openStore(`sqlite:${path.join(dir, 'limits.db')}`);
  try {
    const db = sqlOf(store) as unknown as Kysely<{ things: { id: string; city: string } }>;
    await db.schema.createTable('things').addColumn('id', 'text', (c) => c.primaryKey()).addColumn('city', 'text').execute();
    await db.insertInto('things').values([{ id: 'a', city: 'x' }, { id: 'b', city: 'x' }, { id: 'c', city: 'y' }]).execute();
    const query = db.selectFrom('things').select('id').where('city', '=', 'x').orderBy('id').limit(1).offset(1).compile();
    assert.match(query.sql, /limit 1 offset \?$/);
    assert.deepEqual(query.parameters, ['x', 1]);
    assert.deepEqual((await db.selectFrom('things').select('id').where('city', '=', 'x').orderBy('id').limit(1).offset(1).execute()).map((r) => r.id), ['b']);
    // Only whole numbers from the program are written in; anything else stays a parameter.
    assert.match(db.selectFrom('things').select('id').limit(sql<number>`${2}`).compile().sql, /limit \?$/);
  } finally {
    await store.close();
  }
});
