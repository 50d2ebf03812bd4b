// The admin scope (docs/admin.md#admins, docs/oauth.md#scopes): only for a confidential client whose
// registration names it, on behalf of an admin user (or client_credentials for a client registered
// with it); otherwise dropped from the request (invalid_scope when nothing remains), on every grant
// path. On the consent page it is unticked and said to be full control; it is never remembered,
// never answered by prompt=none, never granted by the implicit grant. Taking the admin right away
// ends the grants that carry it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { CookieJar, addClient, addUser, authorizeUrl, basic, decide, introspect, page, post, redirectParams, signIn, type Page, type RegisteredClient } from './helpers/oauth.js';

const PASSWORD = 'a-good-password-1';
let server: InProcessApp;
let app: RegisteredClient;
let bot: RegisteredClient;
let plainBot: RegisteredClient;
let noAdminApp: RegisteredClient;
let spa: RegisteredClient;
let web: RegisteredClient;
let adminWeb: RegisteredClient;
const CB = 'https://app.example/cb';

before(async () => {
  server = await startApp({ file: true });
  const root = await addUser(server, 'root', PASSWORD);
  assert.equal(root.admin, false);
  const made = (await server.cli(['user', 'add', 'boss', '--admin', '--password', PASSWORD]));
  assert.equal(made.status, 0, made.stderr);
  assert.equal(JSON.parse(made.stdout).admin, true);
  await addUser(server, 'plain', PASSWORD);
  app = await addClient(server, 'console-app', ['--grant', 'password', '--grant', 'client_credentials', '--scope', 'admin zoos:read zoos:write']);
  noAdminApp = await addClient(server, 'zoo-app', ['--grant', 'password', '--scope', 'zoos:read']);
  bot = await addClient(server, 'ops-bot', ['--grant', 'client_credentials', '--scope', 'admin zoos:read']);
  plainBot = await addClient(server, 'plain-bot', ['--grant', 'client_credentials']);
  const browserGrants = ['--grant', 'authorization_code', '--grant', 'implicit', '--grant', 'refresh_token', '--redirect-uri', CB];
  // Registered without --scope: every collection scope, never admin.
  spa = await addClient(server, 'spa', ['--public', ...browserGrants]);
  web = await addClient(server, 'web', [...browserGrants, '--grant', 'password']);
  adminWeb = await addClient(server, 'admin-web', [...browserGrants, '--scope', 'admin zoos:read zoos:write']);
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

test('anyone else asking for admin: admin is dropped, invalid_scope when nothing remains', async () => {
  for (const r of [await password(app, 'plain', 'admin'), await password(noAdminApp, 'boss', 'admin'), await password(web, 'boss', 'admin')]) {
    assert.equal(r.status, 400);
    assert.equal(r.body.error, 'invalid_scope');
    assert.ok('scope' in r.body.detail);
  }
  const dropped = await password(app, 'root', 'admin zoos:read');
  assert.equal(dropped.status, 200, JSON.stringify(dropped.body));
  assert.equal(dropped.body.scope, 'zoos:read');
});

test('password grant by a client registered without admin: admin dropped even for an admin user', async () => {
  const r = await password(web, 'boss', 'zoos:read admin');
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.scope, 'zoos:read');
  assert.equal((await adminApi(r.body.access_token)).status, 403);
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
  const dropped = await credentials(plainBot, 'admin zoos:read');
  assert.equal(dropped.status, 200, JSON.stringify(dropped.body));
  assert.equal(dropped.body.scope, 'zoos:read');
});

test('user admin off: the grants that carry admin end at once; the others stay', async () => {
  const admin = await password(app, 'boss', 'admin');
  // Another app: a narrower sign-in to the same app would replace (and narrow) the admin grant.
  const zoos = await password(noAdminApp, 'boss', 'zoos:read');
  assert.equal((await introspect(server, admin.body.access_token, app)).active, true);
  const off = (await server.cli(['user', 'admin', 'boss', 'off']));
  assert.equal(off.status, 0, off.stderr);
  assert.equal(JSON.parse(off.stdout).admin, false);
  assert.equal((await introspect(server, admin.body.access_token, app)).active, false);
  assert.equal((await introspect(server, zoos.body.access_token, noAdminApp)).active, true);
  assert.equal((await password(app, 'boss', 'admin')).body.error, 'invalid_scope');
  assert.equal((await server.cli(['user', 'admin', 'boss', 'on'])).status, 0);
  assert.equal((await password(app, 'boss', 'admin')).status, 200);
  assert.equal((await server.cli(['user', 'admin', 'nobody', 'on'])).status, 1);
  assert.equal((await server.cli(['user', 'admin', 'boss', 'maybe'])).status, 1);
});

// The browser flows. Each attack walks the real pages with the admin user signed in.
const adminApi = (token: string) => server.json('GET', '/admin/v1/users', undefined, { authorization: `Bearer ${token}` });
const authorize = (clientId: string, scope: string, extra: Record<string, string> = {}) =>
  authorizeUrl({ response_type: 'code', client_id: clientId, redirect_uri: CB, scope, state: 'st', ...extra });
const offered = (p: Page) => [...p.html.matchAll(/name="scope" value="([^"]+)"/g)].map((m) => m[1]);

async function redeem(client: RegisteredClient, code: string, verifier?: string) {
  const auth = client.client_secret ? { auth: basic(client.client_id, client.client_secret) } : {};
  const body: Record<string, string> = { grant_type: 'authorization_code', code, redirect_uri: CB };
  if (!client.client_secret) body.client_id = client.client_id;
  if (verifier) body.code_verifier = verifier;
  const r = await post(server, 'token', body, auth);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

test('attack: a public SPA registered without --scope asks for admin for an admin user: no admin box, no admin token', async () => {
  const jar = new CookieJar();
  const verifier = 'v'.repeat(43);
  const { createHash } = await import('node:crypto');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const consent = await signIn(server, jar, authorize('spa', 'zoos:read admin', { code_challenge: challenge, code_challenge_method: 'S256' }), 'boss', PASSWORD);
  assert.deepEqual(offered(consent), ['zoos:read']);
  assert.doesNotMatch(consent.html, /value="admin"/);
  const done = await decide(server, jar, consent, { scope: ['zoos:read', 'admin'] });
  assert.equal(done.status, 400, 'admin is not among the choices: a forged box is refused');
  const ok = await decide(server, jar, consent);
  assert.equal(ok.status, 302);
  const tokens = await redeem(spa, redirectParams(ok.location!).get('code')!, verifier);
  assert.equal(tokens.scope, 'zoos:read');
  assert.equal((await adminApi(tokens.access_token)).status, 403);
  // Only admin asked: nothing remains.
  const only = await page(server, jar, authorize('spa', 'admin', { code_challenge: challenge, code_challenge_method: 'S256' }));
  assert.equal(only.status, 302);
  assert.equal(redirectParams(only.location!).get('error'), 'invalid_scope');
});

test('attack: a confidential client registered without admin asks for it: dropped', async () => {
  const jar = new CookieJar();
  const consent = await signIn(server, jar, authorize('web', 'zoos:read admin'), 'boss', PASSWORD);
  assert.deepEqual(offered(consent), ['zoos:read']);
  const done = await decide(server, jar, consent);
  const tokens = await redeem(web, redirectParams(done.location!).get('code')!);
  assert.equal(tokens.scope, 'zoos:read');
  assert.equal((await adminApi(tokens.access_token)).status, 403);
});

test('attack: the implicit grant never carries admin, even for a client registered with it', async () => {
  const jar = new CookieJar();
  const consent = await signIn(server, jar, authorize('admin-web', 'zoos:read admin', { response_type: 'token' }), 'boss', PASSWORD);
  assert.deepEqual(offered(consent), ['zoos:read']);
  const done = await decide(server, jar, consent);
  assert.equal(done.status, 302);
  const fragment = redirectParams(done.location!, 'fragment');
  assert.equal(fragment.get('scope'), 'zoos:read');
  assert.equal((await adminApi(fragment.get('access_token')!)).status, 403);
  const only = await page(server, jar, authorize('admin-web', 'admin', { response_type: 'token', prompt: 'consent' }));
  assert.equal(only.status, 302);
  assert.equal(redirectParams(only.location!, 'fragment').get('error'), 'invalid_scope');
});

test('a confidential client registered with admin, an admin user: the box is unticked and says full control; allowed, it works', async () => {
  const jar = new CookieJar();
  const consent = await signIn(server, jar, authorize('admin-web', 'zoos:read admin'), 'boss', PASSWORD);
  assert.deepEqual(offered(consent), ['zoos:read', 'admin']);
  assert.doesNotMatch(consent.html, /value="admin" checked/, 'never pre-ticked');
  assert.match(consent.html, /value="zoos:read" checked/);
  assert.match(consent.html, /full control of this gatehouse deployment/i);
  // Allow as shown (only the ticked box): no admin.
  const asShown = await decide(server, jar, consent, { scope: ['zoos:read'] });
  assert.equal((await redeem(adminWeb, redirectParams(asShown.location!).get('code')!)).scope, 'zoos:read');
  // Ticked by the user: admin is granted, and works on the admin API.
  const again = await signIn(server, jar, authorize('admin-web', 'zoos:read admin'), 'boss', PASSWORD);
  const ticked = await decide(server, jar, again, { scope: ['zoos:read', 'admin'] });
  const tokens = await redeem(adminWeb, redirectParams(ticked.location!).get('code')!);
  assert.equal(tokens.scope, 'zoos:read admin');
  assert.equal((await adminApi(tokens.access_token)).status, 200);

  // Never remembered: the page again, and prompt=none is consent_required although a live grant holds admin.
  const remembered = await page(server, jar, authorize('admin-web', 'zoos:read admin'));
  assert.equal(remembered.status, 200, 'the consent page, not a redirect');
  assert.match(remembered.html, /name="decision" value="allow"/);
  const silent = await page(server, jar, authorize('admin-web', 'zoos:read admin', { prompt: 'none' }));
  assert.equal(silent.status, 302);
  assert.equal(redirectParams(silent.location!).get('error'), 'consent_required');
  // Without admin, the same grant is remembered.
  const plain = await page(server, jar, authorize('admin-web', 'zoos:read', { prompt: 'none' }));
  assert.ok(redirectParams(plain.location!).get('code'));

  // A non-admin user is not offered admin at all.
  const other = new CookieJar();
  const forPlain = await signIn(server, other, authorize('admin-web', 'zoos:read admin'), 'plain', PASSWORD);
  assert.deepEqual(offered(forPlain), ['zoos:read']);

  // Refresh: once the client's registration no longer names admin, a refresh drops it.
  const bot_ = await credentials(bot, 'admin');
  const patched = await server.json('PATCH', '/admin/v1/clients/admin-web', { scope: 'zoos:read zoos:write' }, { authorization: `Bearer ${bot_.body.access_token}` });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  const refreshed = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, { auth: basic('admin-web', adminWeb.client_secret!) });
  assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
  assert.equal(refreshed.body.scope, 'zoos:read');
  assert.equal((await adminApi(refreshed.body.access_token)).status, 403);
});
