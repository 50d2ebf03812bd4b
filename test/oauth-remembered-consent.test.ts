// Remembered consent (DESIGN "Administration, accounts, browser clients"): a live grant of this
// user to this client that covers the requested scope skips the consent page; a larger scope, or
// prompt=consent, shows it again; what is issued never outlives the remembered grant's validity.
// prompt=none answers without any page (login_required / consent_required).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/server.js';
import { CookieJar, addClient, addUser, authorizeUrl, basic, decide, page, post, redirectParams, signIn, type RegisteredClient } from './helpers/oauth.js';

const REDIRECT = 'https://planner.example/cb';
let server: TestServer;
let client: RegisteredClient;
let jar: CookieJar;
let firstGrantExpiry: string;

before(async () => {
  server = await startServer();
  addUser(server, 'rita', 'rita-password-1');
  client = addClient(server, 'planner', ['--grant', 'authorization_code', '--grant', 'implicit', '--grant', 'refresh_token', '--redirect-uri', REDIRECT]);
  jar = new CookieJar();
});
after(async () => server?.cleanup());

const url = (scope: string, extra: Record<string, string> = {}) => authorizeUrl({ response_type: 'code', client_id: 'planner', redirect_uri: REDIRECT, scope, state: 's1', ...extra });

function grantsOfRita(): { id: string; scope: string; expires_at: string; client_id: string }[] {
  const r = server.cli(['grant', 'list', '--json']);
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
  const grants = grantsOfRita();
  assert.equal(grants.length, 1);
  firstGrantExpiry = grants[0].expires_at;
});

test('a request the live grant covers skips the page, and the new grant ends when the remembered one does', async () => {
  const again = await page(server, jar, url('zoos:read'));
  assert.equal(again.status, 302, 'no consent page');
  assert.ok(again.location!.startsWith(REDIRECT));
  const params = redirectParams(again.location!);
  assert.equal(params.get('state'), 's1');
  const tokens = await redeem(params.get('code')!);
  assert.equal(tokens.scope, 'zoos:read', 'what was asked, not the whole remembered grant');
  const grants = grantsOfRita();
  assert.equal(grants.length, 2);
  for (const g of grants) assert.equal(g.expires_at, firstGrantExpiry, 'never beyond the validity the user chose');
  // The implicit grant is remembered the same way (tokens in the fragment, no page).
  const implicit = await page(server, jar, authorizeUrl({ response_type: 'token', client_id: 'planner', redirect_uri: REDIRECT, scope: 'zoos:write', state: 's2' }));
  assert.equal(implicit.status, 302);
  const fragment = redirectParams(implicit.location!, 'fragment');
  assert.ok(fragment.get('access_token'));
  assert.ok(Number(fragment.get('expires_in')) <= 3600);
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
  for (const g of grantsOfRita()) assert.equal(server.cli(['grant', 'revoke', g.id]).status, 0);
  const after = await page(server, jar, url('zoos:read'));
  assert.equal(after.status, 200);
  assert.match(after.html, /name="decision" value="allow"/);
});
