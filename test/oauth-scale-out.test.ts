// Two instances on one PostgreSQL + Redis: a browser session, a CSRF token and a code made on one
// instance work on the other; a code raced on both is redeemed exactly once; login throttling
// counts across instances (Redis). Skipped when PostgreSQL or Redis is absent (not under CI=true).
// Spawned server (test/helpers/server.ts), not in process: two instances on PostgreSQL and Redis.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { TEST_REDIS_URL, createPgDatabase, pgAvailable, redisAvailable, startServer, type TestServer } from './helpers/server.js';
import { CookieJar, addClient, addUser, authorizeUrl, basic, decide, hiddenField, introspect, obtainCode, page, post, redirectParams, type RegisteredClient } from './helpers/oauth.js';

const skip = !(pgAvailable && redisAvailable) && 'needs PostgreSQL and Redis';
let a: TestServer;
let b: TestServer;
let database: { url: string; drop(): Promise<void> };
let app: RegisteredClient;
const CB = 'https://client.example/cb';

before(async () => {
  if (skip) return;
  database = await createPgDatabase();
  const env = { DATABASE_URL: database.url, REDIS_URL: TEST_REDIS_URL };
  const config = { auth: { loginThrottle: { max: 2, window: 30 } } };
  a = await startServer({ env, config });
  b = await startServer({ env, config });
  addUser(a, 'henry', 'henry-password-1');
  addUser(a, 'ivy', 'ivy-password-1');
  app = addClient(a, 'app', ['--grant', 'authorization_code', '--grant', 'password', '--grant', 'refresh_token', '--redirect-uri', CB]);
  await clearThrottle();
});

// Throttle counters live in the shared test Redis: clear them before and after, so other test
// files using the same Redis from 127.0.0.1 are not throttled by this one.
async function clearThrottle() {
  const { Redis } = await import('ioredis');
  const redis = new Redis(TEST_REDIS_URL);
  await redis.del('login:user:ivy', 'login:ip:127.0.0.1', 'login:user:henry');
  await redis.quit();
}

after(async () => {
  if (skip) return;
  await clearThrottle();
  await a?.cleanup();
  await b?.cleanup();
  await database?.drop();
});

test('sign in on one instance, consent on the other, redeem the code on the first', { skip }, async () => {
  const jar = new CookieJar();
  const login = await page(a, jar, authorizeUrl({ response_type: 'code', client_id: 'app', redirect_uri: CB, state: 'x' }));
  const posted = await page(b, jar, '/oauth/authorize', { request: hiddenField(login.html, 'request'), csrf_token: hiddenField(login.html, 'csrf_token'), step: 'login', username: 'henry', password: 'henry-password-1' });
  assert.equal(posted.status, 303, posted.html);
  const consent = await page(a, jar, posted.location!);
  assert.match(consent.html, /Signed in as <strong>henry<\/strong>/);
  const done = await decide(b, jar, consent);
  const code = redirectParams(done.location!).get('code')!;
  const tokens = await post(a, 'token', { grant_type: 'authorization_code', code, redirect_uri: CB }, { auth: basic('app', app.client_secret!) });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  assert.equal((await introspect(b, tokens.body.access_token, app)).active, true);
});

test('a code raced on two instances is redeemed exactly once, and the winner loses its tokens', { skip }, async () => {
  const { code } = await obtainCode(a, { clientId: 'app', redirectUri: CB, username: 'henry', password: 'henry-password-1' });
  const auth = basic('app', app.client_secret!);
  const results = await Promise.all([a, b, a, b].map((s) => post(s, 'token', { grant_type: 'authorization_code', code, redirect_uri: CB }, { auth })));
  const wins = results.filter((r) => r.status === 200);
  assert.equal(wins.length, 1, JSON.stringify(results.map((r) => r.body)));
  for (const r of results.filter((x) => x.status !== 200)) assert.equal(r.body.error, 'invalid_grant');
  assert.equal((await introspect(a, wins[0].body.access_token, app)).active, false);
});

test('failed logins are counted across instances', { skip }, async () => {
  const auth = basic('app', app.client_secret!);
  assert.equal((await post(a, 'token', { grant_type: 'password', username: 'ivy', password: 'nope-1' }, { auth })).status, 400);
  assert.equal((await post(b, 'token', { grant_type: 'password', username: 'ivy', password: 'nope-2' }, { auth })).status, 400);
  const third = await post(a, 'token', { grant_type: 'password', username: 'ivy', password: 'ivy-password-1' }, { auth });
  assert.equal(third.status, 429);
  assert.ok(Number(third.headers.get('retry-after')) >= 1);
});
