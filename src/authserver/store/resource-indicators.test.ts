import assert from 'node:assert/strict';
import type { Store } from '../../platform/store/store.js';
import { migrateCore } from '../../platform/store/migrations.js';
import { sqlOf } from '../../platform/store/sql.js';
import { write } from '../../platform/store/write-path.js';
import { accessTokenKey, newAccessToken, sha256 } from '../../platform/crypto/secrets.js';
import { activeFrom, matchingToken } from '../../contract/active-token.js';
import { findAccessTokenWithGrant, findCodeRow, findRefreshTokenRow, insertCode, insertTokens } from './grants.js';
import { testOnEachEngine } from '../../../test/helpers/stores.js';

// 0017 adds an access token's audience and a code's and refresh token's resources (RFC 8707):
// a token stored before it has none (the resource API's); one stored after reads back its own.
async function audiencesAcrossTheMigration(store: Store) {
  const names = await migrateCore(store, '0013_user_lifecycle');
  assert.ok(names.length > 0);
  const db = sqlOf(store) as any;
  const now = Date.now();
  await db.insertInto('clients').values({ id: 'c', name: 'c', secret_hash: null, public: 0, redirect_uris: '[]', grant_types: '[]', scope: null, token_type: 'bearer', created_at: now }).execute();
  const before = newAccessToken();
  const row = { grant_id: null, client_id: 'c', subject: 'client:c', scope: 'zoos:read', token_type: 'bearer', key_id: null, expires_at: now + 3_600_000, revoked_at: null, created_at: now };
  await db.insertInto('access_tokens').values({ id: before.id, hash: before.hash, ...row }).execute();

  await migrateCore(store);
  const old = activeFrom(matchingToken(await findAccessTokenWithGrant(store, before.id), accessTokenKey(before.token)));
  assert.equal(old?.audience, null, 'a token from before has no audience');

  const after = newAccessToken();
  await write(store, (tx) => insertTokens(tx, { id: after.id, hash: after.hash, ...row, audience: '/mcp' }, { hash: sha256('r'), grant_id: 'g', client_id: 'c', scope: 'zoos:read', expires_at: now + 1000, used_at: null, created_at: now, auth_time: null, sid: null, amr: null, resources: '/v1 /mcp' }));
  assert.equal(activeFrom(matchingToken(await findAccessTokenWithGrant(store, after.id), accessTokenKey(after.token)))?.audience, '/mcp');
  assert.equal((await findRefreshTokenRow(store, sha256('r')))?.resources, '/v1 /mcp');
  await write(store, (tx) =>
    insertCode(tx, {
      hash: sha256('code'), client_id: 'c', subject: 'user:u', redirect_uri: 'https://a.example/cb', redirect_uri_given: 1, scope: 'zoos:read', requested_scope: 'zoos:read',
      grant_expires_at: now + 1000, code_challenge: null, code_challenge_method: null, expires_at: now + 1000, used_at: null, grant_id: null, created_at: now,
      nonce: null, auth_time: null, sid: null, amr: null, resources: '/mcp',
    }),
  );
  assert.equal((await findCodeRow(store, sha256('code')))?.resources, '/mcp');
}

testOnEachEngine('0017 resource indicators: audiences and resources stored and read back; tokens from before have none', audiencesAcrossTheMigration);
