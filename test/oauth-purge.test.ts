// The authorization server's sweep removes only what can no longer matter (run against a real SQLite database).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig, DEMO_CONFIG } from '../src/platform/config/load.js';
import { openStore } from '../src/platform/store/open-store.js';
import { migrateCore } from '../src/platform/store/migrations.js';
import { buildCollections } from '../src/contract/collections.js';
import { Sealer } from '../src/platform/crypto/sealed.js';
import { KeyRing } from '../src/platform/crypto/keys.js';
import type { AppContext } from '../src/contract/context.js';
import { accessTokenSource, sweepAuthorizationTables } from '../src/authserver/lifecycle.js';
import { ownedRecordsIn } from '../src/api/owned-records.js';
import { sqlOf } from '../src/platform/store/sql.js';

test('expired tokens, grants, sessions and throttle windows are purged; live ones stay', async () => {
  const config = loadConfig({ file: DEMO_CONFIG });
  const store = await openStore('sqlite::memory:');
  try {
    await migrateCore(store);
    const ctx: AppContext = { config, store, redis: null, collections: buildCollections(config.collections), keys: new KeyRing(store), sealer: new Sealer(null, config.dataDir), accessTokens: accessTokenSource(store), ownedRecords: ownedRecordsIn(store, buildCollections(config.collections), config) };
    const now = Date.now();
    const old = now - 2 * 3_600_000;
    const live = now + 3_600_000;
    const db = sqlOf(store);
    // Two users: a user has one live grant per client (migration 0010).
    for (const [id, exp, subject] of [['g-old', old, 'user:2'], ['g-live', live, 'user:1']] as const)
      await db.insertInto('grants').values({ id, client_id: 'c', subject, scope: 'zoos:read', expires_at: exp, revoked_at: null, revoked_reason: null, created_at: old }).execute();
    for (const [hash, exp] of [['a-old', old], ['a-live', live]] as const)
      await db.insertInto('access_tokens').values({ id: hash, hash, grant_id: 'g-live', client_id: 'c', subject: 'user:1', scope: 'zoos:read', token_type: 'bearer', key_id: null, expires_at: exp, revoked_at: null, created_at: old }).execute();
    for (const [hash, exp] of [['r-old', old], ['r-live', live]] as const)
      await db.insertInto('refresh_tokens').values({ hash, grant_id: 'g-live', client_id: 'c', scope: 'zoos:read', expires_at: exp, used_at: now, created_at: old }).execute();
    for (const [hash, exp] of [['s-old', old], ['s-live', live]] as const)
      await db.insertInto('sessions').values({ hash, user_id: '1', expires_at: exp, created_at: old }).execute();
    await db.insertInto('counters').values({ key: 'login:ip:1.2.3.4', count: 3, window_start: now - 86_400_000 }).execute();
    await db.insertInto('counters').values({ key: 'login:ip:5.6.7.8', count: 3, window_start: now }).execute();
    await db.insertInto('counters').values({ key: 'rate:someone-else', count: 3, window_start: now - 86_400_000 }).execute();

    await sweepAuthorizationTables(ctx, now);

    const ids = async (table: 'grants' | 'access_tokens' | 'refresh_tokens' | 'sessions', column: 'id' | 'hash') =>
      (await db.selectFrom(table).select(column as never).execute()).map((r) => (r as Record<string, string>)[column]).sort();
    assert.deepEqual(await ids('grants', 'id'), ['g-live']);
    assert.deepEqual(await ids('access_tokens', 'hash'), ['a-live']);
    assert.deepEqual(await ids('refresh_tokens', 'hash'), ['r-live']);
    assert.deepEqual(await ids('sessions', 'hash'), ['s-live']);
    const counters = (await db.selectFrom('counters').select('key').execute()).map((r) => r.key).sort();
    assert.deepEqual(counters, ['login:ip:5.6.7.8', 'rate:someone-else']);
  } finally {
    await store.close();
  }
});
