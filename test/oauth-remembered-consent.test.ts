// Remembered consent (docs/oauth.md#account-page-auth_urlaccount): a live grant of this
// user to this client that covers the requested scope skips the consent page; a larger scope, or
// prompt=consent, shows it again; what is issued never outlives the remembered grant's validity.
// prompt=none answers without any page (login_required / consent_required). One grant per user and
// app: a remembered authorization issues under the existing grant, a new consent replaces its scope
// and validity (tokens wider than the new scope end), the password grant likewise, and two consents
// racing (two tabs) leave one grant.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { CookieJar, addClient, addUser, authorizeUrl, basic, decide, introspect, page, post, redirectParams, signIn, sleep, type RegisteredClient } from './helpers/oauth.js';

const REDIRECT = 'https://planner.example/cb';
let server: InProcessApp;
let client: RegisteredClient;
let jar: CookieJar;
let firstGrantExpiry: string;

before(async () => {
  server = await startApp({ file: true });
  await addUser(server, 'rita', 'rita-password-1');
  client = await addClient(server, 'planner', ['--grant', 'authorization_code', '--grant', 'implicit', '--grant', 'refresh_token', '--grant', 'password', '--redirect-uri', REDIRECT]);
  jar = new CookieJar();
});
after(async () => server?.cleanup());

const url = (scope: string, extra: Record<string, string> = {}) => authorizeUrl({ response_type: 'code', client_id: 'planner', redirect_uri: REDIRECT, scope, state: 's1', ...extra });

async function grantsOfRita(clientId = 'planner'): Promise<{ id: string; scope: string; expires_at: string; client_id: string; created_at: string }[]> {
  const r = (await server.cli(['grant', 'list', '--json', '--client', clientId]));
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

async function redeem(code: string) {
  const r = await post(server, 'token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, { auth: basic('planner', client.client_secret!) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

test('the first authorization shows the consent page; the user picks a day', async () => {
  const consent = await signIn(server, jar, url('zoos:read zoos:write'), 'rita', 'rita-password-1');
  const done = await decide(server, jar, consent, { ttl: 86400 });
  assert.equal(done.status, 302);
  await redeem(redirectParams(done.location!).get('code')!);
  const grants = (await grantsOfRita());
  assert.equal(grants.length, 1);
  firstGrantExpiry = grants[0].expires_at;
});

test('a request the live grant covers skips the page and issues under that same grant (no new one)', async () => {
  const [before] = (await grantsOfRita());
  const again = await page(server, jar, url('zoos:read'));
  assert.equal(again.status, 302, 'no consent page');
  assert.ok(again.location!.startsWith(REDIRECT));
  const params = redirectParams(again.location!);
  assert.equal(params.get('state'), 's1');
  const tokens = await redeem(params.get('code')!);
  assert.equal(tokens.scope, 'zoos:read', 'what was asked, not the whole remembered grant');
  const grants = (await grantsOfRita());
  assert.equal(grants.length, 1, 'one grant per user and app');
  assert.equal(grants[0].id, before.id);
  assert.equal(grants[0].expires_at, firstGrantExpiry, 'never beyond the validity the user chose');
  assert.equal(grants[0].scope, 'zoos:read zoos:write', 'the remembered grant is not narrowed by a smaller request');
  // The implicit grant is remembered the same way (tokens in the fragment, no page).
  const implicit = await page(server, jar, authorizeUrl({ response_type: 'token', client_id: 'planner', redirect_uri: REDIRECT, scope: 'zoos:write', state: 's2' }));
  assert.equal(implicit.status, 302);
  const fragment = redirectParams(implicit.location!, 'fragment');
  assert.ok(fragment.get('access_token'));
  assert.ok(Number(fragment.get('expires_in')) <= 3600);
  assert.equal((await grantsOfRita()).length, 1);
  assert.equal((await introspect(server, fragment.get('access_token')!, client)).active, true);
  assert.equal((await introspect(server, tokens.access_token, client)).active, true);
});

test('a larger scope shows the consent page again', async () => {
  const grown = await page(server, jar, url('zoos:read orders:read'));
  assert.equal(grown.status, 200);
  assert.match(grown.html, /name="decision" value="allow"/);
});

test('prompt=consent shows the page even when covered; an unknown prompt value is an error at the redirect URI', async () => {
  const forced = await page(server, jar, url('zoos:read', { prompt: 'consent' }));
  assert.equal(forced.status, 200);
  assert.match(forced.html, /name="decision" value="allow"/);
  const unknown = await page(server, jar, url('zoos:read', { prompt: 'sometimes' }));
  assert.equal(unknown.status, 302);
  assert.equal(redirectParams(unknown.location!).get('error'), 'invalid_request');
});

test('prompt=none: a code when covered, consent_required when not, login_required without a session', async () => {
  const covered = await page(server, jar, url('zoos:read', { prompt: 'none' }));
  assert.equal(covered.status, 302);
  assert.ok(redirectParams(covered.location!).get('code'));
  const notCovered = await page(server, jar, url('orders:read', { prompt: 'none' }));
  assert.equal(redirectParams(notCovered.location!).get('error'), 'consent_required');
  const stranger = await page(server, new CookieJar(), url('zoos:read', { prompt: 'none' }));
  assert.equal(redirectParams(stranger.location!).get('error'), 'login_required');
});

test('once the remembered grants are revoked, the page is shown again', async () => {
  for (const g of (await grantsOfRita())) assert.equal((await server.cli(['grant', 'revoke', g.id])).status, 0);
  const after = await page(server, jar, url('zoos:read'));
  assert.equal(after.status, 200);
  assert.match(after.html, /name="decision" value="allow"/);
});

const password = (scope: string) =>
  post(server, 'token', { grant_type: 'password', username: 'rita', password: 'rita-password-1', scope }, { auth: basic('planner', client.client_secret!) });

test('a new consent to the same app replaces the grant: scope and validity; tokens wider than the new scope end', async () => {
  const wide = await signIn(server, jar, url('zoos:read zoos:write orders:read'), 'rita', 'rita-password-1');
  const wideTokens = await redeem(redirectParams((await decide(server, jar, wide, { ttl: 2592000 })).location!).get('code')!);
  const [grant] = (await grantsOfRita());
  assert.equal((await grantsOfRita()).length, 1);
  assert.equal(grant.scope, 'zoos:read zoos:write orders:read');
  const narrowTokens = await redeem(redirectParams((await decide(server, jar, await signIn(server, jar, url('zoos:read'), 'rita', 'rita-password-1'), { ttl: 86400 })).location!).get('code')!);
  const after = (await grantsOfRita());
  assert.equal(after.length, 1, 'replaced, not added');
  assert.equal(after[0].id, grant.id);
  assert.equal(after[0].scope, 'zoos:read');
  assert.ok(Date.parse(after[0].expires_at) < Date.parse(grant.expires_at), 'the new, shorter validity');
  assert.ok(Date.parse(after[0].expires_at) <= Date.now() + 86400_000);
  const validity = Date.parse(after[0].expires_at) - Date.parse(after[0].created_at);
  assert.ok(validity > 86400_000 - 5000 && validity <= 86400_000, `granted when the new decision was made, for the day chosen (${validity} ms)`);
  // What the narrower consent took back is no longer reachable with the earlier tokens.
  await sleep(1100);
  assert.equal((await introspect(server, wideTokens.access_token, client)).active, false, 'the earlier access token had zoos:write');
  const refreshWide = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: wideTokens.refresh_token }, { auth: basic('planner', client.client_secret!) });
  assert.equal(refreshWide.body.error, 'invalid_grant', 'the earlier refresh token had zoos:write');
  assert.equal((await introspect(server, narrowTokens.access_token, client)).active, true);
  // A wider consent again keeps what is inside it.
  await redeem(redirectParams((await decide(server, jar, await signIn(server, jar, url('zoos:read orders:read'), 'rita', 'rita-password-1'), { ttl: 3600 })).location!).get('code')!);
  assert.equal((await introspect(server, narrowTokens.access_token, client)).active, true);
  assert.equal((await grantsOfRita()).length, 1);
});

test('the password grant for the same user and app reuses that grant', async () => {
  const first = await password('zoos:read orders:read');
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const second = await password('zoos:read orders:read');
  assert.equal(second.status, 200);
  const grants = (await grantsOfRita());
  assert.equal(grants.length, 1);
  assert.equal(grants[0].scope, 'zoos:read orders:read');
  assert.equal((await introspect(server, first.body.access_token, client)).active, true);
  assert.equal((await introspect(server, second.body.access_token, client)).active, true);
});

test('two consents racing (two tabs): one grant', async () => {
  for (let round = 0; round < 3; round++) {
    const tabs = await Promise.all([0, 1, 2, 3].map(() => signIn(server, jar, url('zoos:read orders:read'), 'rita', 'rita-password-1')));
    const codes = await Promise.all(tabs.map(async (tab) => redirectParams((await decide(server, jar, tab)).location!).get('code')!));
    for (const g of (await grantsOfRita())) assert.equal((await server.cli(['grant', 'revoke', g.id])).status, 0);
    await Promise.all(codes.map((code) => redeem(code)));
    const implicit = await Promise.all(
      [0, 1, 2].map(async () => {
        const tab = await signIn(server, jar, authorizeUrl({ response_type: 'token', client_id: 'planner', redirect_uri: REDIRECT, scope: 'zoos:read' }), 'rita', 'rita-password-1');
        return tab;
      }),
    );
    await Promise.all(implicit.map((tab) => decide(server, jar, tab)));
    assert.equal((await grantsOfRita()).length, 1, `round ${round}`);
  }
});
