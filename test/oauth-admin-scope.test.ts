// The admin scope (DESIGN.md "Administration"): granted only to admin users, or to a client
// registered with --scope admin; taking the admin right away ends the grants that carry it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/server.js';
import { addClient, addUser, basic, introspect, post, type RegisteredClient } from './helpers/oauth.js';

const PASSWORD = 'a-good-password-1';
let server: TestServer;
let app: RegisteredClient;
let bot: RegisteredClient;
let plainBot: RegisteredClient;
let noAdminApp: RegisteredClient;

before(async () => {
  server = await startServer();
  const root = addUser(server, 'root', PASSWORD);
  assert.equal(root.admin, false);
  const made = server.cli(['user', 'add', 'boss', '--admin', '--password', PASSWORD]);
  assert.equal(made.status, 0, made.stderr);
  assert.equal(JSON.parse(made.stdout).admin, true);
  addUser(server, 'plain', PASSWORD);
  app = addClient(server, 'console-app', ['--grant', 'password', '--grant', 'client_credentials']);
  noAdminApp = addClient(server, 'zoo-app', ['--grant', 'password', '--scope', 'zoos:read']);
  bot = addClient(server, 'ops-bot', ['--grant', 'client_credentials', '--scope', 'admin zoos:read']);
  plainBot = addClient(server, 'plain-bot', ['--grant', 'client_credentials']);
});
after(async () => server?.cleanup());

const password = (client: RegisteredClient, username: string, scope?: string) =>
  post(server, 'token', { grant_type: 'password', username, password: PASSWORD, ...(scope ? { scope } : {}) }, { auth: basic(client.client_id, client.client_secret!) });
const credentials = (client: RegisteredClient, scope?: string) =>
  post(server, 'token', { grant_type: 'client_credentials', ...(scope ? { scope } : {}) }, { auth: basic(client.client_id, client.client_secret!) });

test('an admin user gets the admin scope when asking for it; never by default', async () => {
  const asked = await password(app, 'boss', 'admin zoos:read');
  assert.equal(asked.status, 200, JSON.stringify(asked.body));
  assert.equal(asked.body.scope, 'zoos:read admin');
  const byDefault = await password(app, 'boss');
  assert.equal(byDefault.status, 200);
  assert.ok(!byDefault.body.scope.split(' ').includes('admin'), byDefault.body.scope);
});

test('anyone else asking for admin gets invalid_scope', async () => {
  for (const r of [await password(app, 'plain', 'admin'), await password(app, 'root', 'admin zoos:read'), await password(noAdminApp, 'boss', 'admin')]) {
    assert.equal(r.status, 400);
    assert.equal(r.body.error, 'invalid_scope');
    assert.ok('scope' in r.body.detail);
  }
});

test('client_credentials: only a client registered with --scope admin gets it', async () => {
  const ok = await credentials(bot, 'admin');
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.scope, 'admin');
  assert.equal((await credentials(bot)).body.scope, 'zoos:read admin', 'its registered scope, admin included');
  const refused = await credentials(plainBot, 'admin');
  assert.equal(refused.status, 400);
  assert.equal(refused.body.error, 'invalid_scope');
  assert.ok(!(await credentials(plainBot)).body.scope.split(' ').includes('admin'));
});

test('user admin off: the grants that carry admin end at once; the others stay', async () => {
  const admin = await password(app, 'boss', 'admin');
  const zoos = await password(app, 'boss', 'zoos:read');
  assert.equal((await introspect(server, admin.body.access_token, app)).active, true);
  const off = server.cli(['user', 'admin', 'boss', 'off']);
  assert.equal(off.status, 0, off.stderr);
  assert.equal(JSON.parse(off.stdout).admin, false);
  assert.equal((await introspect(server, admin.body.access_token, app)).active, false);
  assert.equal((await introspect(server, zoos.body.access_token, app)).active, true);
  assert.equal((await password(app, 'boss', 'admin')).body.error, 'invalid_scope');
  assert.equal(server.cli(['user', 'admin', 'boss', 'on']).status, 0);
  assert.equal((await password(app, 'boss', 'admin')).status, 200);
  assert.equal(server.cli(['user', 'admin', 'nobody', 'on']).status, 1);
  assert.equal(server.cli(['user', 'admin', 'boss', 'maybe']).status, 1);
});
