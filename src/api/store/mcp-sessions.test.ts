import assert from 'node:assert/strict';
import { migrateCore } from '../../platform/store/migrations.js';
import { sqlOf } from '../../platform/store/sql.js';
import { write } from '../../platform/store/write-path.js';
import { testOnEachEngine } from '../../../test/helpers/stores.js';
import { addSubscription, claimStream, subscribersOf, subscriptionsOf } from './mcp-sessions.js';

const LIMITS = { sessions: 20, subscriptions: 100 };

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
  await write(store, (tx) => addSubscription(tx, alice, { collection: 'zoos', recordId: 'r1', uri: 'gatehouse://zoos/r1' }, LIMITS, now));
  await write(store, (tx) => addSubscription(tx, alice, { collection: 'zoos', recordId: 'r2', uri: 'gatehouse://zoos/r2' }, LIMITS, now));

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

testOnEachEngine("a user's client keeps its newest sessions only: sessions made in a loop let the oldest go with what they followed", async (store) => {
  await migrateCore(store);
  const now = Date.now();
  const limits = { sessions: 3, subscriptions: 100 };
  const session = (n: number, subject = 'user:mallory') => ({ id: `${subject}-${n}`, subject, clientId: 'c', expiresAt: now + n * 1000 });
  const bob = session(0, 'user:bob');
  await write(store, (tx) => addSubscription(tx, bob, { collection: 'zoos', recordId: 'b', uri: 'gatehouse://zoos/b' }, limits, now));
  for (let n = 1; n <= 10; n++) {
    await write(store, (tx) => addSubscription(tx, session(n), { collection: 'zoos', recordId: `r${n}`, uri: `gatehouse://zoos/r${n}` }, limits, now));
    if (n === 5) await write(store, (tx) => claimStream(tx, session(11), 'stream-11', limits.sessions));
  }
  const rows = await sqlOf(store).selectFrom('mcp_sessions').select(['id', 'subject']).orderBy('id').execute();
  assert.deepEqual(rows.filter((r) => r.subject === 'user:mallory').map((r) => r.id).sort(), ['user:mallory-10', 'user:mallory-11', 'user:mallory-9'], 'the three newest (by expiry)');
  assert.equal(rows.filter((r) => r.subject === 'user:bob').length, 1, "another user's session is not touched");
  assert.equal((await subscriptionsOf(store, 'user:mallory-1')).length, 0, 'what an evicted session followed is gone');
  assert.equal((await subscriptionsOf(store, 'user:mallory-10')).length, 1);
  assert.equal((await sqlOf(store).selectFrom('mcp_subscriptions').select('session_id').execute()).length, 3, "bob's and the two newest sessions' that subscribed");
  // A session older than the newest three follows nothing more: told so, nothing kept.
  assert.equal(await write(store, (tx) => addSubscription(tx, session(2), { collection: 'zoos', recordId: 'again', uri: 'gatehouse://zoos/again' }, limits, now)), 'superseded');
  assert.equal((await sqlOf(store).selectFrom('mcp_sessions').select('id').where('subject', '=', 'user:mallory').execute()).length, 3);
  assert.equal((await subscriptionsOf(store, 'user:mallory-2')).length, 0);
});
