// docs/deployment.md#what-is-shared-where: two interchangeable instances on one PostgreSQL database and one Redis.
// Tokens, revocations, quotas, maintenance and MAC nonces hold across both (sessions, codes and
// login throttling: test/oauth-scale-out.test.ts).
// Spawned server (test/helpers/server.ts), not in process: two instances on PostgreSQL and Redis.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createPgDatabase, pgAvailable, redisAvailable, startServer, TEST_REDIS_URL, type TestServer } from './helpers/server.js';
import { registerClient, requestToken, secretOf } from './helpers/tokens.js';
import { basic } from './helpers/oauth.js';
import { Redis } from 'ioredis';

const available = pgAvailable && redisAvailable;
let a: TestServer;
let b: TestServer;
let database: { url: string; drop(): Promise<void> } | null = null;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

before(async () => {
  if (!available) return;
  database = await createPgDatabase();
  const env = { DATABASE_URL: database.url, REDIS_URL: TEST_REDIS_URL };
  // A fresh Redis namespace per run would need a config knob; quotas are keyed by token, so unique tokens keep runs apart.
  const config = { api: { rateLimit: { max: 12, window: 60 } } };
  a = await startServer({ env, config });
  b = await startServer({ env, config });
});

after(async () => {
  await Promise.all([a?.cleanup(), b?.cleanup()]);
  await database?.drop();
});

test('a token from one instance works on the other; records are shared', { skip: !available && 'PostgreSQL or Redis not reachable' }, async () => {
  registerClient(a, 'scale-app');
  const { body } = await requestToken(b, 'scale-app', 'zoos:read zoos:write');
  const created = await a.json('POST', '/v1/zoos', { name: 'Shared' }, bearer(body.access_token));
  assert.equal(created.status, 201, created.text);
  const read = await b.json('GET', `/v1/zoos/${created.body.id}`, undefined, bearer(body.access_token));
  assert.equal(read.status, 200);
  assert.equal(read.body.name, 'Shared');
  assert.equal(read.headers.get('etag'), created.headers.get('etag'));
});

test('a revocation on one instance is honoured by the other within one second', { skip: !available && 'PostgreSQL or Redis not reachable' }, async () => {
  registerClient(a, 'scale-app');
  const { body } = await requestToken(a, 'scale-app', 'zoos:read');
  assert.equal((await b.json('GET', '/v1/zoos', undefined, bearer(body.access_token))).status, 200);
  const revoked = await a.fetch('/oauth/revocation', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('scale-app', secretOf('scale-app')) },
    body: `token=${encodeURIComponent(body.access_token)}`,
  });
  assert.equal(revoked.status, 200);
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal((await b.json('GET', '/v1/zoos', undefined, bearer(body.access_token))).status, 401);
});

test('with Redis, a revocation on one instance empties the other instance’s cache at once', { skip: !available && 'PostgreSQL or Redis not reachable' }, async () => {
  registerClient(a, 'scale-app');
  // The other instance cached its check at `warmed`; without a notice it would keep answering
  // 200 for up to 500 ms. A round that took longer than that proves nothing and is repeated.
  for (let round = 0; round < 5; round++) {
    const { body } = await requestToken(a, 'scale-app', 'zoos:read');
    assert.equal((await b.json('GET', '/v1/zoos', undefined, bearer(body.access_token))).status, 200);
    const warmed = Date.now();
    const revoked = await a.fetch('/oauth/revocation', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('scale-app', secretOf('scale-app')) },
      body: `token=${encodeURIComponent(body.access_token)}`,
    });
    assert.equal(revoked.status, 200);
    await new Promise((r) => setTimeout(r, 50)); // the notice travels through Redis
    const after = await b.json('GET', '/v1/zoos', undefined, bearer(body.access_token));
    if (Date.now() - warmed >= 450) continue;
    assert.equal(after.status, 401, 'refused while the cached check was still fresh: the notice emptied the cache');
    return;
  }
  assert.fail('every round took longer than the cache interval; the machine is too slow to tell');
});

test('the request quota is counted across instances (Redis)', { skip: !available && 'PostgreSQL or Redis not reachable' }, async () => {
  registerClient(a, 'scale-app');
  const { body } = await requestToken(a, 'scale-app', 'zoos:read');
  const statuses: number[] = [];
  for (let i = 0; i < 14; i++) statuses.push((await (i % 2 ? a : b).json('GET', '/v1/zoos', undefined, bearer(body.access_token))).status);
  assert.deepEqual(statuses.slice(0, 12), Array(12).fill(200));
  assert.deepEqual(statuses.slice(12), [429, 429]);
  const limited = await a.json('GET', '/v1/zoos', undefined, bearer(body.access_token));
  assert.equal(limited.status, 429);
  assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  assert.equal(limited.headers.get('ratelimit-limit'), '12');
  assert.equal(limited.headers.get('ratelimit-remaining'), '0');
  assert.equal(typeof limited.body.error, 'string');
});

test('maintenance mode switched through one instance answers 503 on both, /health stays up', { skip: !available && 'PostgreSQL or Redis not reachable' }, async () => {
  registerClient(a, 'scale-app');
  const { body } = await requestToken(a, 'scale-app', 'zoos:read');
  assert.equal(a.cli(['maintenance', 'on']).status, 0);
  try {
    await new Promise((r) => setTimeout(r, 1500));
    for (const s of [a, b]) {
      const res = await s.json('GET', '/v1/zoos', undefined, bearer(body.access_token));
      assert.equal(res.status, 503);
      assert.ok(Number(res.headers.get('retry-after')) > 0);
      const health = await s.json('GET', '/health');
      assert.equal(health.status, 200);
      assert.equal(health.body.maintenance, true);
    }
  } finally {
    assert.equal(a.cli(['maintenance', 'off']).status, 0);
  }
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal((await b.json('GET', '/v1/zoos', undefined, bearer(body.access_token))).status, 200);
});

test('a MAC nonce used on one instance is a replay on the other', { skip: !available && 'PostgreSQL or Redis not reachable' }, async () => {
  registerClient(a, 'scale-mac', { tokenType: 'mac' });
  const { body } = await requestToken(a, 'scale-mac', 'zoos:read');
  const header = (server: TestServer) => {
    const url = new URL(server.url);
    const nonce = '0:shared-nonce';
    const text = [nonce, 'GET', '/v1/zoos', url.hostname, url.port, '', ''].join('\n') + '\n';
    const mac = createHmac('sha256', body.mac_key).update(text).digest('base64');
    return { authorization: `MAC id="${body.access_token}", nonce="${nonce}", mac="${mac}"` };
  };
  assert.equal((await a.json('GET', '/v1/zoos', undefined, header(a))).status, 200);
  const replay = await b.json('GET', '/v1/zoos', undefined, header(b));
  // b listens on another port, so its MAC differs; the nonce alone is what is replayed.
  assert.equal(replay.status, 401);
  assert.match(replay.headers.get('www-authenticate')!, /replayed nonce/);
});

test('client remove through the CLI: the removal is announced on Redis and both instances refuse its tokens', { skip: !available && 'PostgreSQL or Redis not reachable' }, async () => {
  registerClient(a, 'scale-removed');
  const { body } = await requestToken(a, 'scale-removed', 'zoos:read');
  for (const s of [a, b]) assert.equal((await s.json('GET', '/v1/zoos', undefined, bearer(body.access_token))).status, 200);
  const listener = new Redis(TEST_REDIS_URL);
  try {
    const notices: string[] = [];
    await listener.subscribe('gatehouse:revocations');
    listener.on('message', (_channel, message) => notices.push(message));
    const removed = a.cli(['client', 'remove', 'scale-removed']);
    assert.equal(removed.status, 0, removed.stderr);
    assert.equal(JSON.parse(removed.stdout).access_tokens_revoked, 1);
    const deadline = Date.now() + 1000;
    while (notices.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(notices.length, 1, 'the CLI announced the removal to every instance');
  } finally {
    listener.disconnect();
  }
  for (const s of [a, b]) {
    const res = await s.json('GET', '/v1/zoos', undefined, bearer(body.access_token));
    assert.equal(res.status, 401, 'the removed client’s token is refused');
    assert.match(res.headers.get('www-authenticate')!, /invalid_token/);
  }
  const again = await requestToken(b, 'scale-removed', 'zoos:read');
  assert.equal(again.status, 401, 'its secret no longer gets tokens');
  assert.equal(again.body.error, 'invalid_client');
});

test('a grant revoked through the admin API on one instance: its token is 401 on both within a second', { skip: !available && 'PostgreSQL or Redis not reachable' }, async () => {
  const ops = a.cli(['client', 'add', 'scale-ops', '--grant', 'client_credentials', '--scope', 'admin']);
  assert.equal(ops.status, 0, ops.stderr);
  const opsSecret = JSON.parse(ops.stdout).client_secret as string;
  const app = a.cli(['client', 'add', 'scale-user-app', '--grant', 'password', '--scope', 'zoos:read']);
  assert.equal(app.status, 0, app.stderr);
  const appSecret = JSON.parse(app.stdout).client_secret as string;
  assert.equal(a.cli(['user', 'add', 'scale-alice', '--password', 'scale-password-1']).status, 0);
  const form = (server: TestServer, auth: string, fields: Record<string, string>) =>
    server.fetch('/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth }, body: new URLSearchParams(fields).toString() }).then((r) => r.json() as Promise<any>);
  const admin = await form(a, basic('scale-ops', opsSecret), { grant_type: 'client_credentials', scope: 'admin' });
  const user = await form(b, basic('scale-user-app', appSecret), { grant_type: 'password', username: 'scale-alice', password: 'scale-password-1' });
  for (const s of [a, b]) assert.equal((await s.json('GET', '/v1/zoos', undefined, bearer(user.access_token))).status, 200, 'both instances have it cached');
  const grants = await b.json('GET', '/admin/v1/grants?user=scale-alice', undefined, bearer(admin.access_token));
  assert.equal(grants.status, 200, grants.text);
  assert.equal(grants.body.length, 1);
  const started = Date.now();
  assert.equal((await a.json('DELETE', `/admin/v1/grants/${grants.body[0].id}`, undefined, bearer(admin.access_token))).status, 204);
  for (const s of [a, b]) {
    let status = 0;
    while (Date.now() - started < 1000 && (status = (await s.json('GET', '/v1/zoos', undefined, bearer(user.access_token))).status) !== 401) await new Promise((r) => setTimeout(r, 50));
    assert.equal(status, 401, `401 within a second on ${s === a ? 'A' : 'B'}`);
  }
});
