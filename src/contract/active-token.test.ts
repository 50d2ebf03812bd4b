import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AppContext } from './context.js';
import { REVALIDATE_MS, TokenVerifier } from './active-token.js';
import type { AccessTokenSource, StoredAccessToken } from './access-token-source.js';
import { accessTokenKey } from '../platform/crypto/secrets.js';

// The token check answers a token it has verified within the last REVALIDATE_MS from its cache,
// and reads the store otherwise. The store here is the port's contract over an array, counted;
// the tables are tested elsewhere.

function setup(rows: StoredAccessToken[]) {
  const reads: string[] = [];
  const source: AccessTokenSource = {
    async find(selector) {
      reads.push(selector);
      return rows.find((r) => r.id === selector) ?? null;
    },
    async clientOrigins() {
      return [];
    },
    async originRegistered() {
      return false;
    },
    async signingKey() {
      return null;
    },
  };
  const ctx = { redis: null, accessTokens: source } as unknown as AppContext;
  return { verifier: new TokenVerifier(ctx), reads };
}

function row(token: string, expiresAt: number): StoredAccessToken {
  const key = accessTokenKey(token);
  return {
    id: key.id,
    hash: key.hash,
    grant_id: null,
    client_id: 'app',
    subject: 'client:app',
    scope: 'zoos:read',
    token_type: 'bearer',
    key_id: null,
    expires_at: expiresAt,
    revoked_at: null,
    created_at: Date.now(),
    grant_found: null,
    grant_expires_at: null,
    grant_revoked_at: null,
  };
}

test('a token verified a moment ago is answered without reading the store again; a new one is read', async (t) => {
  mock.timers.enable({ apis: ['Date'], now: 1_000_000 }); // "a moment ago", however busy the machine
  t.after(() => mock.timers.reset());
  const token = 'sel1.secret-one';
  const { verifier, reads } = setup([row(token, Date.now() + 60_000)]);
  assert.equal((await verifier.verify(token))?.clientId, 'app');
  assert.equal((await verifier.verify(token))?.clientId, 'app');
  assert.deepEqual(reads, ['sel1'], 'the second check is answered from the cache');

  assert.equal(await verifier.verify('sel2.nobody'), null);
  assert.equal(await verifier.verify('sel2.nobody'), null);
  assert.deepEqual(reads, ['sel1', 'sel2'], 'an unknown token is remembered as unknown for the interval too');
});

test('a cached token past its expiry is refused from the cache; past REVALIDATE_MS the store is read again', async (t) => {
  mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
  t.after(() => mock.timers.reset());
  const token = 'sel3.short-lived'; // (the clock is the test's: it moves only by tick)
  const { verifier, reads } = setup([row(token, Date.now() + 40)]);
  assert.equal((await verifier.verify(token))?.clientId, 'app');
  mock.timers.tick(60);
  assert.equal(await verifier.verify(token), null);
  assert.deepEqual(reads, ['sel3'], 'refused from the cache, without waiting for the cache to expire');
  mock.timers.tick(REVALIDATE_MS);
  assert.equal(await verifier.verify(token), null);
  assert.deepEqual(reads, ['sel3', 'sel3'], 'once the interval is over, the store is asked again (a revocation is seen within it)');
});
