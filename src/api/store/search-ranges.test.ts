// SQLite, `access: owner`: the search index keeps each owner's records in one rowid range (owner
// number × 2^36 + record rowid; collection-tables.ts syncSearch), kept in step by triggers. What
// the triggers do on insert, update (doc or owner) and delete, the guard that refuses a record
// beyond its range, and the statements a search runs (records.ts listRecordRows).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { loadConfig, DEMO_CONFIG } from '../../platform/config/load.js';
import { openStore } from '../../platform/store/open-store.js';
import { migrateCore } from '../../platform/store/migrations.js';
import { buildCollections } from '../../contract/collections.js';
import { syncCollectionTables } from './collection-tables.js';
import { listRecordRows, type RowQuery } from './list-plans.js';
import { SEARCH_MAX_OWNERS, SEARCH_OWNER_SHIFT } from './search-index/sqlite.js';

const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-search-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A SQLite file with the demo deployment's collection tables, through the store and a raw connection. */
async function demoDatabase(name: string) {
  const file = path.join(dir, name);
  const store = await openStore(`sqlite:${file}`);
  const collections = buildCollections(loadConfig({ file: DEMO_CONFIG, dataDir: dir, env: {} }).collections);
  await migrateCore(store);
  await syncCollectionTables(store, collections);
  return { store, collections, raw: new BetterSqlite3(file) };
}

test('each owner\'s records are one range of the search index, through inserts, updates, owner changes and deletes; a record beyond its range is refused', async () => {
  const { store, collections, raw } = await demoDatabase('search.db');
  try {
    const zoos = collections.get('zoos')!;
    assert.equal(zoos.access, 'owner');
    assert.deepEqual(zoos.search, ['name', 'city']);

    const insert = raw.prepare(`insert into r_zoos (rowid, id, owner, parent_id, version, created_at, updated_at, doc, x_name, x_city, x_founded)
      values (?, ?, ?, null, 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', json_object('name', ?, 'city', 'Lyon'), ?, 'Lyon', null)`);
    const add = (rowid: number, id: string, owner: string, name: string) => insert.run(rowid, id, owner, name, name);
    add(1, 'a1', 'client:one', 'Lion Park');
    add(2, 'b1', 'client:two', 'Lion Lodge');
    add(3, 'a2', 'client:one', 'Bear Pit');
    const numberOf = (subject: string) => (raw.prepare('select num from search_owners where subject = ?').get(subject) as { num: number }).num;
    const base = (subject: string) => BigInt(numberOf(subject)) << BigInt(SEARCH_OWNER_SHIFT);
    const indexed = () => (raw.prepare('select rowid, body from r_zoos_fts order by rowid').safeIntegers(true).all() as { rowid: bigint; body: string }[]).map((r) => [r.rowid, r.body]);
    assert.deepEqual(indexed(), [
      [base('client:one') + 1n, 'Lion Park Lyon'],
      [base('client:one') + 3n, 'Bear Pit Lyon'],
      [base('client:two') + 2n, 'Lion Lodge Lyon'],
    ]);

    const search = async (owner: string | null, words: string[], extra: Partial<RowQuery> = {}) => {
      const { rows, total } = await listRecordRows(store, zoos, { owner, parentId: null, conditions: [], sort: [], search: words, rank: true, after: null, limit: 1, offset: 0, count: true, ...extra });
      return { ids: rows.map((r) => r.id), total };
    };
    assert.deepEqual(await search('client:one', ['lion']), { ids: ['a1'], total: 1 });
    assert.deepEqual(await search('client:two', ['lion']), { ids: ['b1'], total: 1 });
    assert.deepEqual(await search('client:three', ['lion']), { ids: [], total: 0 }, 'an owner with no number finds nothing');
    assert.deepEqual(await search('client:one', ['lyon'], { offset: 1 }), { ids: ['a2'], total: 2 }, 'the count comes from the index alone');

    // A change of the text, then of the owner, moves the row within and between ranges.
    raw.prepare("update r_zoos set doc = json_object('name', 'Lion Yard', 'city', 'Lyon') where id = 'a2'").run();
    assert.deepEqual((await search('client:one', ['lion'])).total, 2);
    raw.prepare("update r_zoos set owner = 'client:two' where id = 'a2'").run();
    assert.deepEqual(indexed(), [
      [base('client:one') + 1n, 'Lion Park Lyon'],
      [base('client:two') + 2n, 'Lion Lodge Lyon'],
      [base('client:two') + 3n, 'Lion Yard Lyon'],
    ]);
    assert.deepEqual(await search('client:one', ['lion']), { ids: ['a1'], total: 1 });
    assert.deepEqual((await search('client:two', ['lion'])).total, 2);
    raw.prepare("delete from r_zoos where id = 'b1'").run();
    assert.deepEqual(await search('client:two', ['lion']), { ids: ['a2'], total: 1 });

    // 2^36 rows is an owner's whole range: the next rowid would be the next owner's first.
    assert.throws(() => add(2 ** SEARCH_OWNER_SHIFT, 'far', 'client:one', 'Lion Far'), /the search index has no room for this record/);
    assert.equal((raw.prepare("select count(*) as n from r_zoos where id = 'far'").get() as { n: number }).n, 0, 'nothing stored');
    add(2 ** SEARCH_OWNER_SHIFT - 1, 'edge', 'client:one', 'Lion Edge');
    assert.deepEqual((await search('client:one', ['edge'])).ids, ['edge']);
  } finally {
    raw.close();
    await store.close();
  }
});

test('rebuilding the search index over records beyond an owner\'s range, or for more owners than it has ranges, is refused before anything changes', async () => {
  const { store, collections, raw } = await demoDatabase('rebuild.db');
  try {
    // A record the owner ranges have no room for, stored while no trigger guarded the table (as
    // by an earlier version), and the marker of that version's layout: the next start rebuilds.
    for (const t of ['ai', 'ad', 'au']) raw.exec(`drop trigger r_zoos_fts_${t}`);
    const insert = raw.prepare(`insert into r_zoos (rowid, id, owner, parent_id, version, created_at, updated_at, doc, x_name, x_city, x_founded)
      values (?, ?, 'client:one', null, 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', json_object('name', 'Lion'), 'Lion', null, null)`);
    insert.run(2 ** SEARCH_OWNER_SHIFT + 5, 'far');
    raw.prepare("update settings set value = 'name,city' where key = 'search:r_zoos'").run();
    const refused = async () => {
      await assert.rejects(syncCollectionTables(store, collections), /the search index of zoos has no room for its records/);
      assert.equal((raw.prepare("select value from settings where key = 'search:r_zoos'").get() as { value: string }).value, 'name,city', 'the marker is kept: the next start tries again');
      assert.equal((raw.prepare("select count(*) as n from sqlite_master where name = 'r_zoos_fts'").get() as { n: number }).n, 1, 'the index is not dropped');
    };
    await refused();
    // The last owner number is taken: the records' owner would need one beyond the last range.
    raw.prepare("delete from r_zoos where id = 'far'").run();
    insert.run(1, 'near');
    raw.prepare('insert into search_owners (num, subject) values (?, ?)').run(SEARCH_MAX_OWNERS - 1, 'client:last');
    await refused();
    // Room again: the rebuild goes through.
    raw.prepare("delete from search_owners where subject = 'client:last'").run();
    assert.deepEqual((await syncCollectionTables(store, collections)).searchIndexed, ['zoos']);
  } finally {
    raw.close();
    await store.close();
  }
});
