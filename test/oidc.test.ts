// OpenID Connect (docs/oauth.md, "Sign in with gatehouse"): two third-party relying parties,
// openid-client and oauth4webapi, discover gatehouse and run the code flow with nonce and PKCE,
// validate the ID token and userinfo without any relaxed check, refresh and log out; then the
// cases of the OpenID Foundation's Basic OP plan: prompt, max_age, login_hint, id_token_hint,
// code reuse, claims per scope, ES256 per client, key rotation, request objects refused.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as client from 'openid-client';
import * as oauth from 'oauth4webapi';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { startApp, type InProcessApp } from './helpers/app.js';
import { createPgDatabase, pgAvailable } from './helpers/server.js';
import { CookieJar, addClient, authorizeUrl, decide, hiddenField, page, pkcePair, post, redirectParams, signIn, sleep, basic, type RegisteredClient } from './helpers/oauth.js';
import { createUser } from '../src/authserver/model/users.js';
import { rotateIdTokenKeys } from '../src/authserver/oidc/keys.js';
import { listIdTokenKeys } from '../src/authserver/store/id-token-keys.js';

let server: InProcessApp;
let rp: RegisteredClient;
let es: RegisteredClient;
const CB = 'https://rp.example/callback';
const LOGGED_OUT = 'https://rp.example/logged-out';
const PASSWORD = 'olivia-password-1';

const inProcess = (url: string, init?: RequestInit) => server.fetch(url, (init ?? {}) as object) as unknown as Promise<Response>;

before(async () => {
  server = await startApp();
  await createUser(server.ctx, 'olivia', PASSWORD, { email: 'olivia@example.org', emailVerified: true, name: 'Olivia Okafor' });
  await createUser(server.ctx, 'oscar', 'oscar-password-1');
  rp = await addClient(server, 'rp', [
    '--grant', 'authorization_code', '--grant', 'refresh_token', '--grant', 'client_credentials',
    '--redirect-uri', CB, '--post-logout-redirect-uri', LOGGED_OUT, '--name', 'Relying Party',
  ]);
  es = await addClient(server, 'rp-es', ['--grant', 'authorization_code', '--redirect-uri', CB, '--id-token-signed-response-alg', 'ES256']);
});
after(async () => {
  await server.cleanup();
});

/** The code flow in a browser (the jar) up to the redirect back to the client, consenting to everything offered. */
async function authorize(params: Record<string, string | undefined>, jar = new CookieJar(), username = 'olivia', password = PASSWORD) {
  const consent = await signIn(server, jar, authorizeUrl({ response_type: 'code', redirect_uri: CB, state: 'st', ...params }), username, password);
  const done = await decide(server, jar, consent);
  assert.equal(done.status, 302, done.html);
  return { location: new URL(done.location!), jar };
}

async function exchange(code: string, c: RegisteredClient = rp, verifier?: string) {
  const r = await post(server, 'token', { grant_type: 'authorization_code', code, redirect_uri: CB, ...(verifier ? { code_verifier: verifier } : {}) }, { auth: basic(c.client_id, c.client_secret!) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as { access_token: string; refresh_token?: string; id_token?: string; scope: string };
}

async function jwks() {
  const r = await server.json('GET', '/oauth/jwks');
  assert.equal(r.status, 200);
  return createLocalJWKSet(r.body);
}

test('openid-client: discovery, code flow with nonce and PKCE, ID token, userinfo, refresh, logout', async () => {
  const options = { [client.customFetch]: inProcess } as client.DiscoveryRequestOptions;
  const config = await client.discovery(new URL(server.url), 'rp', undefined, client.ClientSecretBasic(rp.client_secret!), options);
  config[client.customFetch] = inProcess;
  const meta = config.serverMetadata();
  assert.equal(meta.issuer, server.url);
  assert.equal(meta.userinfo_endpoint, `${server.url}/oauth/userinfo`);
  assert.equal(meta.end_session_endpoint, `${server.url}/oauth/logout`);
  assert.deepEqual(meta.id_token_signing_alg_values_supported, ['RS256', 'ES256']);
  assert.deepEqual(meta.subject_types_supported, ['public']);

  const verifier = client.randomPKCECodeVerifier();
  const nonce = client.randomNonce();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: CB,
    scope: 'openid profile email zoos:read',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    nonce,
    state,
  });
  const jar = new CookieJar();
  const consent = await signIn(server, jar, url.pathname + url.search, 'olivia', PASSWORD);
  assert.match(consent.html, /Your identity/);
  assert.match(consent.html, /Your e-mail address, and whether it is verified/);
  const done = await decide(server, jar, consent);
  assert.equal(done.status, 302);
  const tokens = await client.authorizationCodeGrant(config, new URL(done.location!), { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true });
  const claims = tokens.claims()!;
  assert.match(claims.sub, /^user:/);
  assert.equal(claims.aud, 'rp');
  assert.equal(claims.azp, 'rp');
  assert.equal(claims.nonce, nonce);
  assert.equal(typeof claims.auth_time, 'number');
  assert.equal(typeof claims.sid, 'string');
  assert.equal(typeof claims.at_hash, 'string');
  assert.deepEqual(claims.amr, ['pwd'], 'signed in with a password (RFC 8176)');
  assert.equal(decodeProtectedHeader(tokens.id_token!).alg, 'RS256');

  const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
  assert.deepEqual(
    { ...info, updated_at: typeof info.updated_at },
    { sub: claims.sub, preferred_username: 'olivia', name: 'Olivia Okafor', updated_at: 'number', email: 'olivia@example.org', email_verified: true },
  );

  // A refresh returns a new ID token about the same sign-in (openid-client checks sub, iss, aud, auth_time).
  const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
  const again = refreshed.claims()!;
  assert.equal(again.sub, claims.sub);
  assert.equal(again.auth_time, claims.auth_time);
  assert.equal(again.sid, claims.sid);
  assert.equal(again.nonce, undefined);
  assert.deepEqual(again.amr, ['pwd']);

  // RP-initiated logout: the user is asked, then sent back to the registered address with state.
  const end = client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: LOGGED_OUT, state: 'bye' });
  const question = await page(server, jar, end.pathname + end.search);
  assert.equal(question.status, 200);
  assert.match(question.html, /Sign out of gatehouse\?/);
  const out = await page(server, jar, '/oauth/logout', {
    id_token_hint: hiddenField(question.html, 'id_token_hint'),
    post_logout_redirect_uri: hiddenField(question.html, 'post_logout_redirect_uri'),
    state: hiddenField(question.html, 'state'),
    csrf_token: hiddenField(question.html, 'csrf_token'),
    step: 'confirm',
    decision: 'logout',
  });
  assert.equal(out.status, 303, out.html);
  assert.equal(out.location, `${LOGGED_OUT}?state=bye`);
  // Signed out: a silent request now answers login_required.
  const silent = await page(server, jar, authorizeUrl({ response_type: 'code', client_id: 'rp', redirect_uri: CB, scope: 'openid', prompt: 'none', state: 's2' }));
  assert.equal(silent.status, 302);
  assert.equal(redirectParams(silent.location!).get('error'), 'login_required');
  assert.equal(redirectParams(silent.location!).get('iss'), server.url);
});

test('oauth4webapi: OpenID discovery, ID token with nonce, userinfo', async () => {
  const opts = { [oauth.customFetch]: inProcess } as const;
  const issuer = new URL(server.url);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...opts }));
  const c: oauth.Client = { client_id: 'rp' };
  const verifier = oauth.generateRandomCodeVerifier();
  const nonce = oauth.generateRandomNonce();
  const { location } = await authorize({
    client_id: 'rp',
    scope: 'openid email',
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const params = oauth.validateAuthResponse(as, c, location, 'st');
  const response = await oauth.authorizationCodeGrantRequest(as, c, oauth.ClientSecretBasic(rp.client_secret!), params, CB, verifier, opts);
  const result = await oauth.processAuthorizationCodeResponse(as, c, response, { expectedNonce: nonce, requireIdToken: true });
  const claims = oauth.getValidatedIdTokenClaims(result)!;
  assert.equal(claims.iss, server.url);
  // oauth4webapi leaves the signature to the application: verify it against the JWKS.
  await jwtVerify(result.id_token!, await jwks(), { issuer: server.url, audience: 'rp' });
  const info = await oauth.processUserInfoResponse(as, c, claims.sub, await oauth.userInfoRequest(as, c, result.access_token, opts));
  assert.deepEqual(info, { sub: claims.sub, email: 'olivia@example.org', email_verified: true });
});

test('userinfo: the granted claims only, over GET and POST (header or body); refusals in RFC 6750 form', async () => {
  const only = await exchange(redirectParams((await authorize({ client_id: 'rp', scope: 'openid zoos:read' })).location.href).get('code')!);
  const bearer = (token: string) => ({ authorization: `Bearer ${token}`, accept: 'application/json' });
  const get = await server.json('GET', '/oauth/userinfo', undefined, bearer(only.access_token));
  assert.equal(get.status, 200);
  assert.deepEqual(Object.keys(get.body), ['sub'], 'openid alone: sub only');
  assert.equal(get.headers.get('cache-control'), 'no-store');

  const profile = await exchange(redirectParams((await authorize({ client_id: 'rp', scope: 'openid profile' })).location.href).get('code')!);
  const viaHeader = await server.fetch('/oauth/userinfo', { method: 'POST', headers: bearer(profile.access_token) });
  const body = await viaHeader.json();
  assert.deepEqual(Object.keys(body).sort(), ['name', 'preferred_username', 'sub', 'updated_at']);
  const viaBody = await post(server, 'userinfo', { access_token: profile.access_token });
  assert.deepEqual(viaBody.body, body);

  const both = await server.fetch('/oauth/userinfo', {
    method: 'POST',
    headers: { ...bearer(profile.access_token), 'content-type': 'application/x-www-form-urlencoded' },
    body: `access_token=${profile.access_token}`,
  });
  assert.equal(both.status, 400);
  const none = await server.json('GET', '/oauth/userinfo');
  assert.equal(none.status, 401);
  assert.equal(none.headers.get('www-authenticate'), 'Bearer', 'no token: a challenge without an error code (RFC 6750 §3.1)');
  const basicAuth = await server.json('GET', '/oauth/userinfo', undefined, { authorization: basic('rp', rp.client_secret!) });
  assert.equal(basicAuth.status, 400);
  assert.equal(basicAuth.body.error, 'invalid_request');
  const inJson = await server.json('POST', '/oauth/userinfo', { access_token: profile.access_token });
  assert.equal(inJson.status, 401, 'a token in a JSON body is not read (RFC 6750 §2.2: form bodies only)');
  const bogus = await server.json('GET', '/oauth/userinfo', undefined, bearer('not-a-token'));
  assert.equal(bogus.status, 401);
  assert.equal(bogus.body.error, 'invalid_token');

  // A token without openid (a client's own token too) may not read identities.
  const noOpenid = await exchange(redirectParams((await authorize({ client_id: 'rp', scope: 'zoos:read' })).location.href).get('code')!);
  const refused = await server.json('GET', '/oauth/userinfo', undefined, bearer(noOpenid.access_token));
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error, 'insufficient_scope');
  assert.match(refused.headers.get('www-authenticate')!, /insufficient_scope/);
  assert.equal(noOpenid.id_token, undefined, 'no openid, no ID token');
  // client_credentials cannot ask for an identity.
  const cc = await post(server, 'token', { grant_type: 'client_credentials', scope: 'openid' }, { auth: basic('rp', rp.client_secret!) });
  assert.equal(cc.status, 400);
  assert.equal(cc.body.error, 'invalid_scope');

  // A user without e-mail gets no email claim, only what they have.
  const oscar = await exchange(redirectParams((await authorize({ client_id: 'rp', scope: 'openid email profile' }, new CookieJar(), 'oscar', 'oscar-password-1')).location.href).get('code')!);
  const theirs = await server.json('GET', '/oauth/userinfo', undefined, bearer(oscar.access_token));
  assert.deepEqual(Object.keys(theirs.body).sort(), ['preferred_username', 'sub', 'updated_at']);
});

test('prompt=none: login_required, consent_required, then a code once consent is remembered', async () => {
  const base = { response_type: 'code', client_id: 'rp', redirect_uri: CB, scope: 'openid', prompt: 'none', state: 'p' };
  const anon = await page(server, new CookieJar(), authorizeUrl(base));
  assert.equal(redirectParams(anon.location!).get('error'), 'login_required');
  assert.equal(redirectParams(anon.location!).get('state'), 'p');

  const jar = new CookieJar();
  // Signed in as oscar, who never authorized rp for "openid orders:read": consent_required.
  // (A grant exists once its code is redeemed.)
  await exchange(redirectParams((await authorize({ client_id: 'rp', scope: 'openid' }, jar, 'oscar', 'oscar-password-1')).location.href).get('code')!);
  const unconsented = await page(server, jar, authorizeUrl({ ...base, scope: 'openid orders:read' }));
  assert.equal(redirectParams(unconsented.location!).get('error'), 'consent_required');
  const remembered = await page(server, jar, authorizeUrl(base));
  assert.equal(remembered.status, 302);
  const code = redirectParams(remembered.location!).get('code');
  assert.ok(code, remembered.location!);
  const tokens = await exchange(code!);
  assert.ok(tokens.id_token);
});

test('prompt=login and max_age sign the user in again, and auth_time moves; login_hint fills the name', async () => {
  const jar = new CookieJar();
  const first = await exchange(redirectParams((await authorize({ client_id: 'rp', scope: 'openid' }, jar)).location.href).get('code')!);
  const firstAuth = decodeJwt(first.id_token!).auth_time as number;
  await sleep(1100);

  const login = await page(server, jar, authorizeUrl({ response_type: 'code', client_id: 'rp', redirect_uri: CB, scope: 'openid', prompt: 'login', state: 'x', login_hint: 'olivia' }));
  assert.equal(login.status, 200);
  assert.match(login.html, /name="password"/, 'prompt=login shows the login page even with a session');
  assert.match(login.html, /name="username"[^>]*value="olivia"/, 'login_hint fills the user name');
  const posted = await page(server, jar, '/oauth/authorize', {
    request: hiddenField(login.html, 'request'),
    csrf_token: hiddenField(login.html, 'csrf_token'),
    step: 'login',
    username: 'olivia',
    password: PASSWORD,
  });
  assert.equal(posted.status, 303);
  assert.doesNotMatch(posted.location!, /prompt=login/, 'the sign-in met prompt=login: no loop');
  const after = await page(server, jar, posted.location!);
  // Remembered consent for "openid": straight back with a code.
  assert.equal(after.status, 302, after.html);
  const second = await exchange(redirectParams(after.location!).get('code')!);
  assert.ok((decodeJwt(second.id_token!).auth_time as number) > firstAuth, 'auth_time is the new sign-in');

  // max_age: a sign-in older than it asks again (prompt=none: login_required); a fresh one passes.
  await sleep(1100);
  const stale = { response_type: 'code', client_id: 'rp', redirect_uri: CB, scope: 'openid', max_age: '1', state: 'm' };
  const again = await page(server, jar, authorizeUrl(stale));
  assert.match(again.html, /name="password"/);
  const silent = await page(server, jar, authorizeUrl({ ...stale, prompt: 'none' }));
  assert.equal(redirectParams(silent.location!).get('error'), 'login_required');
  const fresh = await page(server, jar, authorizeUrl({ ...stale, max_age: '3600', prompt: 'none' }));
  assert.ok(redirectParams(fresh.location!).get('code'), 'a sign-in within max_age passes silently');
  const bad = await page(server, jar, authorizeUrl({ ...stale, max_age: 'soon' }));
  assert.equal(redirectParams(bad.location!).get('error'), 'invalid_request');
});

test('id_token_hint: the same user passes silently, another user or a forged hint does not', async () => {
  const jar = new CookieJar();
  const mine = await exchange(redirectParams((await authorize({ client_id: 'rp', scope: 'openid' }, jar)).location.href).get('code')!);
  const base = { response_type: 'code', client_id: 'rp', redirect_uri: CB, scope: 'openid', prompt: 'none', state: 'h' };
  const same = await page(server, jar, authorizeUrl({ ...base, id_token_hint: mine.id_token }));
  assert.ok(redirectParams(same.location!).get('code'), same.location!);

  const oscarJar = new CookieJar();
  const theirs = await exchange(redirectParams((await authorize({ client_id: 'rp', scope: 'openid' }, oscarJar, 'oscar', 'oscar-password-1')).location.href).get('code')!);
  const other = await page(server, jar, authorizeUrl({ ...base, id_token_hint: theirs.id_token }));
  assert.equal(redirectParams(other.location!).get('error'), 'login_required');

  const [h, p] = mine.id_token!.split('.');
  const forged = await page(server, jar, authorizeUrl({ ...base, id_token_hint: `${h}.${p}.${'A'.repeat(342)}` }));
  assert.equal(redirectParams(forged.location!).get('error'), 'invalid_request');
  // A hint issued to another client is no hint for this one.
  const esCode = await exchange(redirectParams((await authorize({ client_id: 'rp-es', scope: 'openid' }, jar)).location.href).get('code')!, es);
  const foreign = await page(server, jar, authorizeUrl({ ...base, id_token_hint: esCode.id_token }));
  assert.equal(redirectParams(foreign.location!).get('error'), 'invalid_request');
});

test('a code used twice fails and revokes what the first use issued', async () => {
  const code = redirectParams((await authorize({ client_id: 'rp', scope: 'openid' })).location.href).get('code')!;
  const tokens = await exchange(code);
  const replay = await post(server, 'token', { grant_type: 'authorization_code', code, redirect_uri: CB }, { auth: basic('rp', rp.client_secret!) });
  assert.equal(replay.status, 400);
  assert.equal(replay.body.error, 'invalid_grant');
  const info = await server.json('GET', '/oauth/userinfo', undefined, { authorization: `Bearer ${tokens.access_token}` });
  assert.equal(info.status, 401, 'the first token no longer works');
});

test('ES256 for a client that registered it; RS256 otherwise; both verify against the JWKS', async () => {
  const tokens = await exchange(redirectParams((await authorize({ client_id: 'rp-es', scope: 'openid' })).location.href).get('code')!, es);
  const header = decodeProtectedHeader(tokens.id_token!);
  assert.equal(header.alg, 'ES256');
  const { payload } = await jwtVerify(tokens.id_token!, await jwks(), { issuer: server.url, audience: 'rp-es', algorithms: ['ES256'] });
  assert.equal(payload.azp, 'rp-es');
});

test('key rotation: an ID token signed before it still verifies; new ones use the new key', async () => {
  const before = await exchange(redirectParams((await authorize({ client_id: 'rp', scope: 'openid' })).location.href).get('code')!);
  const oldKid = decodeProtectedHeader(before.id_token!).kid;
  await rotateIdTokenKeys(server.ctx);
  const after = await exchange(redirectParams((await authorize({ client_id: 'rp', scope: 'openid' })).location.href).get('code')!);
  const newKid = decodeProtectedHeader(after.id_token!).kid;
  assert.notEqual(newKid, oldKid);
  const set = await jwks();
  await jwtVerify(before.id_token!, set, { issuer: server.url, audience: 'rp' });
  await jwtVerify(after.id_token!, set, { issuer: server.url, audience: 'rp' });
  const listed = (await server.json('GET', '/oauth/jwks')).body.keys.map((k: { kid: string }) => k.kid);
  assert.ok(listed.includes(oldKid) && listed.includes(newKid));
});

test('request objects are refused with their own errors; a relying party may POST the request', async () => {
  const base = { response_type: 'code', client_id: 'rp', redirect_uri: CB, scope: 'openid', state: 'r' };
  const byValue = await page(server, new CookieJar(), authorizeUrl({ ...base, request: 'eyJhbGciOiJub25lIn0.e30.' }));
  assert.equal(redirectParams(byValue.location!).get('error'), 'request_not_supported');
  const byRef = await page(server, new CookieJar(), authorizeUrl({ ...base, request_uri: 'https://rp.example/req' }));
  assert.equal(redirectParams(byRef.location!).get('error'), 'request_uri_not_supported');

  // A POST goes on as the GET (a cross-site POST carries no SameSite=Lax cookie).
  const posted = await page(server, new CookieJar(), '/oauth/authorize', { ...base, login_hint: 'oscar' });
  assert.equal(posted.status, 303);
  const target = new URL(posted.location!, server.url);
  assert.equal(target.pathname, '/oauth/authorize');
  assert.equal(target.searchParams.get('login_hint'), 'oscar');
  const shown = await page(server, new CookieJar(), posted.location!);
  assert.match(shown.html, /name="username"[^>]*value="oscar"/);
  const long = await page(server, new CookieJar(), authorizeUrl({ ...base, nonce: 'n'.repeat(513) }));
  assert.equal(redirectParams(long.location!).get('error'), 'invalid_request');
});

test('OpenID requests ignore scope values they do not know; openid cannot be unticked', async () => {
  const { location } = await authorize({ client_id: 'rp', scope: 'openid offline_access address' });
  const tokens = await exchange(redirectParams(location.href).get('code')!);
  assert.equal(tokens.scope, 'openid');
  assert.ok(tokens.id_token);
  const plain = await page(server, new CookieJar(), authorizeUrl({ response_type: 'code', client_id: 'rp', redirect_uri: CB, scope: 'zoos:read offline_access', state: 'u' }));
  assert.equal(redirectParams(plain.location!).get('error'), 'invalid_scope', 'a plain OAuth request still refuses unknown scopes');

  const jar = new CookieJar();
  const consent = await signIn(server, jar, authorizeUrl({ response_type: 'code', client_id: 'rp', redirect_uri: CB, scope: 'openid profile', state: 'u2' }), 'olivia', PASSWORD);
  assert.match(consent.html, /<input type="checkbox" id="[^"]+" checked disabled> Know who you are/);
  const done = await decide(server, jar, consent, { scope: ['profile'] });
  const granted = await exchange(redirectParams(done.location!).get('code')!);
  assert.equal(granted.scope, 'openid profile', 'the sign-in comes with any Allow');
  assert.ok(granted.id_token);
});

test('a sign-in as another user than id_token_hint names is refused on the login page', async () => {
  const olivia = await exchange(redirectParams((await authorize({ client_id: 'rp', scope: 'openid' })).location.href).get('code')!);
  const jar = new CookieJar();
  const login = await page(server, jar, authorizeUrl({ response_type: 'code', client_id: 'rp', redirect_uri: CB, scope: 'openid', state: 'h', id_token_hint: olivia.id_token }));
  assert.match(login.html, /name="password"/);
  const posted = await page(server, jar, '/oauth/authorize', {
    request: hiddenField(login.html, 'request'),
    csrf_token: hiddenField(login.html, 'csrf_token'),
    step: 'login',
    username: 'oscar',
    password: 'oscar-password-1',
  });
  assert.equal(posted.status, 401);
  assert.match(posted.html, /asked for another account/);
  const again = await page(server, jar, '/oauth/authorize', {
    request: hiddenField(posted.html, 'request'),
    csrf_token: hiddenField(posted.html, 'csrf_token'),
    step: 'login',
    username: 'olivia',
    password: PASSWORD,
  });
  assert.equal(again.status, 303);
  const back = await page(server, jar, again.location!);
  assert.ok(redirectParams(back.location!).get('code'), back.html);
});

test('logout: only registered addresses; without a session straight back; "stay" changes nothing', async () => {
  const { jar } = await authorize({ client_id: 'rp', scope: 'openid' });
  const unregistered = await page(server, jar, `/oauth/logout?client_id=rp&post_logout_redirect_uri=${encodeURIComponent('https://evil.example/')}`);
  assert.equal(unregistered.status, 400);
  assert.equal(unregistered.location, null);
  const noClient = await page(server, jar, `/oauth/logout?post_logout_redirect_uri=${encodeURIComponent(LOGGED_OUT)}`);
  assert.equal(noClient.status, 400);
  const garbage = await page(server, jar, '/oauth/logout?id_token_hint=garbage');
  assert.equal(garbage.status, 400);

  const question = await page(server, jar, '/oauth/logout?client_id=rp');
  const form = { client_id: 'rp', csrf_token: hiddenField(question.html, 'csrf_token'), step: 'confirm' };
  const forged = await page(server, jar, '/oauth/logout', { ...form, csrf_token: 'x', decision: 'logout' });
  assert.equal(forged.status, 403, 'no CSRF token, no sign-out');
  const stay = await page(server, jar, '/oauth/logout', { ...form, decision: 'stay' });
  assert.match(stay.html, /still signed in/);
  const silent = await page(server, jar, authorizeUrl({ response_type: 'code', client_id: 'rp', redirect_uri: CB, scope: 'openid', prompt: 'none' }));
  assert.ok(redirectParams(silent.location!).get('code'), 'still signed in');
  const out = await page(server, jar, '/oauth/logout', { ...form, decision: 'logout' });
  assert.match(out.html, /You are signed out/);
  const anon = await page(server, new CookieJar(), `/oauth/logout?client_id=rp&post_logout_redirect_uri=${encodeURIComponent(LOGGED_OUT)}&state=s`);
  assert.equal(anon.status, 303);
  assert.equal(anon.location, `${LOGGED_OUT}?state=s`);
  // A relying party's POST is asked again as a GET (which carries the browser's Lax cookies).
  const rpPost = await page(server, new CookieJar(), '/oauth/logout', { client_id: 'rp', post_logout_redirect_uri: LOGGED_OUT, state: 's' });
  assert.equal(rpPost.status, 303);
  assert.equal(rpPost.location, `/oauth/logout?client_id=rp&post_logout_redirect_uri=${encodeURIComponent(LOGGED_OUT)}&state=s`);
});

test("logout with someone else's ID token ends only this browser's session, never theirs", async () => {
  const oliviaJar = new CookieJar();
  const hers = await exchange(redirectParams((await authorize({ client_id: 'rp', scope: 'openid' }, oliviaJar)).location.href).get('code')!);
  const { jar } = await authorize({ client_id: 'rp', scope: 'openid' }, new CookieJar(), 'oscar', 'oscar-password-1');
  const question = await page(server, jar, `/oauth/logout?id_token_hint=${hers.id_token}`);
  const out = await page(server, jar, '/oauth/logout', { id_token_hint: hers.id_token!, csrf_token: hiddenField(question.html, 'csrf_token'), step: 'confirm', decision: 'logout' });
  assert.match(out.html, /You are signed out/);
  const silent = await page(server, oliviaJar, authorizeUrl({ response_type: 'code', client_id: 'rp', redirect_uri: CB, scope: 'openid', prompt: 'none' }));
  assert.ok(redirectParams(silent.location!).get('code'), "olivia's session survives");
});

test('the first keys are made once, however many requests ask for them at once', async () => {
  const fresh = await startApp();
  try {
    const sets = await Promise.all(Array.from({ length: 12 }, () => fresh.json('GET', '/oauth/jwks')));
    const kids = new Set(sets.flatMap((r) => r.body.keys.map((k: { kid: string }) => k.kid)));
    assert.equal(kids.size, 2, 'one RS256 and one ES256 key');
    assert.deepEqual((await listIdTokenKeys(fresh.ctx.store, 0)).map((k) => k.alg).sort(), ['ES256', 'RS256']);
  } finally {
    await fresh.cleanup();
  }
});

test('PKCE pairs still work with openid; the password grant issues no ID token', async () => {
  const { verifier, challenge } = pkcePair();
  const code = redirectParams((await authorize({ client_id: 'rp', scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' })).location.href).get('code')!;
  assert.ok((await exchange(code, rp, verifier)).id_token);
});

test('PostgreSQL: the code flow with an ID token, userinfo and a refresh; keys made once for two instances', { skip: !pgAvailable && 'PostgreSQL not available' }, async () => {
  const database = await createPgDatabase();
  // Two instances of one deployment share its secret key (docs/configuration.md, Secrets at rest).
  const env = { GATEHOUSE_SECRET_KEY: Buffer.alloc(32, 9).toString('base64url') };
  const [a, b] = [await startApp({ database: database.url, env }), await startApp({ database: database.url, env })];
  const saved = server;
  try {
    // Two instances ask for the first keys at once: one current key per algorithm stands.
    const sets = await Promise.all([a, b, a, b].map((s) => s.json('GET', '/oauth/jwks')));
    assert.equal(new Set(sets.flatMap((r) => r.body.keys.map((k: { kid: string }) => k.kid))).size, 2);
    server = a;
    await createUser(a.ctx, 'pat', 'pat-password-1', { email: 'pat@example.org', emailVerified: true });
    const c = await addClient(a, 'rp-pg', ['--grant', 'authorization_code', '--grant', 'refresh_token', '--redirect-uri', CB]);
    const { location } = await authorize({ client_id: 'rp-pg', scope: 'openid email', nonce: 'n-pg' }, new CookieJar(), 'pat', 'pat-password-1');
    const tokens = await exchange(redirectParams(location.href).get('code')!, c);
    // The other instance verifies it against its own JWKS and answers userinfo.
    server = b;
    const { payload } = await jwtVerify(tokens.id_token!, await jwks(), { issuer: b.url, audience: 'rp-pg' });
    assert.equal(payload.nonce, 'n-pg');
    const info = await b.json('GET', '/oauth/userinfo', undefined, { authorization: `Bearer ${tokens.access_token}` });
    assert.deepEqual(info.body, { sub: payload.sub, email: 'pat@example.org', email_verified: true });
    const refreshed = await post(b, 'token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }, { auth: basic('rp-pg', c.client_secret!) });
    assert.equal(refreshed.status, 200);
    assert.equal(decodeJwt(refreshed.body.id_token).auth_time, payload.auth_time);
  } finally {
    server = saved;
    await a.cleanup();
    await b.cleanup();
    await database.drop();
  }
});
