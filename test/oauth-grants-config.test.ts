// `auth.grants` turns grants off (RFC 9700 advises against implicit and password) and
// `auth.requirePkce` / `--require-pkce` hold confidential clients to PKCE. A turned-off grant is
// unknown to the token endpoint, its response type to the authorization endpoint and the metadata;
// no client can be registered for it, and one registered before keeps it stored but cannot use it.
// Spawned server (test/helpers/server.ts), not in process: clients registered under one config, then the server restarted under another.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { startServer, tempDir, type TestServer } from './helpers/server.js';
import { CookieJar, addClient, addUser, authorizeUrl, basic, obtainCode, page, pkcePair, post, redirectParams, type RegisteredClient } from './helpers/oauth.js';

const PASSWORD = 'correct horse battery';
const CB = 'https://legacy.example/cb';
const ONLY = ['authorization_code', 'client_credentials'];
let dataDir: string;
let server: TestServer;
let legacy: RegisteredClient; // registered for every grant while all were on
let oldRefresh: string;

before(async () => {
  dataDir = tempDir();
  const first = await startServer({ dataDir });
  addUser(first, 'alice', PASSWORD);
  legacy = addClient(first, 'legacy', ['--grant', 'authorization_code', '--grant', 'implicit', '--grant', 'password', '--grant', 'refresh_token', '--redirect-uri', CB]);
  const t = await post(first, 'token', { grant_type: 'password', username: 'alice', password: PASSWORD, scope: 'zoos:read' }, { auth: auth() });
  assert.equal(t.status, 200, JSON.stringify(t.body));
  oldRefresh = t.body.refresh_token;
  await first.stop();
  server = await startServer({ dataDir, config: { auth: { grants: ONLY } } });
});
after(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

function auth() {
  return basic(legacy.client_id, legacy.client_secret!);
}

test('metadata lists only the enabled grants and their response types', async () => {
  const r = await server.json('GET', '/.well-known/oauth-authorization-server');
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.grant_types_supported, ONLY);
  assert.deepEqual(r.body.response_types_supported, ['code']);
  assert.deepEqual(r.body.code_challenge_methods_supported, ['S256']);
});

test('the token endpoint answers a turned-off grant unsupported_grant_type, even for a client registered for it', async () => {
  const pw = await post(server, 'token', { grant_type: 'password', username: 'alice', password: PASSWORD }, { auth: auth() });
  assert.equal(pw.status, 400);
  assert.equal(pw.body.error, 'unsupported_grant_type');
  assert.match(pw.body.error_description, /password/);
  const refresh = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: oldRefresh }, { auth: auth() });
  assert.equal(refresh.status, 400);
  assert.equal(refresh.body.error, 'unsupported_grant_type');
});

test('the authorization endpoint answers response_type=token unsupported_response_type: redirected when the redirect URI is valid, an error page otherwise', async () => {
  const jar = new CookieJar();
  const r = await page(server, jar, authorizeUrl({ response_type: 'token', client_id: 'legacy', redirect_uri: CB, state: 's1' }));
  assert.equal(r.status, 302, r.html);
  const f = redirectParams(r.location!, 'fragment');
  assert.equal(f.get('error'), 'unsupported_response_type');
  assert.equal(f.get('state'), 's1');
  const bad = await page(server, jar, authorizeUrl({ response_type: 'token', client_id: 'legacy', redirect_uri: 'https://evil.example/cb' }));
  assert.equal(bad.status, 400);
  assert.equal(bad.location, null);
});

test('the code grant still works, without a refresh token when refresh_token is off', async () => {
  const { challenge, verifier } = pkcePair();
  const { code } = await obtainCode(server, { clientId: 'legacy', redirectUri: CB, username: 'alice', password: PASSWORD, challenge });
  const t = await post(server, 'token', { grant_type: 'authorization_code', code, redirect_uri: CB, code_verifier: verifier }, { auth: auth() });
  assert.equal(t.status, 200, JSON.stringify(t.body));
  assert.equal(t.body.refresh_token, undefined);
});

test('registering a client for a turned-off grant is refused naming auth.grants (CLI, admin API, console); a client registered before keeps it stored', () => {
  const r = server.cli(['client', 'add', 'newcomer', '--grant', 'password']);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /--grant: password is turned off in this deployment \(auth\.grants: authorization_code, client_credentials\)/);
  const ok = server.cli(['client', 'add', 'newcomer', '--grant', 'client_credentials']);
  assert.equal(ok.status, 0, ok.stderr);
  const listed = JSON.parse(server.cli(['client', 'list', '--json']).stdout).find((c: { client_id: string }) => c.client_id === 'legacy');
  assert.deepEqual(listed.grant_types, ['authorization_code', 'implicit', 'password', 'refresh_token']);
});

test('admin API: a turned-off grant is refused on POST and on PATCH, while a PATCH of a client that already holds one keeps it', async () => {
  const bot = addClient(server, 'ops-bot', ['--grant', 'client_credentials', '--scope', 'admin']);
  const t = await post(server, 'token', { grant_type: 'client_credentials', scope: 'admin' }, { auth: basic(bot.client_id, bot.client_secret!) });
  assert.equal(t.status, 200, JSON.stringify(t.body));
  const call = (method: string, path: string, body?: unknown) => server.json(method, `/admin/v1${path}`, body, { authorization: `Bearer ${t.body.access_token}` });
  const refused = await call('POST', '/clients', { client_id: 'imp', grant_types: ['implicit'], redirect_uris: [CB] });
  assert.equal(refused.status, 400);
  assert.match(refused.body.detail.grant_types, /implicit is turned off in this deployment \(auth\.grants/);
  const renamed = await call('PATCH', '/clients/legacy', { name: 'Legacy app' });
  assert.equal(renamed.status, 200, renamed.text);
  assert.deepEqual(renamed.body.grant_types, ['authorization_code', 'implicit', 'password', 'refresh_token']);
  const added = await call('PATCH', '/clients/newcomer', { grant_types: ['client_credentials', 'password'] });
  assert.equal(added.status, 400);
  assert.match(added.body.detail.grant_types, /password is turned off/);
});

test('console: the form offers only the enabled grants; registering for another is refused next to the field', async () => {
  assert.equal(server.cli(['user', 'add', 'root', '--admin', '--password', 'root-password-1']).status, 0);
  const jar = new CookieJar();
  const front = await page(server, jar, '/admin');
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(front.html)![1];
  assert.equal((await page(server, jar, '/admin/signin', { csrf_token: csrf, username: 'root', password: 'root-password-1' })).status, 303);
  const list = await page(server, jar, '/admin/clients');
  const signedInCsrf = /name="csrf_token" value="([^"]+)"/.exec(list.html)![1]; // renewed at sign-in
  assert.match(list.html, /name="grant_types" value="authorization_code"/);
  assert.doesNotMatch(list.html, /name="grant_types" value="(implicit|password|refresh_token)"/);
  const legacyPage = await page(server, jar, '/admin/clients/legacy');
  assert.match(legacyPage.html, /name="grant_types" value="password" checked> password \(turned off in this deployment: auth\.grants\)/);
  const made = await page(server, jar, '/admin/clients', { csrf_token: signedInCsrf, client_id: 'pw-c', type: 'confidential', grant_types: 'password', token_type: 'bearer' });
  assert.equal(made.status, 400);
  assert.match(made.html, /id="f-grant_types-error">[^<]*password is turned off in this deployment/);
});

test('auth.requirePkce: all — a confidential client without code_challenge is sent back invalid_request', async () => {
  const strict = await startServer({ config: { auth: { requirePkce: 'all' } } });
  try {
    addUser(strict, 'alice', PASSWORD);
    const conf = addClient(strict, 'conf', ['--grant', 'authorization_code', '--redirect-uri', CB]);
    assert.equal(conf.require_pkce, false, 'the deployment, not the client, requires it');
    const r = await page(strict, new CookieJar(), authorizeUrl({ response_type: 'code', client_id: 'conf', redirect_uri: CB, state: 's2' }));
    assert.equal(r.status, 302, r.html);
    const q = redirectParams(r.location!);
    assert.equal(q.get('error'), 'invalid_request');
    assert.match(q.get('error_description')!, /PKCE is required for this client: send code_challenge with code_challenge_method=S256/);
    assert.equal(q.get('state'), 's2');
    const { challenge, verifier } = pkcePair();
    const { code } = await obtainCode(strict, { clientId: 'conf', redirectUri: CB, username: 'alice', password: PASSWORD, challenge });
    const t = await post(strict, 'token', { grant_type: 'authorization_code', code, redirect_uri: CB, code_verifier: verifier }, { auth: basic('conf', conf.client_secret!) });
    assert.equal(t.status, 200, JSON.stringify(t.body));
  } finally {
    await strict.cleanup();
  }
});

test('--require-pkce holds one confidential client to PKCE (default auth.requirePkce: public); a code is redeemed only with a matching verifier, and one issued without a challenge never with a verifier', async () => {
  const s = await startServer();
  try {
    addUser(s, 'alice', PASSWORD);
    const held = addClient(s, 'held', ['--grant', 'authorization_code', '--redirect-uri', CB, '--require-pkce']);
    const free = addClient(s, 'free', ['--grant', 'authorization_code', '--redirect-uri', CB]);
    assert.equal(held.require_pkce, true);
    const r = await page(s, new CookieJar(), authorizeUrl({ response_type: 'code', client_id: 'held', redirect_uri: CB }));
    assert.equal(r.status, 302);
    assert.equal(redirectParams(r.location!).get('error'), 'invalid_request');
    assert.match(redirectParams(r.location!).get('error_description')!, /PKCE is required for this client/);

    const heldAuth = basic('held', held.client_secret!);
    const { challenge, verifier } = pkcePair();
    const withChallenge = await obtainCode(s, { clientId: 'held', redirectUri: CB, username: 'alice', password: PASSWORD, challenge });
    const missing = await post(s, 'token', { grant_type: 'authorization_code', code: withChallenge.code, redirect_uri: CB }, { auth: heldAuth });
    assert.equal(missing.body.error, 'invalid_grant');
    const again = await obtainCode(s, { clientId: 'held', redirectUri: CB, username: 'alice', password: PASSWORD, challenge });
    const ok = await post(s, 'token', { grant_type: 'authorization_code', code: again.code, redirect_uri: CB, code_verifier: verifier }, { auth: heldAuth });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));

    // Another confidential client may still go without PKCE; then a verifier is a downgrade attempt.
    const plain = await obtainCode(s, { clientId: 'free', redirectUri: CB, username: 'alice', password: PASSWORD });
    const injected = await post(s, 'token', { grant_type: 'authorization_code', code: plain.code, redirect_uri: CB, code_verifier: verifier }, { auth: basic('free', free.client_secret!) });
    assert.equal(injected.status, 400);
    assert.equal(injected.body.error, 'invalid_grant');
  } finally {
    await s.cleanup();
  }
});
