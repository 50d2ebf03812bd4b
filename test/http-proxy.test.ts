// server.trustProxy: behind a TLS-terminating proxy, a request that did not arrive over HTTPS
// (X-Forwarded-Proto other than https) is refused with 403 JSON; /health stays reachable.
// Spawned server (test/helpers/server.ts), not in process: whether a request arrived over TLS is the point.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/server.js';
import { assertApiError } from './helpers/tokens.js';

let server: TestServer;
before(async () => {
  server = await startServer({ config: { server: { trustProxy: true } } });
});
after(async () => {
  await server?.cleanup();
});

test('X-Forwarded-Proto http (or missing) is 403 with the JSON error body', async () => {
  for (const headers of [{ 'x-forwarded-proto': 'http' }, {} as Record<string, string>]) {
    const res = await server.json('GET', '/v1', undefined, headers);
    assertApiError(res, 403, ['x-forwarded-proto']);
    assert.match(res.headers.get('strict-transport-security') ?? '', /max-age/);
  }
});

test('X-Forwarded-Proto https passes; /health answers whatever the protocol', async () => {
  assert.equal((await server.json('GET', '/v1', undefined, { 'x-forwarded-proto': 'https' })).status, 200);
  assert.equal((await server.json('GET', '/health', undefined, { 'x-forwarded-proto': 'http' })).status, 200);
});
