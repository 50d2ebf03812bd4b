// The admin API ({base_url}/admin/v1, docs/admin.md#the-admin-api): the JSON conventions of docs/api.md, the
// admin scope, and the same rules as the CLI for clients, users, grants and maintenance.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { type Json } from './helpers/server.js';
import { startApp, type InProcessApp } from './helpers/app.js';
import { addClient, addUser, basic, post, sleep, type RegisteredClient } from './helpers/oauth.js';
import { assertApiError } from './helpers/tokens.js';
import { Secret, TOTP } from 'otpauth';
import { confirmTotp, listSecondFactors, startTotpEnrolment } from '../src/authserver/model/factors.js';
import { findUserByUsername } from '../src/authserver/model/users.js';

const PASSWORD = 'a-good-password-1';
let server: InProcessApp;
let bot: RegisteredClient;
let app: RegisteredClient;
let adminToken: string;

const call = (method: string, path: string, body?: unknown, token = adminToken) =>
  server.json(method, `/admin/v1${path}`, body, token ? { authorization: `Bearer ${token}` } : {});

before(async () => {
  server = await startApp();
  bot = await addClient(server, 'ops-bot', ['--grant', 'client_credentials', '--scope', 'admin']);
  app = await addClient(server, 'an-app', ['--grant', 'password', '--grant', 'client_credentials', '--scope', 'zoos:read zoos:write']);
  await addUser(server, 'alice', PASSWORD);
  const t = await post(server, 'token', { grant_type: 'client_credentials', scope: 'admin' }, { auth: basic(bot.client_id, bot.client_secret!) });
  assert.equal(t.status, 200, JSON.stringify(t.body));
  adminToken = t.body.access_token;
});
after(async () => server?.cleanup());

test('no token: 401 with a Bearer challenge; a token without admin: 403; unknown path 404; wrong method 405 + Allow', async () => {
  const none = await call('GET', '/clients', undefined, '');
  assertApiError(none, 401);
  assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer /);
  const zoos = await post(server, 'token', { grant_type: 'client_credentials' }, { auth: basic(app.client_id, app.client_secret!) });
  assertApiError(await call('GET', '/clients', undefined, zoos.body.access_token), 403, ['scope']);
  assertApiError(await call('GET', '/nothing-here'), 404);
  const put = await call('PUT', '/clients');
  assertApiError(put, 405);
  assert.equal(put.headers.get('allow'), 'GET, HEAD, POST');
});

test('clients: create (secret once, stored hashed), read, list, change under the CLI rules, rotate, delete', async () => {
  const made = await call('POST', '/clients', { client_id: 'shop', name: 'The Shop', redirect_uris: ['https://shop.example/cb'], grant_types: ['authorization_code', 'refresh_token'], scope: 'orders:read orders:write' });
  assert.equal(made.status, 201, made.text);
  assert.equal(made.headers.get('location'), `${server.url}/admin/v1/clients/shop`);
  assert.match(made.body.client_secret, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(made.body.scope, 'orders:read orders:write');
  const got = await call('GET', '/clients/shop');
  assert.equal(got.status, 200);
  assert.equal(got.body.client_secret, undefined, 'never shown again');
  const list = await call('GET', '/clients');
  assert.ok(list.body.some((c: Json) => c.client_id === 'shop'));
  assert.ok(!list.text.includes(made.body.client_secret));
  assert.ok(!list.text.includes(createHash('sha256').update(made.body.client_secret).digest('base64url')));

  assertApiError(await call('POST', '/clients', { client_id: 'shop', grant_types: ['password'] }), 409);
  assertApiError(await call('POST', '/clients', { client_id: 'x1', grant_types: ['implicit'], redirect_uris: ['http://evil.example/cb'] }), 400, ['redirect_uris']);
  assertApiError(await call('POST', '/clients', { client_id: 'x2', grant_types: ['client_credentials'], client_secret: 'too-short' }), 400, ['client_secret']);
  assertApiError(await call('POST', '/clients', { client_id: 'x3', grant_types: 'password' }), 400, ['grant_types']);
  assertApiError(await call('POST', '/clients', { client_id: 'x4', grant_types: ['password'], colour: 'red' }), 400, ['colour']);
  assertApiError(await call('POST', '/clients', { grant_types: ['password'] }), 400, ['client_id']);
  assertApiError(await call('POST', '/clients', [1, 2]), 400);

  const renamed = await call('PATCH', '/clients/shop', { name: 'Shop 2', redirect_uris: ['https://shop.example/cb2'] });
  assert.equal(renamed.status, 200, renamed.text);
  assert.equal(renamed.body.name, 'Shop 2');
  assert.deepEqual(renamed.body.redirect_uris, ['https://shop.example/cb2']);
  assertApiError(await call('PATCH', '/clients/shop', { redirect_uris: [] }), 400, ['redirect_uris']);
  assert.equal((await call('GET', '/clients/shop')).body.name, 'Shop 2', 'a refused change changes nothing');
  assertApiError(await call('PATCH', '/clients/nobody', { name: 'x' }), 404);

  const rotated = await call('POST', '/clients/shop/secret');
  assert.equal(rotated.status, 200, rotated.text);
  assert.notEqual(rotated.body.client_secret, made.body.client_secret);
  const pub = await call('POST', '/clients', { client_id: 'mobile', public: true, grant_types: ['authorization_code'], redirect_uris: ['com.example.app:/cb'] });
  assert.equal(pub.status, 201, pub.text);
  assert.equal(pub.body.client_secret, undefined);
  assertApiError(await call('POST', '/clients/mobile/secret'), 400, ['client_secret']);

  assert.equal((await call('DELETE', '/clients/shop')).status, 204);
  assertApiError(await call('GET', '/clients/shop'), 404);
  assertApiError(await call('DELETE', '/clients/shop'), 404);
});

test('clients: "introspect" (a resource server) and "require_pkce" are created, read, listed and changed; a public client cannot introspect', async () => {
  const made = await call('POST', '/clients', { client_id: 'rs-api', grant_types: ['client_credentials'], introspect: true });
  assert.equal(made.status, 201, made.text);
  assert.equal(made.body.introspect, true);
  assert.equal(made.body.require_pkce, false);
  assert.equal((await call('GET', '/clients/rs-api')).body.introspect, true);
  assert.equal((await call('GET', '/clients')).body.find((c: Json) => c.client_id === 'rs-api').introspect, true);
  const changed = await call('PATCH', '/clients/rs-api', { introspect: false, require_pkce: true });
  assert.equal(changed.status, 200, changed.text);
  assert.equal(changed.body.introspect, false);
  assert.equal(changed.body.require_pkce, true);
  const got = (await call('GET', '/clients/rs-api')).body;
  assert.equal(got.introspect, false);
  assert.equal(got.require_pkce, true);
  assertApiError(await call('PATCH', '/clients/rs-api', { introspect: 'yes' }), 400, ['introspect']);
  assertApiError(await call('POST', '/clients', { client_id: 'rs-pub', public: true, grant_types: ['password'], introspect: true }), 400, ['introspect']);
  assert.equal((await call('DELETE', '/clients/rs-api')).status, 204);

  // OpenID Connect registration: logout addresses (the redirect URI rules) and the ID token algorithm.
  const rp = await call('POST', '/clients', {
    client_id: 'rp-api', grant_types: ['authorization_code'], redirect_uris: ['https://rp.example/cb'],
    post_logout_redirect_uris: ['https://rp.example/bye'], id_token_signed_response_alg: 'ES256',
  });
  assert.equal(rp.status, 201, rp.text);
  assert.deepEqual([rp.body.post_logout_redirect_uris, rp.body.id_token_signed_response_alg], [['https://rp.example/bye'], 'ES256']);
  assertApiError(await call('PATCH', '/clients/rp-api', { id_token_signed_response_alg: 'HS256' }), 400, ['id_token_signed_response_alg']);
  assertApiError(await call('PATCH', '/clients/rp-api', { post_logout_redirect_uris: ['javascript:alert(1)'] }), 400, ['post_logout_redirect_uris']);
  assert.equal((await call('PATCH', '/clients/rp-api', { id_token_signed_response_alg: 'RS256' })).body.id_token_signed_response_alg, 'RS256');
  assert.equal((await call('DELETE', '/clients/rp-api')).status, 204);
});

test('a user who lost their second factors: DELETE /users/{user}/factors removes them and their recovery codes (the CLI\'s user reset-factors)', async () => {
  assert.equal((await call('POST', '/users', { username: 'lost', password: PASSWORD })).status, 201);
  const user = (await findUserByUsername(server.ctx, 'lost'))!;
  const enrolment = startTotpEnrolment(server.ctx, user);
  await confirmTotp(server.ctx, user, enrolment.sealed, TOTP.generate({ secret: Secret.fromBase32(enrolment.secret) }), null);
  assert.equal((await listSecondFactors(server.ctx, user)).length, 1);
  const reset = await call('DELETE', '/users/lost/factors');
  assert.equal(reset.status, 200, reset.text);
  assert.deepEqual([reset.body.username, reset.body.factors_removed], ['lost', 1]);
  assert.equal((await listSecondFactors(server.ctx, user)).length, 0);
  const login = await post(server, 'token', { grant_type: 'password', username: 'lost', password: PASSWORD }, { auth: basic(app.client_id, app.client_secret!) });
  assert.equal(login.status, 200, 'the password alone signs in again');
  assertApiError(await call('DELETE', '/users/nobody/factors'), 404);
  assert.equal((await call('DELETE', '/users/lost')).status, 204);
});

test('users: create, read by username or id, change password and admin flag, delete', async () => {
  const made = await call('POST', '/users', { username: 'bob', password: PASSWORD });
  assert.equal(made.status, 201, made.text);
  assert.deepEqual(Object.keys(made.body).sort(), ['admin', 'created_at', 'email', 'email_verified', 'id', 'name', 'subject', 'username']);
  assert.equal(made.headers.get('location'), `${server.url}/admin/v1/users/${made.body.id}`);
  assert.equal((await call('GET', '/users/bob')).body.id, made.body.id);
  assert.equal((await call('GET', `/users/${made.body.id}`)).body.username, 'bob');
  assertApiError(await call('POST', '/users', { username: 'bob', password: PASSWORD }), 409);
  assertApiError(await call('POST', '/users', { username: 'carol', password: 'short' }), 400, ['password']);
  assertApiError(await call('POST', '/users', { username: 'bad name', password: PASSWORD }), 400, ['username']);
  assertApiError(await call('POST', '/users', { password: PASSWORD }), 400, ['username']);

  const login = (password: string) =>
    post(server, 'token', { grant_type: 'password', username: 'bob', password }, { auth: basic(app.client_id, app.client_secret!) });
  assertApiError(await call('PATCH', '/users/bob', { password: 'short' }), 400, ['password']);
  assert.equal((await login(PASSWORD)).status, 200, 'a refused password changes nothing');
  const changed = await call('PATCH', '/users/bob', { password: 'another-password-2', admin: true });
  assert.equal(changed.status, 200, changed.text);
  assert.equal(changed.body.admin, true);
  assert.equal((await login(PASSWORD)).status, 400);
  assert.equal((await login('another-password-2')).status, 200);

  // Profile (OpenID Connect claims): a bad address changes nothing, the rest is taken at once.
  assertApiError(await call('PATCH', '/users/bob', { email: 'nope', password: 'a-third-password-3' }), 400, ['email']);
  assert.equal((await login('another-password-2')).status, 200, 'the refused PATCH changed no password');
  const profiled = await call('PATCH', '/users/bob', { email: 'bob@example.org', email_verified: true, name: 'Bob Brown' });
  assert.equal(profiled.status, 200, profiled.text);
  assert.deepEqual([profiled.body.email, profiled.body.email_verified, profiled.body.name], ['bob@example.org', true, 'Bob Brown']);
  const moved = await call('PATCH', '/users/bob', { email: 'robert@example.org' });
  assert.equal(moved.body.email_verified, false, 'a new address is unverified unless said otherwise');
  assert.equal((await call('PATCH', '/users/bob', { email: null, name: null })).body.name, null);
  const withProfile = await call('POST', '/users', { username: 'dora', password: PASSWORD, email: 'dora@example.org', name: 'Dora' });
  assert.equal(withProfile.body.email, 'dora@example.org');
  assert.equal((await call('DELETE', '/users/dora')).status, 204);

  assert.equal((await call('DELETE', '/users/bob')).status, 204);
  assertApiError(await call('GET', '/users/bob'), 404);
  assert.ok(!(await call('GET', '/users')).body.some((u: Json) => u.username === 'bob'));
});

test('grants: listed by user and client; DELETE revokes the grant and its tokens', async () => {
  const t = await post(server, 'token', { grant_type: 'password', username: 'alice', password: PASSWORD, scope: 'zoos:read' }, { auth: basic(app.client_id, app.client_secret!) });
  assert.equal(t.status, 200, JSON.stringify(t.body));
  const zoos = () => server.json('GET', '/v1/zoos', undefined, { authorization: `Bearer ${t.body.access_token}` });
  assert.equal((await zoos()).status, 200);
  const mine = await call('GET', '/grants?user=alice');
  assert.equal(mine.status, 200, mine.text);
  assert.equal(mine.body.length, 1);
  const g = mine.body[0];
  assert.deepEqual(Object.keys(g).sort(), ['client_id', 'created_at', 'expires_at', 'id', 'last_used_at', 'scope', 'subject']);
  assert.equal(g.client_id, 'an-app');
  assert.equal(g.scope, 'zoos:read');
  assert.ok(g.last_used_at);
  assert.equal((await call('GET', '/grants?client=an-app')).body.length, 1);
  assert.equal((await call('GET', '/grants?client=ops-bot')).body.length, 0, 'client_credentials tokens have no grant');
  assertApiError(await call('GET', '/grants?user=nobody'), 400, ['user']);
  assertApiError(await call('GET', '/grants?colour=red'), 400, ['colour']);

  assert.equal((await call('DELETE', `/grants/${g.id}`)).status, 204);
  assert.equal((await zoos()).status, 401, 'the revoking instance empties its cache at once');
  assertApiError(await call('DELETE', `/grants/${g.id}`), 404);
  assert.equal((await call('GET', '/grants?user=alice')).body.length, 0);
});

test('maintenance: GET and PUT; the admin API keeps answering while /v1 is 503', async () => {
  assert.deepEqual((await call('GET', '/maintenance')).body, { enabled: false, since: null });
  const on = await call('PUT', '/maintenance', { enabled: true });
  assert.equal(on.status, 200, on.text);
  assert.equal(on.body.enabled, true);
  assert.ok(on.body.since);
  try {
    // Instances poll the switch every second.
    let status = 0;
    for (let i = 0; i < 30 && status !== 503; i++) {
      status = (await server.json('GET', '/v1/zoos')).status;
      if (status !== 503) await sleep(100);
    }
    assert.equal(status, 503);
    assert.equal((await call('GET', '/clients')).status, 200, 'the admin API answers in maintenance');
    assertApiError(await call('PUT', '/maintenance', { enabled: 'yes' }), 400, ['enabled']);
  } finally {
    assert.equal((await call('PUT', '/maintenance', { enabled: false })).body.enabled, false);
    for (let i = 0; i < 30 && (await server.json('GET', '/v1')).status === 503; i++) await sleep(100);
  }
});

test('the OpenAPI document describes the admin API, and it validates', async () => {
  const { validate } = await import('@readme/openapi-parser');
  const doc = (await server.json('GET', '/v1/openapi.json')).body;
  for (const p of ['/admin/v1/clients', '/admin/v1/clients/{id}', '/admin/v1/clients/{id}/secret', '/admin/v1/users', '/admin/v1/users/{user}', '/admin/v1/grants', '/admin/v1/grants/{id}', '/admin/v1/maintenance'])
    assert.ok(doc.paths[p], `${p} is described`);
  assert.deepEqual(doc.paths['/admin/v1/clients'].servers, [{ url: server.url }]);
  assert.ok(doc.components.securitySchemes.oauth2.flows.clientCredentials.scopes.admin);
  const result = await validate(structuredClone(doc));
  assert.equal(result.valid, true, JSON.stringify(result.errors ?? result));
});

test('clients: "require_pushed_authorization_requests" (RFC 9126 --require-par) is created, read, listed and changed', async () => {
  const made = await call('POST', '/clients', { client_id: 'par-api', grant_types: ['authorization_code'], redirect_uris: ['https://par.example/cb'], require_pushed_authorization_requests: true });
  assert.equal(made.status, 201, made.text);
  assert.equal(made.body.require_pushed_authorization_requests, true);
  assert.equal((await call('GET', '/clients')).body.find((c: Json) => c.client_id === 'par-api').require_pushed_authorization_requests, true);
  const changed = await call('PATCH', '/clients/par-api', { require_pushed_authorization_requests: false });
  assert.equal(changed.status, 200, changed.text);
  assert.equal((await call('GET', '/clients/par-api')).body.require_pushed_authorization_requests, false);
  assertApiError(await call('PATCH', '/clients/par-api', { require_pushed_authorization_requests: 'yes' }), 400, ['require_pushed_authorization_requests']);
  assert.equal((await call('POST', '/clients', { client_id: 'par-off', grant_types: ['client_credentials'] })).body.require_pushed_authorization_requests, false);
  assert.equal((await call('DELETE', '/clients/par-api')).status, 204);
  assert.equal((await call('DELETE', '/clients/par-off')).status, 204);
});
