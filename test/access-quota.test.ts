// api.rateLimit: a quota per access token, and per IP for requests without a valid token, so a
// flood of bad tokens is limited too. 429 with Retry-After, RateLimit-* headers and the JSON body.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { apiClient, assertApiError } from './helpers/tokens.js';

let server: InProcessApp;
before(async () => {
  server = await startApp({ config: { api: { rateLimit: { max: 5, window: 60 } } } });
});
after(async () => {
  await server?.cleanup();
});

test('each access token has its own quota; past it: 429 with Retry-After and RateLimit-* headers', async () => {
  const a = await apiClient(server, 'quota-a', 'zoos:read');
  const b = await apiClient(server, 'quota-b', 'zoos:read');
  for (let i = 0; i < 5; i++) {
    const res = await a.json('GET', '/v1/zoos');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('ratelimit-limit'), '5');
    assert.equal(res.headers.get('ratelimit-remaining'), String(4 - i));
  }
  // From a page of an origin the token's client does not list, the 429 stays unreadable (CORS: docs/oauth.md).
  const limited = await a.json('GET', '/v1/zoos', undefined, { origin: 'https://page.example' });
  assertApiError(limited, 429);
  assert.equal(limited.headers.get('access-control-allow-origin'), null);
  assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  assert.equal(limited.headers.get('ratelimit-remaining'), '0');
  assert.ok(Number(limited.headers.get('ratelimit-reset')) >= 1);
  // Another token is counted apart; the public routes are not counted at all.
  assert.equal((await b.json('GET', '/v1/zoos')).status, 200);
  assert.equal((await server.json('GET', '/health')).status, 200);
  assert.equal((await server.json('GET', '/v1/openapi.json')).status, 200);
});

test('requests without a valid token are counted per IP: a flood of bad tokens gets 429 too', async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 7; i++) statuses.push((await server.json('GET', '/v1/zoos', undefined, { authorization: `Bearer bad-token-${i}` })).status);
  assert.deepEqual(statuses.slice(0, 5), [401, 401, 401, 401, 401]);
  assert.deepEqual(statuses.slice(5), [429, 429]);
  // Before authentication the 429 names no one: any page may read it and when to try again.
  const anonymous = await server.json('GET', '/v1/zoos', undefined, { origin: 'https://page.example' });
  assertApiError(anonymous, 429);
  assert.equal(anonymous.headers.get('access-control-allow-origin'), '*');
  assert.match(anonymous.headers.get('access-control-expose-headers') ?? '', /\bRetry-After\b/);
  assert.equal(anonymous.headers.get('access-control-allow-credentials'), null);
});
