// The operator's initial access tokens of dynamic client registration (docs/admin.md;
// auth.registration: token): the admin API (make, list, revoke; the token shown only in the
// answer that made it) and the console (status, CSRF, confirmation before a revoke, the token
// shown once), and registered clients marked in the console's client list.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { addClient, addUser, basic, CookieJar, hiddenField, page, post, unescapeHtml } from './helpers/oauth.js';
import { assertApiError } from './helpers/tokens.js';
import type { Json } from './helpers/server.js';
import { listRegistrationTokens } from '../src/authserver/model/registration.js';
import { updateClient } from '../src/authserver/model/clients.js';

let server: InProcessApp;
let adminToken: string;
let jar: CookieJar;
let csrf: string;

const call = (method: string, path: string, body?: unknown, token = adminToken) => server.json(method, `/admin/v1${path}`, body, token ? { authorization: `Bearer ${token}` } : {});
const registerWith = (token: string) => server.json('POST', '/oauth/register', { redirect_uris: ['https://rp.example/cb'], client_name: 'Self Made' }, { authorization: `Bearer ${token}` });

before(async () => {
  server = await startApp({ config: { auth: { registration: 'token' } }, logLevel: 'info' });
  const bot = await addClient(server, 'ops-bot', ['--grant', 'client_credentials', '--scope', 'admin']);
  const t = await post(server, 'token', { grant_type: 'client_credentials', scope: 'admin' }, { auth: basic(bot.client_id, bot.client_secret!) });
  adminToken = t.body.access_token;
  await addUser(server, 'root', 'root-password-1');
  assert.equal((await server.cli(['user', 'admin', 'root', 'on'])).status, 0);
  jar = new CookieJar();
  const front = await page(server, jar, '/admin');
  assert.equal((await page(server, jar, '/admin/signin', { csrf_token: hiddenField(front.html, 'csrf_token'), username: 'root', password: 'root-password-1' })).status, 303);
  csrf = hiddenField((await page(server, jar, '/admin/clients')).html, 'csrf_token');
});
after(async () => server?.cleanup());

test('API: make (201, Location, the token once), list (never the token), it registers a client, revoke 204 then 404', async () => {
  const made = await call('POST', '/registration-tokens', { ttl: 3600, uses: 2 });
  assert.equal(made.status, 201, made.text);
  assert.equal(made.headers.get('location'), `${server.url}/admin/v1/registration-tokens/${made.body.id}`);
  assert.deepEqual(Object.keys(made.body), ['id', 'created_by', 'created_at', 'expires_at', 'uses_left', 'token']);
  assert.equal(made.body.uses_left, 2);
  assert.equal(made.body.created_by, 'client:ops-bot');
  assert.ok(Math.abs(Date.parse(made.body.expires_at) - Date.parse(made.body.created_at) - 3_600_000) < 1000);
  assert.ok(server.output().includes('"event":"registration_token.created"'));
  assert.equal(server.output().includes(made.body.token), false, 'the token is never logged');

  const defaults = await call('POST', '/registration-tokens');
  assert.equal(defaults.status, 201, defaults.text);
  assert.equal(defaults.body.uses_left, 1);
  assert.ok(Math.abs(Date.parse(defaults.body.expires_at) - Date.parse(defaults.body.created_at) - 86_400_000) < 1000);

  assert.equal((await registerWith(made.body.token)).status, 201);
  const list = await call('GET', '/registration-tokens');
  assert.equal(list.status, 200);
  const listed = list.body.find((t: Json) => t.id === made.body.id);
  assert.equal(listed.uses_left, 1);
  assert.equal(listed.token, undefined);
  assert.equal(list.text.includes(made.body.token), false);

  assert.equal((await call('DELETE', `/registration-tokens/${made.body.id}`)).status, 204);
  assert.equal((await registerWith(made.body.token)).status, 401, 'a revoked token registers nothing');
  assertApiError(await call('DELETE', `/registration-tokens/${made.body.id}`), 404, ['id']);
  assert.ok(server.output().includes('"event":"registration_token.revoked"'));
});

test('API: bad values refused with nothing made; without the admin scope 401/403; other methods 405', async () => {
  const before = (await listRegistrationTokens(server.ctx)).length;
  assertApiError(await call('POST', '/registration-tokens', { ttl: 10 }), 400, ['ttl']);
  assertApiError(await call('POST', '/registration-tokens', { uses: 0 }), 400, ['uses']);
  assertApiError(await call('POST', '/registration-tokens', { uses: 'many' }), 400, ['uses']);
  assertApiError(await call('POST', '/registration-tokens', { secret: 'x' }), 400, ['secret']);
  assert.equal((await listRegistrationTokens(server.ctx)).length, before);
  assertApiError(await call('GET', '/registration-tokens', undefined, ''), 401);
  const put = await call('PUT', '/registration-tokens');
  assertApiError(put, 405);
  assert.equal(put.headers.get('allow'), 'GET, HEAD, POST');
});

test('console: make a token (201, shown once), list it, revoke after a confirmation; bad values are form errors', async () => {
  const listPage = await page(server, jar, '/admin/registration-tokens');
  assert.equal(listPage.status, 200);
  assert.match(listPage.html, /auth\.registration: token/);

  const bad = await page(server, jar, '/admin/registration-tokens', { csrf_token: csrf, ttl: 'soon', uses: '' });
  assert.equal(bad.status, 400);
  assert.match(bad.html, /must be a whole number/);

  const made = await page(server, jar, '/admin/registration-tokens', { csrf_token: csrf, ttl: '600', uses: '3' });
  assert.equal(made.status, 201, made.html);
  const token = unescapeHtml(/<code class="secret" id="registration-token">([^<]+)<\/code>/.exec(made.html)![1]);
  const id = token.slice(0, token.indexOf('.'));
  const again = await page(server, jar, '/admin/registration-tokens');
  assert.match(again.html, new RegExp(id));
  assert.equal(again.html.includes(token), false, 'the list never shows the token');

  const confirm = await page(server, jar, `/admin/registration-tokens/${id}/revoke`);
  assert.equal(confirm.status, 200);
  const revoked = await page(server, jar, `/admin/registration-tokens/${id}/revoke`, { csrf_token: hiddenField(confirm.html, 'csrf_token') });
  assert.equal(revoked.status, 303);
  assert.equal((await registerWith(token)).status, 401);
  assert.equal((await page(server, jar, `/admin/registration-tokens/${id}/revoke`, { csrf_token: csrf })).status, 404);
});

test('console: a POST without the form token is 403 and changes nothing', async () => {
  const before = (await listRegistrationTokens(server.ctx)).length;
  assert.equal((await page(server, jar, '/admin/registration-tokens', { ttl: '600' })).status, 403);
  const open = await call('POST', '/registration-tokens', {});
  assert.equal((await page(server, jar, `/admin/registration-tokens/${open.body.id}/revoke`, { csrf_token: 'forged' })).status, 403);
  assert.equal((await listRegistrationTokens(server.ctx)).length, before + 1, 'only the API made one; none revoked');
});

test('console: a registered client is marked "registered by itself, not verified" until the operator verifies it', async () => {
  const open = await call('POST', '/registration-tokens', {});
  const registered = await registerWith(open.body.token);
  assert.equal(registered.status, 201);
  const list = await page(server, jar, '/admin/clients');
  const row = list.html.split('<tr').find((r) => r.includes(registered.body.client_id))!;
  assert.match(row, /registered by itself, not verified/);
  assert.equal(list.html.split('<tr').find((r) => r.includes('ops-bot'))!.includes('registered by itself'), false);
  await updateClient(server.ctx, registered.body.client_id, { verified: true });
  const after = await page(server, jar, '/admin/clients');
  assert.match(after.html.split('<tr').find((r) => r.includes(registered.body.client_id))!, /registered by itself, verified/);
});
