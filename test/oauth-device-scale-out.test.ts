// The device authorization grant on two instances over one PostgreSQL and one Redis: the poll
// bookkeeping is the row's (a poll on A then one on B is slow_down), the user types the code and
// decides on A, and the device redeems on B, once. Skipped when PostgreSQL or Redis is absent
// (not under CI=true). Spawned server (test/helpers/server.ts), not in process: two instances.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { TEST_REDIS_URL, createPgDatabase, pgAvailable, redisAvailable, startServer, type TestServer } from './helpers/server.js';
import { CookieJar, addClient, addUser, introspect, post, type RegisteredClient } from './helpers/oauth.js';
import { deviceConsent, deviceDecide } from './helpers/device.js';

const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
const skip = !(pgAvailable && redisAvailable) && 'needs PostgreSQL and Redis';
let a: TestServer;
let b: TestServer;
let rs: RegisteredClient;
let database: { url: string; drop(): Promise<void> };

before(async () => {
  if (skip) return;
  database = await createPgDatabase();
  const env = { DATABASE_URL: database.url, REDIS_URL: TEST_REDIS_URL };
  a = await startServer({ env });
  b = await startServer({ env });
  addUser(a, 'gus', 'gus-password-1');
  addClient(a, 'tv', ['--public', '--grant', DEVICE, '--name', 'Hall TV']);
  rs = addClient(a, 'rs', ['--grant', 'client_credentials', '--introspect']);
});
after(async () => {
  if (skip) return;
  await a?.cleanup();
  await b?.cleanup();
  await database?.drop();
});

test('approved on instance A, redeemed on instance B; the interval is kept in the row', { skip }, async () => {
  const started = await post(a, 'device_authorization', { client_id: 'tv', scope: 'zoos:read zoos:write' });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  const { device_code, user_code } = started.body;
  assert.equal((await post(a, 'token', { grant_type: DEVICE, device_code, client_id: 'tv' })).body.error, 'authorization_pending');
  assert.equal((await post(b, 'token', { grant_type: DEVICE, device_code, client_id: 'tv' })).body.error, 'slow_down', 'B knows A was just polled');

  // The code typed on A, the sign-in posted to B, the consent shown by A and decided on B.
  const jar = new CookieJar();
  const consent = await deviceConsent(a, jar, user_code, 'gus', 'gus-password-1', b);
  const done = await deviceDecide(b, jar, consent, { scope: ['zoos:read'] });
  assert.equal(done.status, 200, done.html);

  const tokens = await post(b, 'token', { grant_type: DEVICE, device_code, client_id: 'tv' });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  assert.equal(tokens.body.scope, 'zoos:read');
  assert.equal((await introspect(a, tokens.body.access_token, rs)).active, true);
  assert.equal((await post(a, 'token', { grant_type: DEVICE, device_code, client_id: 'tv' })).body.error, 'invalid_grant');
});
