// Client ID metadata documents (docs/oauth.md, "Client ID metadata documents";
// draft-ietf-oauth-client-id-metadata-document): a client_id that is an https URL is fetched from a
// real local HTTPS server (its self-signed certificate trusted by the spawned gatehouse through
// NODE_EXTRA_CA_CERTS, as for webhooks; auth.allowPrivateMetadataHosts because it is on loopback).
// oauth4webapi runs the code flow with PKCE through the consent page and refreshes; every bad
// document or URL is a clear refusal with nothing issued; the cache follows Cache-Control.
// What needs no fetch (the URL rules, a loopback host refused, the feature turned off) runs on the
// in-process app.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import { createPgDatabase, pgAvailable, startServer, tempDir, type TestServer } from './helpers/server.js';
import { startApp, type InProcessApp } from './helpers/app.js';
import { startReceiver, type Receiver, type Received } from './helpers/receiver.js';
import { CookieJar, addUser, authorizeUrl, decide, hiddenField, obtainCode, page, pkcePair, post, redirectParams, signIn, unescapeHtml, type Target } from './helpers/oauth.js';
import { cacheSeconds, clientIdUrlProblem } from '../src/authserver/model/client-metadata-document.js';
import { findClient } from '../src/authserver/model/clients.js';

let server: TestServer;
let inProcess: InProcessApp;
let off: InProcessApp;
let docs: Receiver;
const dir = tempDir('gatehouse-cimd-');
const CB = 'https://app.example/callback';

type Answer = ReturnType<Receiver['respond']>;
/** What the document server answers per path (default: 404). */
const answers = new Map<string, Answer>();
const requestsTo = (path: string) => docs.received.filter((r: Received) => r.path === path).length;
const urlOf = (path: string) => `${docs.url}${path}`;
const json = (body: unknown, headers: Record<string, string> = {}): Answer => ({ status: 200, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
/** A good document for the URL of `path`. */
const document = (path: string, extra: Record<string, unknown> = {}) => ({
  client_id: urlOf(path),
  client_name: 'Claude',
  client_uri: docs.url,
  redirect_uris: [CB],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
  ...extra,
});
const serve = (path: string, answer: Answer) => answers.set(path, answer);

before(async () => {
  docs = await startReceiver(dir);
  docs.respond = (r) => answers.get(r.path) ?? { status: 404 };
  server = await startServer({ env: { NODE_EXTRA_CA_CERTS: docs.caFile }, config: { auth: { allowPrivateMetadataHosts: true } } });
  addUser(server, 'ada', 'ada-password-1');
  inProcess = await startApp();
  off = await startApp({ config: { auth: { clientMetadataDocuments: false } } });
});
after(async () => {
  await Promise.all([server?.cleanup(), inProcess?.cleanup(), off?.cleanup()]);
  await docs?.close();
});

/** The authorization page for this client_id (no sign-in needed to see a refusal). */
async function authorize(target: Target, clientId: string, extra: Record<string, string> = {}) {
  const { challenge } = pkcePair();
  return page(target, new CookieJar(), authorizeUrl({ response_type: 'code', client_id: clientId, redirect_uri: CB, state: 's1', code_challenge: challenge, code_challenge_method: 'S256', ...extra }));
}

/** A refusal: the styled error page naming the host and the reason, no redirect to the unverified redirect_uri. */
function assertRefusedPage(p: { status: number; html: string; location: string | null }, host: string, reason: RegExp) {
  assert.equal(p.status, 400, p.html);
  assert.equal(p.location, null);
  const text = unescapeHtml(p.html);
  assert.match(text, new RegExp(`the application's metadata document at ${host.replace(/[.[\]]/g, '\\$&')} could not be used: `, 'i'));
  assert.match(text, reason);
}

/** The token endpoint refuses the client: invalid_client, nothing issued. */
async function assertTokenRefused(target: Target, clientId: string) {
  const r = await post(target, 'token', { grant_type: 'authorization_code', client_id: clientId, code: 'nothing', redirect_uri: CB, code_verifier: 'x'.repeat(43) });
  assert.equal(r.status, 401, JSON.stringify(r.body));
  assert.equal(r.body.error, 'invalid_client');
  assert.equal(r.body.access_token, undefined);
  return r.body;
}

test('metadata: client_id_metadata_document_supported while documents are accepted, absent when turned off', async () => {
  const on = await server.json('GET', '/.well-known/oauth-authorization-server');
  assert.equal(on.body.client_id_metadata_document_supported, true);
  const none = await off.json('GET', '/.well-known/oauth-authorization-server');
  assert.equal(none.body.client_id_metadata_document_supported, undefined);
});

test('oauth4webapi: authorization code + PKCE with the URL as client_id through the consent page, then refresh; the account page lists the app', async () => {
  const path = '/claude/client.json';
  serve(path, json(document(path), { 'cache-control': 'max-age=60' }));
  const clientId = urlOf(path);
  const login = await page(server, new CookieJar(), authorizeUrl({ response_type: 'code', client_id: urlOf(path), redirect_uri: CB, state: 's', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' }));
  assert.match(login.html, new RegExp(`to continue to <strong class="client">Claude \\(from ${new URL(docs.url).host.replace(/\./g, '\\.')}\\)</strong>`), 'the login page names the host too');
  const customFetch = (url: string, init: RequestInit) => server.fetch(url, init);
  const opts = { [oauth.customFetch]: customFetch } as const;
  const issuer = new URL(server.url);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...opts }));
  assert.equal(as.client_id_metadata_document_supported, true);
  const client: oauth.Client = { client_id: clientId };
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  for (const [k, v] of Object.entries({ client_id: clientId, redirect_uri: CB, response_type: 'code', scope: 'zoos:read', state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' }))
    url.searchParams.set(k, v);

  const jar = new CookieJar();
  const consent = await signIn(server, jar, url.href, 'ada', 'ada-password-1');
  const host = new URL(docs.url).host;
  assert.match(consent.html, new RegExp(`<strong class="client">Claude</strong> <span class="muted">\\(from ${host.replace(/\./g, '\\.')}\\)</span>`));
  assert.match(consent.html, /Not verified/);
  const redirect = await decide(server, jar, consent);
  assert.equal(redirect.status, 302, redirect.html);

  const params = oauth.validateAuthResponse(as, client, new URL(redirect.location!), state);
  const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, CB, verifier, opts);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
  assert.ok(tokens.access_token);
  assert.ok(tokens.refresh_token);
  assert.equal((await server.json('GET', '/v1/zoos', undefined, { authorization: `Bearer ${tokens.access_token}` })).status, 200, 'the resource API takes its token');

  const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, opts));
  assert.ok(refreshed.access_token);
  assert.notEqual(refreshed.access_token, tokens.access_token);
  assert.equal(requestsTo(path), 1, 'one fetch for the whole flow: the document is cached for its max-age');

  // The operator's CLI lists the grant by the URL (nothing fetched for that).
  const listed = server.cli(['grant', 'list', '--client', clientId, '--json']);
  assert.equal(listed.status, 0, listed.stderr);
  assert.deepEqual(JSON.parse(listed.stdout).map((g: { client_id: string }) => g.client_id), [clientId]);

  // The account page names the app and its host, and revokes its grant.
  const account = await page(server, jar, '/oauth/account');
  assert.match(account.html, /<p class="app-name">Claude/);
  assert.match(account.html, new RegExp(`· ${host.replace(/\./g, '\\.')}`));
  const grantId = /name="grant_id" value="([^"]+)"/.exec(account.html)![1];
  const revoked = await page(server, jar, '/oauth/account', { csrf_token: hiddenField(account.html, 'csrf_token'), action: 'revoke', grant_id: grantId });
  assert.equal(revoked.status, 303);
  assert.equal((await server.json('GET', '/v1/zoos', undefined, { authorization: `Bearer ${refreshed.access_token}` })).status, 401);
});

test('a confidential client cannot be made of a document: token_endpoint_auth_method other than none is refused', async () => {
  const path = '/confidential.json';
  serve(path, json(document(path, { token_endpoint_auth_method: 'client_secret_basic' })));
  assertRefusedPage(await authorize(server, urlOf(path)), new URL(docs.url).host, /token_endpoint_auth_method is client_secret_basic/);
  const body = await assertTokenRefused(server, urlOf(path));
  assert.match(body.error_description, /could not be used: token_endpoint_auth_method/);
});

test('bad documents: too large, redirecting, another client_id, not JSON, not found — each refused on the page and at the token endpoint', async () => {
  const host = new URL(docs.url).host;
  const cases: [string, Answer, RegExp][] = [
    ['/large.json', json(document('/large.json', { padding: 'x'.repeat(6000) })), /larger than 5120 bytes/],
    ['/declared.json', { status: 200, headers: { 'content-type': 'application/json', 'content-length': '6000' }, body: JSON.stringify(document('/declared.json', { padding: 'x'.repeat(6000) })).slice(0, 6000) }, /larger than 5120 bytes/],
    ['/redirect.json', { status: 302, headers: { location: `${docs.url}/claude/client.json` } }, /HTTP 302 \(a redirect is not followed\)/],
    ['/other.json', json(document('/other.json', { client_id: `${docs.url}/claude/client.json` })), /its client_id \(.*\) is not the URL it was fetched from/],
    ['/text.json', { status: 200, headers: { 'content-type': 'text/html' }, body: JSON.stringify(document('/text.json')) }, /not JSON \(Content-Type: text\/html\)/],
    ['/broken.json', { status: 200, headers: { 'content-type': 'application/json' }, body: '{"client_id":' }, /not valid JSON/],
    ['/missing.json', { status: 404 }, /answered HTTP 404/],
    ['/no-id.json', json({ redirect_uris: [CB] }), /has no client_id/],
    ['/custom-scheme.json', json(document('/custom-scheme.json', { redirect_uris: ['com.example.app:/cb'] })), /must be https/],
    ['/implicit.json', json(document('/implicit.json', { grant_types: ['implicit'] })), /grant_types may list only authorization_code and refresh_token/],
  ];
  for (const [path, answer, reason] of cases) {
    serve(path, answer);
    assertRefusedPage(await authorize(server, urlOf(path)), host, reason);
    await assertTokenRefused(server, urlOf(path));
  }
});

test('a document server that stalls is given up after 5 s', async () => {
  const path = '/slow.json';
  serve(path, { ...json(document(path)), delayMs: 8000 });
  const started = Date.now();
  const p = await authorize(server, urlOf(path));
  const took = Date.now() - started;
  assertRefusedPage(p, new URL(docs.url).host, /no complete answer within 5 s/);
  assert.ok(took >= 4500 && took < 7500, `took ${took} ms`);
});

test('the redirect_uri must be one of the document\'s exactly; admin is never granted', async () => {
  const path = '/exact.json';
  serve(path, json(document(path), { 'cache-control': 'max-age=60' }));
  const wrong = await authorize(server, urlOf(path), { redirect_uri: `${CB}/other` });
  assert.equal(wrong.status, 400);
  assert.equal(wrong.location, null);
  assert.match(wrong.html, /not registered for it/);
  const admin = await authorize(server, urlOf(path), { scope: 'admin' });
  assert.equal(admin.status, 302);
  const params = redirectParams(admin.location!);
  assert.equal(params.get('error'), 'invalid_scope');
  assert.equal(params.get('code'), null);
  const omitted = await page(server, new CookieJar(), authorizeUrl({ response_type: 'code', client_id: urlOf(path), state: 's', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' }));
  assert.equal(omitted.status, 400, 'the redirect_uri is required even when the document lists one');
  assert.equal(omitted.location, null);
  // Without PKCE: refused too (a public client).
  const noPkce = await page(server, new CookieJar(), authorizeUrl({ response_type: 'code', client_id: urlOf(path), redirect_uri: CB, state: 's' }));
  assert.equal(redirectParams(noPkce.location!).get('error'), 'invalid_request');
});

test('cache: within max-age no second fetch; no-store fetches each time; a failure is remembered; concurrent lookups share one fetch', async () => {
  const cached = '/cached.json';
  serve(cached, json(document(cached), { 'cache-control': 'public, max-age=3600' }));
  for (let i = 0; i < 2; i++) assert.equal((await authorize(server, urlOf(cached))).status, 200);
  assert.equal(requestsTo(cached), 1);

  const noStore = '/no-store.json';
  serve(noStore, json(document(noStore), { 'cache-control': 'no-store' }));
  for (let i = 0; i < 2; i++) assert.equal((await authorize(server, urlOf(noStore))).status, 200);
  assert.equal(requestsTo(noStore), 2);

  const failing = '/failing.json';
  serve(failing, { status: 500 });
  for (let i = 0; i < 3; i++) assert.equal((await authorize(server, urlOf(failing))).status, 400);
  assert.equal(requestsTo(failing), 1, 'a failed fetch is not repeated at once');

  const together = '/together.json';
  serve(together, { ...json(document(together), { 'cache-control': 'no-store' }), delayMs: 300 });
  const pages = await Promise.all([1, 2, 3, 4, 5].map(() => authorize(server, urlOf(together))));
  for (const p of pages) assert.equal(p.status, 200);
  assert.equal(requestsTo(together), 1, 'five lookups at once, one fetch');

  assert.equal(cacheSeconds('max-age=999999999'), 24 * 3600, 'at most 24 h');
  assert.equal(cacheSeconds('no-cache, max-age=60'), 0);
  assert.equal(cacheSeconds(undefined), 300);
});

test('without auth.allowPrivateMetadataHosts a loopback or private host is refused before any connection', async () => {
  const before = docs.received.length;
  for (const [clientId, host] of [
    [`${docs.url}/claude/client.json`, new URL(docs.url).host],
    [`https://localhost:${docs.port}/claude/client.json`, `localhost:${docs.port}`],
    ['https://169.254.169.254/latest/meta-data', '169.254.169.254'],
    ['https://[::1]/client.json', '[::1]'],
  ]) {
    const refused = await authorize(inProcess, clientId);
    assertRefusedPage(refused, host, /could not be used: its address is not allowed/);
    const body = await assertTokenRefused(inProcess, clientId);
    // Attack: the caller learns nothing of the network (resolved addresses, ports, errors); the log has it.
    const reasons = [/could not be used: ([^<]*)/.exec(unescapeHtml(refused.html))![1], String(body.detail.client_id)];
    for (const text of reasons) assert.doesNotMatch(text, /resolves|non-public|127\.0\.0\.1|::1|ECONN|ENOTFOUND|not a public address/, text);
    assert.deepEqual(reasons, ['its address is not allowed', 'its address is not allowed']);
  }
  assert.equal(docs.received.length, before, 'nothing reached the document server');
  assert.match(inProcess.output(), /"reason":"localhost resolves to a non-public address \(127\.0\.0\.1\)","msg":"client metadata document refused"/, 'the log has the whole reason');
});

test('attack: a name that does not resolve or a closed port says only that it could not be fetched', async () => {
  for (const clientId of ['https://nowhere.invalid/client.json', `https://127.0.0.1:1/client.json`]) {
    const own = clientId.includes('127.0.0.1') ? server : inProcess;
    const refused = await authorize(own, clientId);
    assert.equal(refused.status, 400);
    const text = unescapeHtml(refused.html);
    assert.match(text, /could not be used: it could not be fetched/);
    assert.equal(/could not be used: ([^<]*)/.exec(text)![1], 'it could not be fetched', 'no errno, address or port');
  }
});

test('attack: a fresh client_id URL each time: at most 30 documents fetched for one IP in 10 minutes (429, nothing fetched)', async () => {
  const own = await startApp();
  try {
    for (let i = 0; i < 30; i++) assert.equal((await authorize(own, `https://127.0.0.1/fresh-${i}.json`)).status, 400, `fetch ${i + 1}`);
    // Remembered (the failure cache): not fetched again, not counted.
    assert.equal((await authorize(own, 'https://127.0.0.1/fresh-0.json')).status, 400);
    const throttled = await authorize(own, 'https://127.0.0.1/fresh-30.json');
    assert.equal(throttled.status, 429);
    const token = await post(own, 'token', { grant_type: 'authorization_code', client_id: 'https://127.0.0.1/fresh-31.json', code: 'x', redirect_uri: CB, code_verifier: 'x'.repeat(43) });
    assert.equal(token.status, 429);
    assert.equal(token.body.error, 'too_many_requests');
    assert.ok(Number(token.headers.get('retry-after')) > 0);
  } finally {
    await own.cleanup();
  }
});

test('the operators\' views (admin API, console: findClient with fresh) see no stored client for a URL, and fetch nothing', async () => {
  assert.equal(await findClient(inProcess.ctx, 'https://app.example/client.json', true), null);
  assert.equal(await findClient(inProcess.ctx, `${docs.url}/claude/client.json`, true), null);
});

test('the client_id URL itself: https only, a path, no fragment, no user name, no dot segments, its normal form, a length limit', async () => {
  const bad: [string, RegExp][] = [
    ['http://app.example/client.json', /must use https/],
    ['https://app.example', /must have a path/],
    ['https://app.example/', /must have a path/],
    ['https://app.example/client.json#x', /must not have a fragment/],
    ['https://user:pw@app.example/client.json', /user name or password/],
    ['https://app.example/a/../client.json', /\. or \.\. path segments/],
    ['https://app.example/a/%2e%2E/client.json', /\. or \.\. path segments/],
    ['https://APP.example/client.json', /normal form/],
    [`https://app.example/${'a'.repeat(600)}`, /longer than 512/],
  ];
  for (const [id, reason] of bad) assert.match(clientIdUrlProblem(id) ?? 'accepted', reason, id);
  assert.equal(clientIdUrlProblem('https://app.example/client.json?v=1'), null);
  const p = await authorize(inProcess, 'http://app.example/client.json');
  assertRefusedPage(p, 'app.example', /must use https/);
  await assertTokenRefused(inProcess, 'http://app.example/client.json');
});

test('auth.clientMetadataDocuments: false — a URL client_id is an unknown client, and nothing is fetched', async () => {
  const before = docs.received.length;
  const p = await authorize(off, `${docs.url}/claude/client.json`);
  assert.equal(p.status, 400);
  assert.match(p.html, /not registered/);
  const body = await assertTokenRefused(off, `${docs.url}/claude/client.json`);
  assert.equal(body.error_description, 'Unknown client or bad credentials');
  assert.equal(docs.received.length, before);
});

test('on PostgreSQL: a URL client_id fits the grants and tokens (text columns); code, refresh, account page', { skip: !pgAvailable && 'needs PostgreSQL' }, async () => {
  const database = await createPgDatabase();
  const pg = await startServer({ env: { NODE_EXTRA_CA_CERTS: docs.caFile, DATABASE_URL: database.url }, config: { auth: { allowPrivateMetadataHosts: true } } });
  try {
    addUser(pg, 'ada', 'ada-password-1');
    // The longest URL accepted, so the columns and indexes are shown to take it.
    const path = `/${'p'.repeat(512 - docs.url.length - 6)}.json`;
    assert.equal(urlOf(path).length, 512);
    serve(path, json(document(path), { 'cache-control': 'max-age=60' }));
    const { verifier, challenge } = pkcePair();
    const { code, jar } = await obtainCode(pg, { clientId: urlOf(path), redirectUri: CB, username: 'ada', password: 'ada-password-1', challenge, scope: 'zoos:read' });
    const tokens = await post(pg, 'token', { grant_type: 'authorization_code', client_id: urlOf(path), code, redirect_uri: CB, code_verifier: verifier });
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    const next = await post(pg, 'token', { grant_type: 'refresh_token', client_id: urlOf(path), refresh_token: tokens.body.refresh_token });
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.equal((await pg.json('GET', '/v1/zoos', undefined, { authorization: `Bearer ${next.body.access_token}` })).status, 200);
    const account = await page(pg, jar, '/oauth/account');
    assert.match(account.html, /<p class="app-name">Claude/);
  } finally {
    await pg.cleanup();
    await database.drop();
  }
});

test('the document\'s words are shown as text: a client_name with markup is escaped; a client_uri on another host is not shown', async () => {
  const path = '/markup.json';
  serve(path, json(document(path, { client_name: '<b>Bank</b>', client_uri: 'https://bank.example' }), { 'cache-control': 'max-age=60' }));
  const { challenge } = pkcePair();
  const consent = await signIn(server, new CookieJar(), authorizeUrl({ response_type: 'code', client_id: urlOf(path), redirect_uri: CB, state: 's', code_challenge: challenge, code_challenge_method: 'S256' }), 'ada', 'ada-password-1');
  assert.match(consent.html, /<strong class="client">&#60;b&#62;Bank&#60;\/b&#62;<\/strong>/);
  assert.doesNotMatch(consent.html, /bank\.example/);
});

test('pushed authorization requests (RFC 9126) work for such a client too; a refused document is invalid_client at /par', async () => {
  const path = '/pushed.json';
  serve(path, json(document(path), { 'cache-control': 'max-age=60' }));
  const { verifier, challenge } = pkcePair();
  const pushed = await post(server, 'par', { client_id: urlOf(path), response_type: 'code', redirect_uri: CB, scope: 'zoos:read', state: 'st', code_challenge: challenge, code_challenge_method: 'S256' });
  assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
  const jar = new CookieJar();
  const consent = await signIn(server, jar, `/oauth/authorize?${new URLSearchParams({ client_id: urlOf(path), request_uri: pushed.body.request_uri })}`, 'ada', 'ada-password-1');
  const done = await decide(server, jar, consent);
  assert.equal(done.status, 302, done.html);
  const tokens = await post(server, 'token', { grant_type: 'authorization_code', client_id: urlOf(path), code: redirectParams(done.location!).get('code')!, redirect_uri: CB, code_verifier: verifier });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));

  serve('/pushed-bad.json', json(document('/pushed-bad.json', { token_endpoint_auth_method: 'private_key_jwt' })));
  const refused = await post(server, 'par', { client_id: urlOf('/pushed-bad.json'), response_type: 'code', redirect_uri: CB, code_challenge: challenge, code_challenge_method: 'S256' });
  assert.equal(refused.status, 401);
  assert.equal(refused.body.error, 'invalid_client');
  assert.equal(refused.body.request_uri, undefined);
});
