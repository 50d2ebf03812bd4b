import assert from 'node:assert/strict';
import type { Store } from '../../platform/store/store.js';
import { migrateCore } from '../../platform/store/migrations.js';
import { sqlOf } from '../../platform/store/sql.js';
import { accessTokenKey, newAccessToken, sha256, type AccessTokenKey } from '../../platform/crypto/secrets.js';
import { activeFrom, matchingToken } from '../../contract/active-token.js';
import { findAccessTokenWithGrant } from './grants.js';
import { testOnEachEngine } from '../../../test/helpers/stores.js';

const activeAccessToken = async (store: Store, key: AccessTokenKey) => activeFrom(matchingToken(await findAccessTokenWithGrant(store, key.id), key));

// 0003 re-keys access tokens by selector: tokens issued before it must keep working.
async function tokensSurviveTheSelectorMigration(store: Store) {
  assert.deepEqual(await migrateCore(store, '0002_partial_token_grant_index'), ['0001_core', '0002_partial_token_grant_index']);
  const db = sqlOf(store) as any;
  const now = Date.now();
  await db.insertInto('clients').values({ id: 'c', name: 'c', secret_hash: null, public: 0, redirect_uris: '[]', grant_types: '[]', scope: null, token_type: 'bearer', created_at: now }).execute();
  const legacy = 'legacyTokenWithoutSelector_0123456789abcdefghijklmno';
  const row = (hash: string) => ({ hash, grant_id: null, client_id: 'c', subject: 'client:c', scope: 'zoos:read', token_type: 'bearer', key_id: null, expires_at: now + 3_600_000, revoked_at: null, created_at: now });
  await db.insertInto('access_tokens').values(row(sha256(legacy))).execute();

  // 0003 onwards (later migrations follow it).
  assert.deepEqual((await migrateCore(store)).slice(0, 2), ['0003_access_token_selector', '0004_admins_and_holder_indexes']);
  const found = await activeAccessToken(store, accessTokenKey(legacy));
  assert.equal(found?.subject, 'client:c', 'a token issued before the migration is still valid');
  assert.equal(found?.tokenHash, sha256(legacy));

  const fresh = newAccessToken();
  assert.match(fresh.token, /^[0-9a-f]{32}\.[A-Za-z0-9_-]{43}$/);
  await db.insertInto('access_tokens').values({ id: fresh.id, ...row(fresh.hash) }).execute();
  assert.equal((await activeAccessToken(store, accessTokenKey(fresh.token)))?.subject, 'client:c');
  // The selector alone is not a credential: the same selector with another secret is unknown.
  assert.equal(await activeAccessToken(store, accessTokenKey(`${fresh.id}.${'A'.repeat(43)}`)), null);
  assert.equal(await activeAccessToken(store, accessTokenKey(fresh.id)), null);
  // Selectors are time-ordered: a later token sorts after an earlier one (appends to the key).
  assert.ok(newAccessToken().id > fresh.id);
}

testOnEachEngine('0003 access token selector: tokens issued before the migration keep working', tokensSurviveTheSelectorMigration);
