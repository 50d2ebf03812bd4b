import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT, calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import type { AccessTokenSource } from './access-token-source.js';
import { JwtAccessTokenCheck, isJwt } from './jwt-access-token.js';

// The JWT access token check on its own (the row behind it is tested in test/oauth-jwt-access-tokens.test.ts):
// each of signature, typ, iss and exp refuses by itself, before any row is read.

const ISSUER = 'https://gatehouse.example';

async function setup() {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(jwk);
  let lookups = 0;
  const source = {
    async signingKey(id: string) {
      lookups++;
      return id === kid ? { alg: 'RS256', publicJwk: JSON.stringify(jwk) } : null;
    },
  } as unknown as AccessTokenSource;
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: ISSUER, sub: 'client:app', aud: `${ISSUER}/v1`, client_id: 'app', scope: 'zoos:read', jti: '0'.repeat(32), iat: now, exp: now + 60 };
  const sign = (payload: Record<string, unknown> = claims, header: Record<string, unknown> = {}, key = privateKey) =>
    new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt', ...header }).sign(key);
  return { check: new JwtAccessTokenCheck(source, () => ISSUER), sign, claims, lookups: () => lookups };
}

test('a JWT access token of this issuer verifies; its key is imported once', async () => {
  const { check, sign, claims, lookups } = await setup();
  const token = await sign();
  assert.equal(isJwt(token), true);
  assert.deepEqual(await check.verify(token, Date.now()), { jti: claims.jti, aud: claims.aud });
  await check.verify(token, Date.now());
  assert.equal(lookups(), 1);
});

test('each of a bad signature, typ, iss, exp, a foreign key or a missing claim is refused', async () => {
  const { check, sign, claims } = await setup();
  const foreign = (await generateKeyPair('RS256')).privateKey;
  const good = await sign();
  const [h, p] = good.split('.');
  const bad: Record<string, string> = {
    'tampered payload': `${h}.${Buffer.from(JSON.stringify({ ...claims, scope: 'admin' })).toString('base64url')}.${good.split('.')[2]}`,
    'typ JWT': await sign(claims, { typ: 'JWT' }),
    'no typ': await sign(claims, { typ: undefined }),
    'other issuer': await sign({ ...claims, iss: 'https://evil.example' }),
    expired: await sign({ ...claims, exp: claims.iat - 1 }),
    'foreign key': await sign(claims, {}, foreign),
    'unknown kid': await sign(claims, { kid: 'nope' }),
    'no jti': await sign({ ...claims, jti: undefined }),
    'two audiences': await sign({ ...claims, aud: [claims.aud, `${ISSUER}/mcp`] }),
    none: `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${p}.`,
  };
  for (const [name, token] of Object.entries(bad)) assert.equal(await check.verify(token, Date.now()), null, name);
  assert.equal(isJwt('0123.abc'), false);
});
