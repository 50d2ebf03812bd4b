import assert from 'node:assert/strict';
import { migrateCore } from '../../platform/store/migrations.js';
import { sqlOf } from '../../platform/store/sql.js';
import { write } from '../../platform/store/write-path.js';
import { testOnEachEngine } from '../../../test/helpers/stores.js';
import { addSubscription, subscribersOf } from './mcp-sessions.js';

// Who an instance reads when a followed record changes: the subscriptions of the sessions whose
// streams it holds, however many other sessions follow the same record (an attacker's thousands of
// sessions, one request each, must not make every instance read them all at each change).

testOnEachEngine('a change reads the subscriptions of the streams held here only, not every session following the record', async (store) => {
  await migrateCore(store);
  const now = Date.now();
  const db = sqlOf(store);
  const flood = Array.from({ length: 500 }, (_, i) => `mallory-${i}`);
  await db.insertInto('mcp_sessions').values(flood.map((id) => ({ id, subject: 'user:mallory', client_id: 'c', subscriptions: 1, stream: null, expires_at: now + 60_000 }))).execute();
  await db
    .insertInto('mcp_subscriptions')
    .values(flood.map((id) => ({ session_id: id, collection: 'zoos', record_id: 'r1', uri: 'gatehouse://zoos/r1', created_at: now })))
    .execute();
  const alice = { id: 'alice-1', subject: 'user:alice', clientId: 'c', expiresAt: now + 60_000 };
  await write(store, (tx) => addSubscription(tx, alice, { collection: 'zoos', recordId: 'r1', uri: 'gatehouse://zoos/r1' }, 100, now));
  await write(store, (tx) => addSubscription(tx, alice, { collection: 'zoos', recordId: 'r2', uri: 'gatehouse://zoos/r2' }, 100, now));

  const changed = [{ collection: 'zoos', recordId: 'r1' }, { collection: 'zoos', recordId: 'r2' }];
  const here = await subscribersOf(store, changed, ['alice-1', 'nobody'], now);
  assert.deepEqual(here.map((s) => [s.sessionId, s.recordId]).sort(), [['alice-1', 'r1'], ['alice-1', 'r2']]);
  assert.deepEqual(await subscribersOf(store, changed, [], now), [], 'no stream here: nothing read');
  // Many streams here: read in chunks, each once.
  const many = await subscribersOf(store, changed, [...flood, 'alice-1'], now);
  assert.equal(many.length, flood.length + 2);
  assert.equal(new Set(many.map((s) => `${s.sessionId}/${s.recordId}`)).size, many.length);
  // An expired session is not a subscriber.
  assert.deepEqual(await subscribersOf(store, changed, ['alice-1'], now + 60_000), []);
});
