import { test } from 'node:test';
import assert from 'node:assert/strict';
import { migrateCore } from '../../platform/store/migrations.js';
import { openStore } from '../../platform/store/open-store.js';
import type { Store } from '../../platform/store/store.js';
import { write } from '../../platform/store/write-path.js';
import { createPgDatabase, pgAvailable } from '../../../test/helpers/server.js';
import { testOnEachEngine } from '../../../test/helpers/stores.js';
import { insertCurrentIdTokenKey, insertFirstIdTokenKey, listIdTokenKeys } from './id-token-keys.js';

// One current key per algorithm: the first is added once however many ask, and never retires
// another; a rotation retires the current one and keeps it listed.

const key = (id: string, alg = 'RS256', createdAt = Date.now()) => ({ id, alg, privateKey: `sealed-${id}`, publicJwk: '{}', createdAt });
const current = async (store: Store) => (await listIdTokenKeys(store, 0)).filter((k) => k.retiredAt === null).map((k) => k.id).sort();

testOnEachEngine('the first key of an algorithm is added once; a rotation retires the current one', async (store) => {
  await migrateCore(store);
  assert.equal(await write(store, (tx) => insertFirstIdTokenKey(tx, key('r1'))), true);
  assert.equal(await write(store, (tx) => insertFirstIdTokenKey(tx, key('r2'))), false, 'RS256 has one');
  assert.equal(await write(store, (tx) => insertFirstIdTokenKey(tx, key('e1', 'ES256'))), true, 'per algorithm');
  assert.deepEqual(await current(store), ['e1', 'r1']);
  await write(store, (tx) => insertCurrentIdTokenKey(tx, key('r3')));
  assert.deepEqual(await current(store), ['e1', 'r3']);
  assert.ok((await listIdTokenKeys(store, 0)).some((k) => k.id === 'r1' && k.retiredAt !== null), 'the rotated key stays listed, retired');
});

test('PostgreSQL: a first key committed by another instance in the middle of this one\'s write stands, not retired', { skip: !pgAvailable && 'PostgreSQL not available' }, async () => {
  const database = await createPgDatabase();
  const [a, b] = [await openStore(database.url), await openStore(database.url)];
  try {
    await migrateCore(a);
    // Instance A's write starts; instance B makes and commits the first key meanwhile; then A's insert runs.
    const added = await write(a, async (tx) => {
      assert.deepEqual(await listIdTokenKeys(tx, 0), []);
      assert.equal(await write(b, (other) => insertFirstIdTokenKey(other, key('from-b'))), true);
      return insertFirstIdTokenKey(tx, key('from-a'));
    });
    assert.equal(added, false);
    const keys = await listIdTokenKeys(a, 0);
    assert.deepEqual(keys.map((k) => [k.id, k.retiredAt]), [['from-b', null]], 'one key, current: nothing retired');
  } finally {
    await a.close();
    await b.close();
    await database.drop();
  }
});
