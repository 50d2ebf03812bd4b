import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from './open-store.js';
import { migrateCore } from './migrations.js';
import { sqlOf } from './sql.js';

test('writes arriving together share one transaction; a failing write fails alone', async () => {
  const store = await openStore('sqlite::memory:');
  try {
    await migrateCore(store);
    let transactions = 0;
    const original = sqlOf(store).transaction.bind(sqlOf(store));
    (sqlOf(store) as { transaction: typeof original }).transaction = () => {
      transactions++;
      return original();
    };
    const write = (key: string) => store.writes.run(async (trx) => void (await trx.insertInto('nonces').values({ key, expires_at: 1 }).execute()));
    await Promise.all(['a', 'b', 'c', 'd'].map(write));
    assert.equal(transactions, 1, 'four writes, one commit');

    transactions = 0;
    const results = await Promise.allSettled([write('e'), write('a'), write('f')]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled'], 'the duplicate key fails on its own');
    const keys = (await sqlOf(store).selectFrom('nonces').select('key').orderBy('key').execute()).map((r) => r.key);
    assert.deepEqual(keys, ['a', 'b', 'c', 'd', 'e', 'f']);
  } finally {
    await store.close();
  }
});
