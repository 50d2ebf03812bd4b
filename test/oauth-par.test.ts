// Pushed authorization requests (RFC 9126, docs/oauth.md#pushed-authorization-requests): two
// third-party clients (oauth4webapi, openid-client) push their request to {auth_url}/par and run
// the code flow with the request_uri; then the attacks: a request_uri replayed, expired, used by
// another client or by two browsers at once, a push without credentials or with bad parameters,
// query parameters that try to override the pushed ones, a --require-par client without PAR.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { startApp, type InProcessApp } from './helpers/app.js';
import { createPgDatabase, pgAvailable } from './helpers/server.js';
import { CookieJar, addClient, addUser, basic, decide, hiddenField, page, pkcePair, post, redirectParams, signIn, type RegisteredClient } from './helpers/oauth.js';
import { sqlOf } from '../src/platform/store/sql.js';

let server: InProcessApp;
let rp: RegisteredClient;
let other: RegisteredClient;
let as: oauth.AuthorizationServer;
const CB = 'https://rp.example/callback';
const CB2 = 'https://rp.example/other-callback';
const PASSWORD = 'paula-password-1';

const inProcess = (url: string, init?: RequestInit) => server.fetch(url, (init ?? {}) as object) as unknown as Promise<Response>;
const opts = () => ({ [oauth.customFetch]: inProcess }) as const;

let users = 0;
/** A fresh user per flow: no remembered consent skips the page. */
async function newUser(): Promise<string> {
  const name = `paula${++users}`;
  await addUser(server, name, PASSWORD);
  return name;
}

before(async () => {
  server = await startApp();
  rp = await addClient(server, 'rp', ['--grant', 'authorization_code', '--grant', 'refresh_token', '--redirect-uri', CB, '--redirect-uri', CB2, '--name', 'Relying Party']);
  other = await addClient(server, 'other', ['--grant', 'authorization_code', '--redirect-uri', CB]);
  await addClient(server, 'spa', ['--public', '--grant', 'authorization_code', '--redirect-uri', CB]);
  await addClient(server, 'strict', ['--grant', 'authorization_code', '--redirect-uri', CB, '--require-par']);
  const issuer = new URL(server.url);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...opts() }));
});
after(async () => {
  await server.cleanup();
});

const rpAuth = () => basic('rp', rp.client_secret!);
const pushedCount = async () => Number((await sqlOf(server.ctx.store).selectFrom('pushed_requests').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

/** A push by rp (HTTP Basic) of a code request with PKCE; answers the request_uri and the verifier. */
async function push(params: Record<string, string> = {}, auth = rpAuth()) {
  const { verifier, challenge } = pkcePair();
  const r = await post(server, 'par', { response_type: 'code', redirect_uri: CB, scope: 'zoos:read', state: 'st', code_challenge: challenge, code_challenge_method: 'S256', ...params }, { auth });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return { requestUri: r.body.request_uri as string, verifier };
}

const authorizeWith = (clientId: string, requestUri: string, extra: Record<string, string> = {}) => `/oauth/authorize?${new URLSearchParams({ client_id: clientId, request_uri: requestUri, ...extra })}`;

/** The whole browser step: sign in, allow; the redirect back to the client. */
async function browse(target: string, jar = new CookieJar()) {
  const consent = await signIn(server, jar, target, await newUser(), PASSWORD);
  const done = await decide(server, jar, consent);
  return { done, consent, jar };
}

function isErrorPage(p: { status: number; location: string | null; html: string }) {
  assert.equal(p.status, 400, p.html);
  assert.equal(p.location, null, 'no redirect: nothing was established');
  assert.match(p.html, /expired|already used|Invalid request/);
}

test('metadata: the endpoint, and PAR not required of every client', async () => {
  assert.equal(as.pushed_authorization_request_endpoint, `${server.url}/oauth/par`);
  assert.equal(as.require_pushed_authorization_requests, false);
  const oidc = await server.json('GET', '/.well-known/openid-configuration');
  assert.equal(oidc.body.pushed_authorization_request_endpoint, `${server.url}/oauth/par`);
});

test('oauth4webapi: push, the browser with the request_uri, the code exchanged with PKCE', async () => {
  const c: oauth.Client = { client_id: 'rp' };
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const res = await oauth.pushedAuthorizationRequest(
    as,
    c,
    oauth.ClientSecretBasic(rp.client_secret!),
    { redirect_uri: CB, response_type: 'code', scope: 'zoos:read zoos:write', state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' },
    opts(),
  );
  assert.equal(res.status, 201);
  assert.match(res.headers.get('cache-control') ?? '', /no-store/);
  const pushed = await oauth.processPushedAuthorizationResponse(as, c, res);
  assert.match(pushed.request_uri, /^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{40,}$/);
  assert.equal(pushed.expires_in, 60);

  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set('client_id', 'rp');
  url.searchParams.set('request_uri', pushed.request_uri);
  const { done, consent } = await browse(url.pathname + url.search);
  assert.match(consent.html, /Relying Party/);
  assert.equal(done.status, 302, done.html);
  const params = oauth.validateAuthResponse(as, c, new URL(done.location!), state);
  const tokens = await oauth.processAuthorizationCodeResponse(as, c, await oauth.authorizationCodeGrantRequest(as, c, oauth.ClientSecretBasic(rp.client_secret!), params, CB, verifier, opts()));
  assert.equal(tokens.scope, 'zoos:read zoos:write');
  assert.ok(tokens.refresh_token);
});

test('openid-client: buildAuthorizationUrlWithPAR, then the code flow', async () => {
  const options = { [client.customFetch]: inProcess } as client.DiscoveryRequestOptions;
  const config = await client.discovery(new URL(server.url), 'rp', undefined, client.ClientSecretPost(rp.client_secret!), options);
  config[client.customFetch] = inProcess;
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = await client.buildAuthorizationUrlWithPAR(config, {
    redirect_uri: CB,
    scope: 'openid zoos:read',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  assert.deepEqual([...url.searchParams.keys()].sort(), ['client_id', 'request_uri']);
  const { done } = await browse(url.pathname + url.search);
  assert.equal(done.status, 302, done.html);
  const tokens = await client.authorizationCodeGrant(config, new URL(done.location!), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
  assert.equal(tokens.claims()!.nonce, nonce);
  assert.equal(tokens.scope, 'openid zoos:read');
});

test('a request_uri answers once: after the code, the same URL is an error page and issues nothing', async () => {
  const { requestUri } = await push();
  const target = authorizeWith('rp', requestUri);
  const { done, jar } = await browse(target);
  assert.equal(done.status, 302);
  assert.ok(redirectParams(done.location!).get('code'));
  // Again in the same browser (signed in), and in another one.
  isErrorPage(await page(server, jar, target));
  isErrorPage(await page(server, new CookieJar(), target));
});

test('the consent form replayed after the code is refused: no second code', async () => {
  const { requestUri } = await push();
  const jar = new CookieJar();
  const consent = await signIn(server, jar, authorizeWith('rp', requestUri), await newUser(), PASSWORD);
  const first = await decide(server, jar, consent);
  assert.equal(first.status, 302);
  const second = await decide(server, jar, consent);
  isErrorPage(second);
});

test('a denial uses the request up too', async () => {
  const { requestUri } = await push();
  const jar = new CookieJar();
  const consent = await signIn(server, jar, authorizeWith('rp', requestUri), await newUser(), PASSWORD);
  const denied = await decide(server, jar, consent, { decision: 'deny' });
  assert.equal(denied.status, 302);
  assert.equal(redirectParams(denied.location!).get('error'), 'access_denied');
  assert.equal(redirectParams(denied.location!).get('state'), 'st');
  isErrorPage(await page(server, jar, authorizeWith('rp', requestUri)));
});

test('two browsers racing one request_uri: one code, the other an error page', async () => {
  const { requestUri } = await push();
  const target = authorizeWith('rp', requestUri);
  const jarA = new CookieJar();
  const jarB = new CookieJar();
  const consentA = await signIn(server, jarA, target, await newUser(), PASSWORD);
  const consentB = await signIn(server, jarB, target, await newUser(), PASSWORD);
  const [a, b] = await Promise.all([decide(server, jarA, consentA), decide(server, jarB, consentB)]);
  const outcomes = [a, b].map((p) => p.status).sort();
  assert.deepEqual(outcomes, [302, 400], `${a.status} ${b.status}`);
});

test('a request_uri expires 60 s after the push', async () => {
  const { requestUri } = await push();
  const realNow = Date.now;
  Date.now = () => realNow() + 61_000;
  try {
    isErrorPage(await page(server, new CookieJar(), authorizeWith('rp', requestUri)));
  } finally {
    Date.now = realNow;
  }
  // Within its minute it works (a fresh one), and once opened the user has time to sign in.
  const fresh = await push();
  const jar = new CookieJar();
  const login = await page(server, jar, authorizeWith('rp', fresh.requestUri));
  assert.equal(login.status, 200);
  Date.now = () => realNow() + 120_000;
  try {
    const posted = await page(server, jar, '/oauth/authorize', { request: hiddenField(login.html, 'request'), csrf_token: hiddenField(login.html, 'csrf_token'), step: 'login', username: await newUser(), password: PASSWORD });
    assert.equal(posted.status, 303, posted.html);
  } finally {
    Date.now = realNow;
  }
});

test("another client's request_uri is refused (client_id must be the pushing client's)", async () => {
  const { requestUri } = await push();
  isErrorPage(await page(server, new CookieJar(), authorizeWith('other', requestUri)));
  isErrorPage(await page(server, new CookieJar(), `/oauth/authorize?${new URLSearchParams({ request_uri: requestUri })}`));
  isErrorPage(await page(server, new CookieJar(), authorizeWith('rp', 'urn:ietf:params:oauth:request_uri:unknown')));
  // The owner still can.
  const { done } = await browse(authorizeWith('rp', requestUri));
  assert.equal(done.status, 302);
});

test('a push needs the client authenticated as at the token endpoint (401 invalid_client)', async () => {
  const before = await pushedCount();
  const body = { response_type: 'code', redirect_uri: CB, client_id: 'rp', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' };
  const none = await post(server, 'par', body);
  assert.equal(none.status, 401, JSON.stringify(none.body));
  assert.equal(none.body.error, 'invalid_client');
  const wrong = await post(server, 'par', body, { auth: basic('rp', 'x'.repeat(40)) });
  assert.equal(wrong.status, 401);
  assert.equal(wrong.body.error, 'invalid_client');
  const mismatch = await post(server, 'par', { ...body, client_id: 'other' }, { auth: rpAuth() });
  assert.equal(mismatch.status, 400);
  assert.equal(await pushedCount(), before, 'nothing stored');
  // A public client names itself.
  const pub = await post(server, 'par', { ...body, client_id: 'spa' });
  assert.equal(pub.status, 201, JSON.stringify(pub.body));
});

test('a push with bad parameters is a 400 JSON error, checked as at /authorize, and nothing is stored', async () => {
  const before = await pushedCount();
  const bad = async (params: Record<string, string>, error: string, auth: string | undefined = rpAuth()) => {
    const { challenge } = pkcePair();
    const r = await post(server, 'par', { response_type: 'code', redirect_uri: CB, code_challenge: challenge, code_challenge_method: 'S256', ...params }, auth ? { auth } : {});
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.error, error, JSON.stringify(r.body));
    assert.match(r.headers.get('content-type') ?? '', /application\/json/);
    return r.body;
  };
  await bad({ redirect_uri: 'https://evil.example/cb' }, 'invalid_request');
  await bad({ scope: 'penguins:read' }, 'invalid_scope');
  await bad({ response_type: 'code id_token' }, 'unsupported_response_type');
  await bad({ response_type: 'token' }, 'unauthorized_client');
  await bad({ client_id: 'spa', code_challenge: '', code_challenge_method: '' }, 'invalid_request', undefined);
  await bad({ request_uri: 'urn:ietf:params:oauth:request_uri:abc' }, 'invalid_request');
  await bad({ prompt: 'sometimes' }, 'invalid_request');
  const strictPkce = await addClient(server, 'pkce-strict', ['--grant', 'authorization_code', '--redirect-uri', CB, '--require-pkce']);
  await bad({ code_challenge: '', code_challenge_method: '' }, 'invalid_request', basic('pkce-strict', strictPkce.client_secret!));
  await bad({ response_type: 'code' }, 'unauthorized_client', basic('cc', (await addClient(server, 'cc', ['--grant', 'client_credentials', '--redirect-uri', CB])).client_secret!));
  assert.equal(await pushedCount(), before, 'nothing stored');
});

test('parameters in the query beside request_uri are ignored: the pushed ones count', async () => {
  const { requestUri, verifier } = await push({ scope: 'zoos:read', state: 'pushed-state' });
  const target = authorizeWith('rp', requestUri, { redirect_uri: CB2, scope: 'zoos:read zoos:write admin', state: 'query-state', response_type: 'token', prompt: 'none' });
  const { done, consent } = await browse(target);
  assert.doesNotMatch(consent.html, /value="zoos:write"/);
  assert.equal(done.status, 302, done.html);
  const back = new URL(done.location!);
  assert.equal(back.origin + back.pathname, CB);
  assert.equal(back.searchParams.get('state'), 'pushed-state');
  const r = await post(server, 'token', { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: CB, code_verifier: verifier }, { auth: rpAuth() });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.scope, 'zoos:read');
});

test('a --require-par client: refused without PAR (invalid_request at its redirect URI), served with it', async () => {
  const direct = await page(server, new CookieJar(), `/oauth/authorize?${new URLSearchParams({ client_id: 'strict', response_type: 'code', redirect_uri: CB, state: 's1' })}`);
  assert.equal(direct.status, 302);
  const params = redirectParams(direct.location!);
  assert.equal(params.get('error'), 'invalid_request');
  assert.match(params.get('error_description')!, /push/);
  assert.equal(params.get('state'), 's1');

  const strict = await server.cli(['client', 'add', 'strict2', '--grant', 'authorization_code', '--redirect-uri', CB, '--require-par']);
  const described = JSON.parse(strict.stdout);
  assert.equal(described.require_pushed_authorization_requests, true);
  const r = await post(server, 'par', { response_type: 'code', redirect_uri: CB, state: 's2' }, { auth: basic('strict2', described.client_secret) });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const { done } = await browse(authorizeWith('strict2', r.body.request_uri));
  assert.equal(done.status, 302, done.html);
  assert.ok(redirectParams(done.location!).get('code'));
});

test('prompt=login and max_age in a pushed request: met by the sign-in, no loop', async () => {
  const user = await newUser();
  const jar = new CookieJar();
  // Signed in already; prompt=login asks again.
  await signIn(server, jar, `/oauth/authorize?${new URLSearchParams({ client_id: 'rp', response_type: 'code', redirect_uri: CB, scope: 'zoos:read', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' })}`, user, PASSWORD);
  const { requestUri } = await push({ prompt: 'login consent', max_age: '0' });
  const login = await page(server, jar, authorizeWith('rp', requestUri));
  assert.match(login.html, /name="password"/);
  const posted = await page(server, jar, '/oauth/authorize', { request: hiddenField(login.html, 'request'), csrf_token: hiddenField(login.html, 'csrf_token'), step: 'login', username: user, password: PASSWORD });
  assert.equal(posted.status, 303, posted.html);
  const consent = await page(server, jar, posted.location!);
  assert.equal(consent.status, 200);
  assert.match(consent.html, /name="decision" value="allow"/);
  const done = await decide(server, jar, consent);
  assert.ok(redirectParams(done.location!).get('code'));
});

test('prompt=none pushed: the error goes to the client and uses the request up', async () => {
  const { requestUri } = await push({ prompt: 'none' });
  const target = authorizeWith('rp', requestUri);
  const first = await page(server, new CookieJar(), target);
  assert.equal(first.status, 302);
  assert.equal(redirectParams(first.location!).get('error'), 'login_required');
  isErrorPage(await page(server, new CookieJar(), target));
});

test('PostgreSQL, two instances: pushed on one, used on the other (in the browser step, alternately); once only', { skip: !pgAvailable && 'PostgreSQL not available' }, async () => {
  const database = await createPgDatabase();
  // Two instances of one deployment share its secret key (docs/configuration.md, Secrets at rest).
  const env = { GATEHOUSE_SECRET_KEY: Buffer.alloc(32, 7).toString('base64url') };
  const [a, b] = [await startApp({ database: database.url, env }), await startApp({ database: database.url, env })];
  try {
    const pg = await addClient(a, 'pg-rp', ['--grant', 'authorization_code', '--redirect-uri', CB]);
    await addUser(a, 'pia', PASSWORD);
    const { verifier, challenge } = pkcePair();
    const pushed = await post(a, 'par', { response_type: 'code', redirect_uri: CB, scope: 'zoos:read', state: 'pg', code_challenge: challenge, code_challenge_method: 'S256' }, { auth: basic('pg-rp', pg.client_secret!) });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
    const target = authorizeWith('pg-rp', pushed.body.request_uri);
    const jar = new CookieJar();
    const login = await page(b, jar, target);
    assert.equal(login.status, 200, login.html);
    const posted = await page(a, jar, '/oauth/authorize', { request: hiddenField(login.html, 'request'), csrf_token: hiddenField(login.html, 'csrf_token'), step: 'login', username: 'pia', password: PASSWORD });
    assert.equal(posted.status, 303, posted.html);
    const consent = await page(b, jar, posted.location!);
    const [one, two] = await Promise.all([decide(a, jar, consent), decide(b, jar, consent)]);
    assert.deepEqual([one.status, two.status].sort(), [302, 400], 'one answer across the instances');
    const done = one.status === 302 ? one : two;
    const r = await post(b, 'token', { grant_type: 'authorization_code', code: redirectParams(done.location!).get('code')!, redirect_uri: CB, code_verifier: verifier }, { auth: basic('pg-rp', pg.client_secret!) });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    isErrorPage(await page(a, new CookieJar(), target));
  } finally {
    await a.cleanup();
    await b.cleanup();
    await database.drop();
  }
});

test("a browser app may push from a client's origin (CORS, as at the token endpoint)", async () => {
  const preflight = await server.fetch('/oauth/par', { method: 'OPTIONS', headers: { origin: 'https://rp.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://rp.example');
  const pushed = await server.fetch('/oauth/par', {
    method: 'POST',
    headers: { origin: 'https://rp.example', 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: 'spa', response_type: 'code', redirect_uri: CB, code_challenge: pkcePair().challenge, code_challenge_method: 'S256' }).toString(),
  });
  assert.equal(pushed.status, 201);
  assert.equal(pushed.headers.get('access-control-allow-origin'), 'https://rp.example');
  const elsewhere = await server.fetch('/oauth/par', { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
  assert.equal(elsewhere.headers.get('access-control-allow-origin'), null);
});

test('the implicit grant pushed: tokens in the fragment, then the request_uri is used up', async () => {
  const secret = (await server.cli(['client', 'add', 'rp-implicit-3', '--grant', 'implicit', '--redirect-uri', CB])).stdout;
  const r = await post(server, 'par', { response_type: 'token', redirect_uri: CB, scope: 'zoos:read', state: 'imp' }, { auth: basic('rp-implicit-3', JSON.parse(secret).client_secret) });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const target = authorizeWith('rp-implicit-3', r.body.request_uri);
  const { done, jar } = await browse(target);
  assert.equal(done.status, 302, done.html);
  const fragment = redirectParams(done.location!, 'fragment');
  assert.ok(fragment.get('access_token'));
  assert.equal(fragment.get('state'), 'imp');
  isErrorPage(await page(server, jar, target));
});

test('a JSON push: the same checks; a value that is not text is refused', async () => {
  const { challenge } = pkcePair();
  const ok = await post(server, 'par', { response_type: 'code', redirect_uri: CB, code_challenge: challenge, code_challenge_method: 'S256' }, { auth: rpAuth(), json: true });
  assert.equal(ok.status, 201, JSON.stringify(ok.body));
  const before = await pushedCount();
  const res = await server.fetch('/oauth/par', {
    method: 'POST',
    headers: { authorization: rpAuth(), 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ response_type: 'code', redirect_uri: CB, code_challenge: challenge, code_challenge_method: 'S256', scope: ['zoos:read'] }),
  });
  assert.equal(res.status, 400);
  assert.equal(((await res.json()) as { error: string }).error, 'invalid_request');
  assert.equal(await pushedCount(), before);
});

test('auth.requirePushedAuthorizationRequests: every client must push; the metadata says so', async () => {
  const strict = await startApp({ config: { auth: { requirePushedAuthorizationRequests: true } } });
  try {
    const meta = await strict.json('GET', '/.well-known/oauth-authorization-server');
    assert.equal(meta.body.require_pushed_authorization_requests, true);
    const c = await addClient(strict, 'any', ['--grant', 'authorization_code', '--redirect-uri', CB]);
    const { challenge } = pkcePair();
    const direct = await page(strict, new CookieJar(), `/oauth/authorize?${new URLSearchParams({ client_id: 'any', response_type: 'code', redirect_uri: CB, state: 's', code_challenge: challenge, code_challenge_method: 'S256' })}`);
    assert.equal(direct.status, 302);
    assert.equal(redirectParams(direct.location!).get('error'), 'invalid_request');
    const pushed = await post(strict, 'par', { response_type: 'code', redirect_uri: CB, code_challenge: challenge, code_challenge_method: 'S256' }, { auth: basic('any', c.client_secret!) });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
    const login = await page(strict, new CookieJar(), authorizeWith('any', pushed.body.request_uri));
    assert.equal(login.status, 200);
    assert.match(login.html, /name="password"/);
  } finally {
    await strict.cleanup();
  }
});

test('attack: a push over 16 KiB is 413 and stores nothing; parameters no authorization request reads are dropped before storing (resource repeats kept)', async () => {
  const before = await pushedCount();
  const { challenge } = pkcePair();
  const base = { response_type: 'code', redirect_uri: CB, scope: 'zoos:read', state: 'st', code_challenge: challenge, code_challenge_method: 'S256' };
  const big = await post(server, 'par', { ...base, padding: 'x'.repeat(17_000) }, { auth: rpAuth() });
  assert.equal(big.status, 413);
  assert.equal(await pushedCount(), before, 'nothing stored');
  const raw = `${new URLSearchParams({ ...base, junk: 'y'.repeat(10_000), other_junk: 'z' })}&resource=${encodeURIComponent(`${server.url}/v1`)}&resource=${encodeURIComponent(`${server.url}/v1`)}`;
  const r = await post(server, 'par', {}, { auth: rpAuth(), raw });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const rows = await sqlOf(server.ctx.store).selectFrom('pushed_requests').select(['params']).where('client_id', '=', 'rp').orderBy('created_at', 'desc').execute();
  const stored = JSON.parse(rows[0].params) as [string, string][];
  assert.deepEqual(stored.map(([name]) => name).sort(), ['client_id', 'code_challenge', 'code_challenge_method', 'redirect_uri', 'resource', 'resource', 'response_type', 'scope', 'state']);
});

test('attack: a public client pushes at most 30 requests in 10 minutes from one IP (429, Retry-After, nothing stored); a confidential client is not throttled', async () => {
  const own = await startApp();
  try {
    await addClient(own, 'spa', ['--public', '--grant', 'authorization_code', '--redirect-uri', CB]);
    const conf = await addClient(own, 'web', ['--grant', 'authorization_code', '--redirect-uri', CB]);
    const count = async () => Number((await sqlOf(own.ctx.store).selectFrom('pushed_requests').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const params = () => ({ response_type: 'code', redirect_uri: CB, code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
    // A refused push (bad parameters) stores nothing and does not count.
    for (let i = 0; i < 5; i++) assert.equal((await post(own, 'par', { ...params(), client_id: 'spa', redirect_uri: 'https://evil.example/' })).status, 400);
    for (let i = 0; i < 30; i++) assert.equal((await post(own, 'par', { ...params(), client_id: 'spa' })).status, 201, `push ${i + 1}`);
    const stored = await count();
    const res = await post(own, 'par', { ...params(), client_id: 'spa' });
    assert.equal(res.status, 429);
    assert.equal(res.body.error, 'too_many_requests');
    assert.ok(Number(res.headers.get('retry-after')) > 0);
    assert.equal(await count(), stored, 'nothing stored');
    for (let i = 0; i < 35; i++) assert.equal((await post(own, 'par', params(), { auth: basic('web', conf.client_secret!) })).status, 201, `confidential push ${i + 1}`);
  } finally {
    await own.cleanup();
  }
});
