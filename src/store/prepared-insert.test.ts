import assert from 'node:assert/strict';
import type { Store } from './dialect.js';
import { migrateCore } from './migrations.js';
import { preparedInsert } from './prepared-insert.js';
import { testOnEachEngine } from '../../test/helpers/stores.js';

const insertNonce = preparedInsert('nonces', ['key', 'expires_at']);

async function roundTrip(store: Store) {
  await migrateCore(store);
  await insertNonce(store.db, { key: 'first', expires_at: 10 });
  // Inside a transaction (as group commit runs it): same statement, the transaction's connection.
  await store.db.transaction().execute(async (trx) => {
    await insertNonce(trx, { key: 'second', expires_at: 20 });
    await insertNonce(trx, { key: 'third', expires_at: 30 });
  });
  const rows = await store.db.selectFrom('nonces').selectAll().orderBy('key').execute();
  assert.deepEqual(
    rows.map((r) => [r.key, Number(r.expires_at)]),
    [['first', 10], ['second', 20], ['third', 30]],
  );
  await assert.rejects(insertNonce(store.db, { key: 'first', expires_at: 40 }), 'a duplicate key is still refused');
}

testOnEachEngine('preparedInsert binds each row in column order', roundTrip);
