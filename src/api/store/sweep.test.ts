import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../../platform/store/open-store.js';
import { migrateCore } from '../../platform/store/migrations.js';
import { sqlOf } from '../../platform/store/sql.js';
import { sweepResourceTables } from '../lifecycle.js';

test('the resource side sweep removes expired nonces, day-old idempotency keys, week-old finished jobs and expired MCP sessions with their subscriptions, nothing else', async () => {
  const store = await openStore('sqlite::memory:');
  try {
    await migrateCore(store);
    const now = Date.now();
    const db = sqlOf(store);
    await db.insertInto('nonces').values([{ key: 'old', expires_at: now - 1 }, { key: 'live', expires_at: now + 60_000 }]).execute();
    const key = (k: string, at: number) => ({ subject: 's', key: k, collection: 'zoos', body_hash: 'h', record_id: 'r', created_at: at });
    await db.insertInto('idempotency_keys').values([key('old', now - 2 * 86_400_000), key('live', now - 1000)]).execute();
    const job = (id: string, status: string, at: number) => ({
      id, subject: 's', client_id: 'c', collection: 'zoos', parent_id: null, status, total: 1, processed: 1,
      items: '[]', results: '[]', lease_until: 0, created_at: at, updated_at: at,
    });
    await db.insertInto('jobs').values([job('old-done', 'done', now - 8 * 86_400_000), job('old-running', 'running', now - 8 * 86_400_000), job('new-done', 'done', now)]).execute();

    const session = (id: string, expires: number) => ({ id, subject: 's', client_id: 'c', subscriptions: 1, stream: null, expires_at: expires });
    await db.insertInto('mcp_sessions').values([session('ended', now - 1), session('live', now + 60_000)]).execute();
    const follows = (sessionId: string, recordId: string) => ({ session_id: sessionId, collection: 'zoos', record_id: recordId, uri: `gatehouse://zoos/${recordId}`, created_at: now });
    await db.insertInto('mcp_subscriptions').values([follows('ended', 'a'), follows('ended', 'b'), follows('live', 'a')]).execute();

    assert.deepEqual(await sweepResourceTables(store, now), { nonces: 1, idempotency_keys: 1, jobs: 1, mcp_sessions: 3 });
    assert.deepEqual((await db.selectFrom('mcp_sessions').select('id').execute()).map((r) => r.id), ['live']);
    assert.deepEqual((await db.selectFrom('mcp_subscriptions').select('session_id').execute()).map((r) => r.session_id), ['live']);
    assert.deepEqual((await db.selectFrom('nonces').select('key').execute()).map((r) => r.key), ['live']);
    assert.deepEqual((await db.selectFrom('idempotency_keys').select('key').execute()).map((r) => r.key), ['live']);
    assert.deepEqual((await db.selectFrom('jobs').select('id').orderBy('id').execute()).map((r) => r.id), ['new-done', 'old-running']);
  } finally {
    await store.close();
  }
});
