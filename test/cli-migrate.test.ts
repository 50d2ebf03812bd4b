// `gatehouse migrate`: brings the database in line with the config. A filter added to a collection
// later gets its column and index, backfilled from the stored records; nothing is dropped.
// Spawned server (test/helpers/server.ts), not in process: the CLI against the database a server was started on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { runCli, startServer, tempDir, testConfig, writeConfig } from './helpers/server.js';
import { apiClient } from './helpers/tokens.js';

test('a filter added to the config later is migrated and backfilled; the data stays', async () => {
  const dir = tempDir();
  try {
    const before = testConfig({ collections: { zoos: { filters: ['name'], sort: ['name'], search: [], indexes: [] } } });
    const first = await startServer({ dataDir: dir, rawConfig: before });
    const client = await apiClient(first, 'migrator', 'zoos:read zoos:write');
    for (const [name, city] of [['A', 'Lyon'], ['B', 'Nice'], ['C', 'Lyon']])
      assert.equal((await client.json('POST', '/v1/zoos', { name, city })).status, 201);
    const refused = await client.json('GET', '/v1/zoos?city=Lyon');
    assert.equal(refused.status, 400, 'city is not a filter yet');
    assert.equal(await first.stop(), 0);

    const after = testConfig({ collections: { zoos: { filters: ['name', 'city'], sort: ['name'], search: ['city'], indexes: [['city', 'name']] } } });
    const configFile = writeConfig(dir, after);
    const migrated = runCli(['migrate', '--config', configFile, '--data-dir', dir]);
    assert.equal(migrated.status, 0, migrated.stderr);
    const report = JSON.parse(migrated.stdout);
    assert.deepEqual(report.columns_added, ['zoos.city']);
    assert.deepEqual(report.search_indexed, ['zoos'], 'the search index is built from the stored records');
    assert.deepEqual(report.migrations_applied, []);
    const db = new BetterSqlite3(path.join(dir, 'gatehouse.db'), { readonly: true });
    const indexes = (db.prepare("select name from sqlite_master where type = 'index' and tbl_name = 'r_zoos'").all() as { name: string }[]).map((r) => r.name);
    db.close();
    assert.ok(indexes.includes('r_zoos_x_city_x_name'), `the compound index of indexes: [[city, name]] is made: ${indexes.join(', ')}`);

    const again = runCli(['migrate', '--config', configFile, '--data-dir', dir]);
    assert.deepEqual(JSON.parse(again.stdout).columns_added, [], 'migrate is idempotent');
    assert.deepEqual(JSON.parse(again.stdout).search_indexed, []);

    const second = await startServer({ dataDir: dir, configFile });
    try {
      const token = await apiClient(second, 'migrator', 'zoos:read');
      const lyon = await token.json('GET', '/v1/zoos?city=Lyon&sortby=name');
      assert.equal(lyon.status, 200, lyon.text);
      assert.deepEqual(lyon.body.map((z: { name: string }) => z.name), ['A', 'C']);
      assert.equal(lyon.headers.get('x-total-count'), '2');
      const found = await token.json('GET', '/v1/zoos?q=nice');
      assert.deepEqual(found.body.map((z: { name: string }) => z.name), ['B'], 'records stored before the search was configured are found');
    } finally {
      await second.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a search index built before owner ranges (one row per record, keyed by its rowid) is rebuilt by migrate; each owner then finds its own', async () => {
  const dir = tempDir();
  try {
    const config = testConfig({ collections: { zoos: { access: 'owner', search: ['name', 'city'] } } });
    const first = await startServer({ dataDir: dir, rawConfig: config });
    const one = await apiClient(first, 'owner-one', 'zoos:read zoos:write');
    const two = await apiClient(first, 'owner-two', 'zoos:read zoos:write');
    for (const [client, name] of [[one, 'Lion Park'], [one, 'Lion House'], [two, 'Lion Lodge'], [one, 'Bear Pit']] as const)
      assert.equal((await client.json('POST', '/v1/zoos', { name, city: 'Lyon' })).status, 201);
    assert.equal(await first.stop(), 0);

    // The layout of the versions before: the FTS rowid is the record's rowid, the marker the fields.
    const db = new BetterSqlite3(path.join(dir, 'gatehouse.db'));
    db.exec(`drop trigger r_zoos_fts_ai; drop trigger r_zoos_fts_ad; drop trigger r_zoos_fts_au; drop table r_zoos_fts;
      create virtual table r_zoos_fts using fts5(body, tokenize = 'unicode61 remove_diacritics 2');
      insert into r_zoos_fts (rowid, body) select rowid, json_extract(doc, '$.name') || ' ' || json_extract(doc, '$.city') from r_zoos;
      update settings set value = 'name,city' where key = 'search:r_zoos';`);
    db.close();

    const configFile = writeConfig(dir, config);
    const migrated = runCli(['migrate', '--config', configFile, '--data-dir', dir]);
    assert.equal(migrated.status, 0, migrated.stderr);
    assert.deepEqual(JSON.parse(migrated.stdout).search_indexed, ['zoos'], 'the old layout is rebuilt');
    const again = runCli(['migrate', '--config', configFile, '--data-dir', dir]);
    assert.deepEqual(JSON.parse(again.stdout).search_indexed, [], 'once');

    const second = await startServer({ dataDir: dir, configFile });
    try {
      const found = async (clientId: string) => {
        const res = await (await apiClient(second, clientId, 'zoos:read')).json('GET', '/v1/zoos?q=lion');
        assert.equal(res.status, 200, res.text);
        return { names: res.body.map((z: { name: string }) => z.name).sort(), total: res.headers.get('x-total-count') };
      };
      assert.deepEqual(await found('owner-one'), { names: ['Lion House', 'Lion Park'], total: '2' });
      assert.deepEqual(await found('owner-two'), { names: ['Lion Lodge'], total: '1' });
    } finally {
      await second.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('migrate with a bad config names the problem and changes nothing', () => {
  const dir = tempDir();
  try {
    const file = writeConfig(dir, testConfig({ collections: { zoos: { filters: ['nope'] } } }));
    const r = runCli(['migrate', '--config', file, '--data-dir', dir]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /collections\.zoos\.filters\[0\]/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
