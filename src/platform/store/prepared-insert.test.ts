import assert from 'node:assert/strict';
import type { Store } from './store.js';
import { migrateCore } from './migrations.js';
import { sqlOf } from './sql.js';
import { preparedInsert } from './prepared-insert.js';
import { testOnEachEngine } from '../../../test/helpers/stores.js';

const insertNonce = preparedInsert('nonces', ['key', 'expires_at']);

async function roundTrip(store: Store) {
  await migrateCore(store);
  await insertNonce(sqlOf(store), { key: 'first', expires_at: 10 });
  // Inside a transaction (as group commit runs it): same statement, the transaction's connection.
  await sqlOf(store).transaction().execute(async (trx) => {
    await insertNonce(trx, { key: 'second', expires_at: 20 });
    await insertNonce(trx, { key: 'third', expires_at: 30 });
  });
  const rows = await sqlOf(store).selectFrom('nonces').selectAll().orderBy('key').execute();
  assert.deepEqual(
    rows.map((r) => [r.key, Number(r.expires_at)]),
    [['first', 10], ['second', 20], ['third', 30]],
  );
  await assert.rejects(insertNonce(sqlOf(store), { key: 'first', expires_at: 40 }), 'a duplicate key is still refused');
}

testOnEachEngine('preparedInsert binds each row in column order', roundTrip);
