// The authorization server on PostgreSQL without Redis: login counters in the database, codes,
// refresh rotation. Skipped when PostgreSQL is absent (not under CI=true).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createPgDatabase, pgAvailable, startServer, type TestServer } from './helpers/server.js';
import { addClient, addUser, basic, introspect, obtainCode, post, type RegisteredClient } from './helpers/oauth.js';

const skip = !pgAvailable && 'needs PostgreSQL';
let server: TestServer;
let database: { url: string; drop(): Promise<void> };
let app: RegisteredClient;
const CB = 'https://client.example/cb';

before(async () => {
  if (skip) return;
  database = await createPgDatabase();
  server = await startServer({ env: { DATABASE_URL: database.url }, config: { auth: { loginThrottle: { max: 2, window: 60 } } } });
  addUser(server, 'judy', 'judy-password-1');
  app = addClient(server, 'app', ['--grant', 'authorization_code', '--grant', 'password', '--grant', 'refresh_token', '--redirect-uri', CB]);
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

test('failed logins are counted in the database', { skip }, async () => {
  const auth = basic('app', app.client_secret!);
  for (const guess of ['x-1', 'x-2']) assert.equal((await post(server, 'token', { grant_type: 'password', username: 'judy', password: guess }, { auth })).status, 400);
  const blocked = await post(server, 'token', { grant_type: 'password', username: 'judy', password: 'judy-password-1' }, { auth });
  assert.equal(blocked.status, 429);
  assert.ok(Number(blocked.headers.get('retry-after')) >= 1);
});
