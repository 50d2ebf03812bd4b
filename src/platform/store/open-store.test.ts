// openStore's in-memory SQLite database (`sqlite::memory:`), for tests that need a database and no
// file: each store its own database, and the server's housekeeping and serving marker touch no file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { openStore } from './open-store.js';
import { migrateCore } from './migrations.js';
import { readSetting, writeSetting } from './settings.js';

test('sqlite::memory: opens a database in memory, one per store, with no file written', async () => {
  const before = readdirSync('.');
  const a = await openStore('sqlite::memory:');
  const b = await openStore('sqlite::memory:');
  try {
    assert.equal(a.engine, 'sqlite');
    await migrateCore(a);
    await migrateCore(b);
    await writeSetting(a, 'probe', 'a');
    assert.equal(await readSetting(a, 'probe'), 'a');
    assert.equal(await readSetting(b, 'probe'), null, 'the other store has its own database');
    a.runHousekeepingInBackground((problem) => assert.fail(problem));
    a.announceServing();
    await a.ping();
  } finally {
    await a.close();
    await b.close();
  }
  assert.deepEqual(readdirSync('.'), before, 'nothing written beside the program');
});
