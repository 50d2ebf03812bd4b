// The token endpoint and its siblings (RFC 6749 §5, RFC 7009, RFC 7662, RFC 8414) against a real server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './helpers/server.js';
import { startApp, type InProcessApp } from './helpers/app.js';
import { addClient, addUser, basic, introspect, post, type RegisteredClient } from './helpers/oauth.js';

let server: InProcessApp;
let app: RegisteredClient; // confidential: password, client_credentials, refresh_token
let narrow: RegisteredClient; // confidential, only zoos scopes, client_credentials only
let macApp: RegisteredClient;
let spa: RegisteredClient; // public
const PASSWORD = 'correct horse battery';

before(async () => {
  server = await startApp();
  await addUser(server, 'alice', PASSWORD);
  app = await addClient(server, 'app', ['--grant', 'password', '--grant', 'client_credentials', '--grant', 'refresh_token', '--name', 'The App']);
  narrow = await addClient(server, 'narrow', ['--grant', 'client_credentials', '--scope', 'zoos:read zoos:write']);
  macApp = await addClient(server, 'mac-app', ['--grant', 'password', '--grant', 'refresh_token', '--token-type', 'mac']);
  spa = await addClient(server, 'spa', ['--public', '--grant', 'password', '--grant', 'refresh_token']);
});
after(async () => {
  await server.cleanup();
});

const appAuth = () => basic(app.client_id, app.client_secret!);

function assertNoStore(headers: Headers) {
  assert.equal(headers.get('cache-control'), 'no-store');
  assert.equal(headers.get('pragma'), 'no-cache');
}

test('metadata (RFC 8414) lists the endpoints, grants, scopes, PKCE method and auth methods', async () => {
  const r = await server.json('GET', '/.well-known/oauth-authorization-server');
  assert.equal(r.status, 200);
  assert.equal(r.body.issuer, server.url);
  assert.equal(r.body.authorization_response_iss_parameter_supported, true);
  assert.equal(r.body.authorization_endpoint, `${server.url}/oauth/authorize`);
  assert.equal(r.body.token_endpoint, `${server.url}/oauth/token`);
  assert.equal(r.body.revocation_endpoint, `${server.url}/oauth/revocation`);
  assert.equal(r.body.introspection_endpoint, `${server.url}/oauth/introspection`);
  assert.deepEqual(r.body.code_challenge_methods_supported, ['S256']);
  assert.deepEqual(r.body.response_types_supported.sort(), ['code', 'token']);
  for (const g of ['authorization_code', 'implicit', 'password', 'client_credentials', 'refresh_token']) assert.ok(r.body.grant_types_supported.includes(g), g);
  assert.ok(r.body.scopes_supported.includes('zoos:read') && r.body.scopes_supported.includes('articles:write'));
  assert.deepEqual(r.body.token_endpoint_auth_methods_supported.sort(), ['client_secret_basic', 'client_secret_post', 'none']);
  assert.equal(r.body.jwks_uri, `${server.url}/oauth/jwks`);
  assert.equal(r.body.userinfo_endpoint, `${server.url}/oauth/userinfo`);
  // The ID token keys (OpenID Connect): public halves only, one per algorithm.
  const jwks = await server.json('GET', '/oauth/jwks');
  assert.equal(jwks.status, 200);
  assert.deepEqual(jwks.body.keys.map((k: { alg: string }) => k.alg).sort(), ['ES256', 'RS256']);
  for (const key of jwks.body.keys) for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) assert.equal(key[secret], undefined, `${key.alg} key shows ${secret}`);
});

test('password grant with a form body and HTTP Basic: the access token record, not cacheable', async () => {
  const r = await post(server, 'token', { grant_type: 'password', username: 'alice', password: PASSWORD, scope: 'zoos:read' }, { auth: appAuth() });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assertNoStore(r.headers as unknown as Headers);
  assert.match(r.headers.get('content-type')!, /^application\/json/);
  assert.equal(r.body.token_type, 'bearer');
  assert.equal(r.body.expires_in, 3600);
  assert.equal(r.body.scope, 'zoos:read');
  assert.ok(r.body.access_token.length >= 43);
  assert.ok(r.body.refresh_token);
  const info = await introspect(server, r.body.access_token, app);
  assert.equal(info.active, true);
  assert.equal(info.client_id, 'app');
  assert.equal(info.username, 'alice');
  assert.match(info.sub, /^user:/);
  assert.equal(info.scope, 'zoos:read');
});

test('expires_in is the configured lifetime, counted from the minting (client_credentials, and a password grant whose grant lasts as long as its token), under a clock that moves between two readings', async () => {
  // The server runs with a clock that advances a millisecond at every reading: a lifetime counted
  // from a reading taken earlier in the request than the token's own issue time (as both grants
  // once did) shows up as expires_in 3599 on every token, where a busy machine showed it now and then.
  // A spawned server: the clock is replaced in its process only (a preloaded module), not in this one.
  const ticking = await startServer({ env: { NODE_OPTIONS: `--import ${new URL('./helpers/ticking-clock.mjs', import.meta.url).pathname}` } });
  try {
    addUser(ticking, 'tick', PASSWORD);
    const client = addClient(ticking, 'ticking', ['--grant', 'client_credentials', '--grant', 'password']);
    const auth = basic(client.client_id, client.client_secret!);
    for (let i = 0; i < 3; i++) {
      const cc = await post(ticking, 'token', { grant_type: 'client_credentials', scope: 'zoos:read' }, { auth });
      assert.equal(cc.status, 200, JSON.stringify(cc.body));
      assert.equal(cc.body.expires_in, 3600, 'client_credentials');
      // Without refresh tokens the password grant lasts exactly the access token's lifetime.
      const pw = await post(ticking, 'token', { grant_type: 'password', username: 'tick', password: PASSWORD, scope: 'zoos:read' }, { auth });
      assert.equal(pw.status, 200, JSON.stringify(pw.body));
      assert.equal(pw.body.refresh_token, undefined);
      assert.equal(pw.body.expires_in, 3600, 'password grant');
    }
  } finally {
    await ticking.cleanup();
  }
});

test('password grant with a JSON body and client_secret_post; no scope gives the client its registered scope', async () => {
  const r = await post(server, 'token', { grant_type: 'password', username: 'alice', password: PASSWORD, client_id: app.client_id, client_secret: app.client_secret! }, { json: true });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.scope.split(' ').length, 8);
});

test('a public client authenticates with client_id alone; a secret for it is rejected', async () => {
  const ok = await post(server, 'token', { grant_type: 'password', username: 'alice', password: PASSWORD, client_id: 'spa', scope: 'orders:read' });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  const bad = await post(server, 'token', { grant_type: 'password', username: 'alice', password: PASSWORD, client_id: 'spa', client_secret: 'whatever-secret' });
  assert.equal(bad.status, 401);
  assert.equal(bad.body.error, 'invalid_client');
});

test('client authentication failures are 401 invalid_client with WWW-Authenticate', async () => {
  const cases = [
    { auth: basic('app', 'wrong-secret'), params: {} },
    { auth: basic('nobody', 'x'), params: {} },
    { auth: undefined, params: { client_id: 'app', client_secret: 'wrong' } },
    { auth: undefined, params: { client_id: 'app' } }, // confidential client without its secret
    { auth: undefined, params: {} },
  ];
  for (const c of cases) {
    const r = await post(server, 'token', { grant_type: 'client_credentials', ...c.params }, { auth: c.auth });
    assert.equal(r.status, 401, JSON.stringify(c));
    assert.equal(r.body.error, 'invalid_client');
    assert.ok(r.body.error_description);
    assert.equal(typeof r.body.detail, 'object');
    assert.match(r.headers.get('www-authenticate') ?? '', /^Basic realm=/);
    assertNoStore(r.headers as unknown as Headers);
  }
});

test('two client authentication methods at once are an invalid_request', async () => {
  const r = await post(server, 'token', { grant_type: 'client_credentials', client_secret: app.client_secret! }, { auth: appAuth() });
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'invalid_request');
});

test('unknown or missing grant_type', async () => {
  const unknown = await post(server, 'token', { grant_type: 'urn:example:magic' }, { auth: appAuth() });
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.error, 'unsupported_grant_type');
  const missing = await post(server, 'token', { scope: 'zoos:read' }, { auth: appAuth() });
  assert.equal(missing.status, 400);
  assert.equal(missing.body.error, 'invalid_request');
  assert.ok(missing.body.detail.grant_type);
});

test('a repeated parameter is an invalid_request (RFC 6749 §3.2)', async () => {
  const r = await post(server, 'token', {}, { auth: appAuth(), raw: 'grant_type=client_credentials&scope=zoos:read&scope=orders:write' });
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'invalid_request');
  assert.ok(r.body.detail.scope);
  const json = await post(server, 'token', {}, { auth: appAuth(), json: true, raw: '{"grant_type":"client_credentials","scope":["zoos:read"]}' });
  assert.equal(json.status, 400);
  assert.equal(json.body.error, 'invalid_request');
});

test('parameters a grant does not declare are ignored, not refused (RFC 6749 §3.2)', async () => {
  // Another grant's parameters and unknown ones: each grant reads only its TokenGrant.parameters.
  const extras = { audience: 'zoos', requested_token_type: 'urn:x', code: 'x', refresh_token: 'y', redirect_uri: 'https://app.example/cb', foo: 'bar' };
  const password = await post(server, 'token', { grant_type: 'password', username: 'alice', password: PASSWORD, scope: 'zoos:read', ...extras }, { auth: appAuth() });
  assert.equal(password.status, 200, JSON.stringify(password.body));
  assert.equal(password.body.scope, 'zoos:read');
  const client = await post(server, 'token', { grant_type: 'client_credentials', scope: 'zoos:read', username: 'alice', password: 'wrong', ...extras }, { auth: appAuth() });
  assert.equal(client.status, 200, JSON.stringify(client.body));
  const refreshed = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: password.body.refresh_token, username: 'nobody', code_verifier: 'z', foo: 'bar' }, { auth: appAuth() });
  assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
});

test('malformed bodies get the OAuth error shape', async () => {
  const badPercent = await post(server, 'token', {}, { auth: appAuth(), raw: 'grant_type=client_credentials&scope=%E0%A4%A' });
  assert.equal(badPercent.status, 400);
  assert.equal(badPercent.body.error, 'invalid_request');
  const badJson = await post(server, 'token', {}, { auth: appAuth(), json: true, raw: '{"grant_type":' });
  assert.equal(badJson.status, 400);
  assert.equal(badJson.body.error, 'invalid_request');
  const notObject = await post(server, 'token', {}, { auth: appAuth(), json: true, raw: '["client_credentials"]' });
  assert.equal(notObject.status, 400);
  assert.equal(notObject.body.error, 'invalid_request');
});

test('other methods on /oauth/token are 405 with Allow', async () => {
  const r = await server.json('GET', '/oauth/token');
  assert.equal(r.status, 405);
  assert.equal(r.headers.get('allow'), 'POST');
});

test('a grant the client is not registered for is unauthorized_client', async () => {
  const r = await post(server, 'token', { grant_type: 'password', username: 'alice', password: PASSWORD }, { auth: basic('narrow', narrow.client_secret!) });
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'unauthorized_client');
});

test('wrong user password is invalid_grant', async () => {
  const r = await post(server, 'token', { grant_type: 'password', username: 'alice', password: 'not it at all' }, { auth: appAuth() });
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'invalid_grant');
});

test('client_credentials: the client is the subject; scope limited to its registration', async () => {
  const r = await post(server, 'token', { grant_type: 'client_credentials' }, { auth: basic('narrow', narrow.client_secret!) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.scope, 'zoos:read zoos:write');
  assert.equal(r.body.refresh_token, undefined);
  const info = await introspect(server, r.body.access_token, narrow);
  assert.equal(info.sub, 'client:narrow');
  const wider = await post(server, 'token', { grant_type: 'client_credentials', scope: 'zoos:read orders:read' }, { auth: basic('narrow', narrow.client_secret!) });
  assert.equal(wider.status, 400);
  assert.equal(wider.body.error, 'invalid_scope');
  const unknown = await post(server, 'token', { grant_type: 'client_credentials', scope: 'penguins:read' }, { auth: appAuth() });
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.error, 'invalid_scope');
});

test('mac clients get token_type mac with mac_key and mac_algorithm hmac-sha-256', async () => {
  const r = await post(server, 'token', { grant_type: 'password', username: 'alice', password: PASSWORD, scope: 'zoos:read' }, { auth: basic('mac-app', macApp.client_secret!) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.token_type, 'mac');
  assert.equal(r.body.mac_algorithm, 'hmac-sha-256');
  assert.match(r.body.mac_key, /^[A-Za-z0-9_-]{43}$/);
  const again = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: r.body.refresh_token }, { auth: basic('mac-app', macApp.client_secret!) });
  assert.equal(again.status, 200);
  assert.equal(again.body.token_type, 'mac');
  assert.notEqual(again.body.mac_key, r.body.mac_key);
  const info = await introspect(server, r.body.access_token, macApp);
  assert.equal(info.token_type, 'mac');
});

async function passwordTokens(scope = 'zoos:read zoos:write orders:read') {
  const r = await post(server, 'token', { grant_type: 'password', username: 'alice', password: PASSWORD, scope }, { auth: appAuth() });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

test('refresh rotates the refresh token; narrower scope is allowed, wider is invalid_scope', async () => {
  const first = await passwordTokens();
  const narrower = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: first.refresh_token, scope: 'zoos:read' }, { auth: appAuth() });
  assert.equal(narrower.status, 200, JSON.stringify(narrower.body));
  assertNoStore(narrower.headers as unknown as Headers);
  assert.equal(narrower.body.scope, 'zoos:read');
  assert.ok(narrower.body.refresh_token && narrower.body.refresh_token !== first.refresh_token);
  // The new refresh token keeps the original scope (RFC 6749 §6): the full scope can come back.
  const full = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: narrower.body.refresh_token }, { auth: appAuth() });
  assert.equal(full.status, 200);
  assert.equal(full.body.scope, 'zoos:read zoos:write orders:read');
  const wider = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: full.body.refresh_token, scope: 'zoos:read articles:write' }, { auth: appAuth() });
  assert.equal(wider.status, 400);
  assert.equal(wider.body.error, 'invalid_scope');
  // A failed escalation does not burn the refresh token.
  const still = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: full.body.refresh_token }, { auth: appAuth() });
  assert.equal(still.status, 200);
});

test('reusing a rotated refresh token revokes the whole grant', async () => {
  const first = await passwordTokens();
  const second = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: first.refresh_token }, { auth: appAuth() });
  assert.equal(second.status, 200);
  assert.equal((await introspect(server, second.body.access_token, app)).active, true);
  const replay = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: first.refresh_token }, { auth: appAuth() });
  assert.equal(replay.status, 400);
  assert.equal(replay.body.error, 'invalid_grant');
  // Every token of the grant is dead now, the legitimate latest ones included.
  assert.equal((await introspect(server, first.access_token, app)).active, false);
  assert.equal((await introspect(server, second.body.access_token, app)).active, false);
  const next = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: second.body.refresh_token }, { auth: appAuth() });
  assert.equal(next.status, 400);
  assert.equal(next.body.error, 'invalid_grant');
});

test('a refresh token works only for the client it was issued to', async () => {
  const tokens = await passwordTokens();
  const r = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, { auth: basic('mac-app', macApp.client_secret!) });
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'invalid_grant');
  const mine = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, { auth: appAuth() });
  assert.equal(mine.status, 200);
});

test('revocation (RFC 7009): an access token alone, or a refresh token with its whole grant', async () => {
  const a = await passwordTokens();
  const r1 = await post(server, 'revocation', { token: a.access_token }, { auth: appAuth() });
  assert.equal(r1.status, 200);
  assertNoStore(r1.headers as unknown as Headers);
  assert.equal((await introspect(server, a.access_token, app)).active, false);
  assert.equal((await introspect(server, a.refresh_token, app)).active, true);

  const r2 = await post(server, 'revocation', { token: a.refresh_token, token_type_hint: 'refresh_token' }, { auth: appAuth() });
  assert.equal(r2.status, 200);
  assert.equal((await introspect(server, a.refresh_token, app)).active, false);
  const refreshed = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: a.refresh_token }, { auth: appAuth() });
  assert.equal(refreshed.body.error, 'invalid_grant');

  const unknown = await post(server, 'revocation', { token: 'no-such-token' }, { auth: appAuth() });
  assert.equal(unknown.status, 200);
  const noAuth = await post(server, 'revocation', { token: 'x' });
  assert.equal(noAuth.status, 401);
});

test("a client cannot revoke another client's token", async () => {
  const a = await passwordTokens();
  const r = await post(server, 'revocation', { token: a.access_token }, { auth: basic('narrow', narrow.client_secret!) });
  assert.equal(r.status, 200);
  assert.equal((await introspect(server, a.access_token, app)).active, true);
});

test('introspection (RFC 7662): confidential clients only; anything invalid is active:false', async () => {
  const a = await passwordTokens('orders:read');
  const info = await introspect(server, a.access_token, app);
  assert.equal(info.active, true);
  assert.equal(info.scope, 'orders:read');
  assert.ok(info.exp > Date.now() / 1000 && info.iat <= Date.now() / 1000 + 1);
  assert.equal(info.iss, server.url);
  assert.deepEqual(await introspect(server, 'garbage', app), { active: false });
  const pub = await post(server, 'introspection', { token: a.access_token, client_id: 'spa' });
  assert.equal(pub.status, 401);
  assert.equal(pub.body.error, 'invalid_client');
  const anon = await post(server, 'introspection', { token: a.access_token });
  assert.equal(anon.status, 401);
});
