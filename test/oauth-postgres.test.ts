// The authorization server on PostgreSQL without Redis: login counters in the database, codes,
// refresh rotation, one grant per user and app under racing consents. Skipped when PostgreSQL is absent (not under CI=true).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createPgDatabase, pgAvailable } from './helpers/server.js';
import { startApp, type InProcessApp } from './helpers/app.js';
import { CookieJar, addClient, addUser, authorizeUrl, basic, decide, introspect, obtainCode, post, redirectParams, signIn, sleep, type RegisteredClient } from './helpers/oauth.js';

const skip = !pgAvailable && 'needs PostgreSQL';
let server: InProcessApp;
let database: { url: string; drop(): Promise<void> };
let app: RegisteredClient;
const CB = 'https://client.example/cb';

before(async () => {
  if (skip) return;
  database = await createPgDatabase();
  server = await startApp({ database: database.url, config: { auth: { loginThrottle: { max: 2, window: 60 } } } });
  await addUser(server, 'judy', 'judy-password-1');
  app = await addClient(server, 'app', ['--grant', 'authorization_code', '--grant', 'password', '--grant', 'refresh_token', '--redirect-uri', CB]);
});
after(async () => {
  if (skip) return;
  await server?.cleanup();
  await database?.drop();
});

test('code, refresh rotation and reuse detection on PostgreSQL', { skip }, async () => {
  const auth = basic('app', app.client_secret!);
  const { code } = await obtainCode(server, { clientId: 'app', redirectUri: CB, username: 'judy', password: 'judy-password-1', decision: { scope: ['zoos:read'] } });
  const tokens = await post(server, 'token', { grant_type: 'authorization_code', code, redirect_uri: CB }, { auth });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  assert.equal(tokens.body.scope, 'zoos:read');
  const next = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token }, { auth });
  assert.equal(next.status, 200);
  const reuse = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token }, { auth });
  assert.equal(reuse.body.error, 'invalid_grant');
  assert.equal((await introspect(server, next.body.access_token, app)).active, false);
});

test('one grant per user and app on PostgreSQL: racing consents and password sign-ins leave one grant; a narrower consent ends wider tokens', { skip }, async () => {
  const auth = basic('app', app.client_secret!);
  const jar = new CookieJar();
  const url = (scope: string) => authorizeUrl({ response_type: 'code', client_id: 'app', redirect_uri: CB, scope, state: 's' });
  const redeem = async (code: string) => {
    const r = await post(server, 'token', { grant_type: 'authorization_code', code, redirect_uri: CB }, { auth });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body;
  };
  const grants = async () => JSON.parse((await server.cli(['grant', 'list', '--json', '--client', 'app'])).stdout) as { id: string; scope: string; subject: string }[];
  // One sign-in, then five tabs (the login throttle of this server allows 2 failures).
  const kate = await addUser(server, 'kate', 'kate-password-1');
  await signIn(server, jar, url('zoos:read'), 'kate', 'kate-password-1');
  const tabs = await Promise.all([0, 1, 2, 3, 4].map(() => signIn(server, jar, url('zoos:read zoos:write'), 'kate', 'kate-password-1')));
  const codes = await Promise.all(tabs.map(async (tab) => redirectParams((await decide(server, jar, tab)).location!).get('code')!));
  const [signedIn, ...issued] = await Promise.all([
    post(server, 'token', { grant_type: 'password', username: 'kate', password: 'kate-password-1', scope: 'zoos:read zoos:write' }, { auth }),
    ...codes.map(redeem),
  ]);
  assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
  const [only, ...more] = (await grants()).filter((g) => g.subject === kate.subject);
  assert.equal(more.length, 0, 'one grant');
  for (const t of issued) assert.equal((await introspect(server, t.access_token, app)).active, true);
  const narrow = await redeem(redirectParams((await decide(server, jar, await signIn(server, jar, url('zoos:read'), 'kate', 'kate-password-1'))).location!).get('code')!);
  assert.deepEqual((await grants()).filter((g) => g.subject === kate.subject).map((g) => [g.id, g.scope]), [[only.id, 'zoos:read']]);
  await sleep(1100);
  for (const t of issued) assert.equal((await introspect(server, t.access_token, app)).active, false);
  assert.equal((await introspect(server, narrow.access_token, app)).active, true);
});

test('failed logins are counted in the database', { skip }, async () => {
  const auth = basic('app', app.client_secret!);
  for (const guess of ['x-1', 'x-2']) assert.equal((await post(server, 'token', { grant_type: 'password', username: 'judy', password: guess }, { auth })).status, 400);
  const blocked = await post(server, 'token', { grant_type: 'password', username: 'judy', password: 'judy-password-1' }, { auth });
  assert.equal(blocked.status, 429);
  assert.ok(Number(blocked.headers.get('retry-after')) >= 1);
});
