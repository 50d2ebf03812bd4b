// GET/POST /oauth/authorize: login, consent, the code and implicit grants, and the attacks on them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import {
  CookieJar,
  addClient,
  addUser,
  authorizeUrl,
  basic,
  decide,
  hiddenField,
  introspect,
  obtainCode,
  page,
  pkcePair,
  post,
  redirectParams,
  signIn,
  sleep,
  type RegisteredClient,
} from './helpers/oauth.js';

let server: InProcessApp;
let web: RegisteredClient;
let single: RegisteredClient;
let other: RegisteredClient;
const WEB_CB = 'https://client.example/cb';
const WEB_OTHER = 'https://client.example/other';
const SINGLE_CB = 'https://single.example/cb?x=1';
const SPA_CB = 'https://spa.example/cb';
const PASSWORD = 'bob-password-123';
const user = { username: 'bob', password: PASSWORD };

before(async () => {
  server = await startApp();
  await addUser(server, 'bob', PASSWORD);
  // It introspects the public clients' tokens too: it is registered as a resource server.
  web = await addClient(server, 'web', ['--grant', 'authorization_code', '--grant', 'refresh_token', '--redirect-uri', WEB_CB, '--redirect-uri', WEB_OTHER, '--name', 'Web <App> & "Co"', '--introspect']);
  single = await addClient(server, 'single', ['--grant', 'authorization_code', '--grant', 'implicit', '--redirect-uri', SINGLE_CB, '--scope', 'zoos:read zoos:write orders:read']);
  await addClient(server, 'spa', ['--public', '--grant', 'authorization_code', '--grant', 'implicit', '--grant', 'refresh_token', '--redirect-uri', SPA_CB]);
  other = await addClient(server, 'other', ['--grant', 'authorization_code', '--redirect-uri', WEB_CB]);
  await addClient(server, 'machine', ['--grant', 'client_credentials', '--redirect-uri', 'https://machine.example/cb']);
});
after(async () => {
  await server.cleanup();
});

const webAuth = () => basic('web', web.client_secret!);

async function exchange(code: string, params: Record<string, string> = {}, auth = webAuth()) {
  return post(server, 'token', { grant_type: 'authorization_code', code, ...params }, { auth });
}

test('the login page: a labelled form, CSRF token, strict CSP, no framing, browser cookie flags', async () => {
  const jar = new CookieJar();
  const p = await page(server, jar, authorizeUrl({ response_type: 'code', client_id: 'web', redirect_uri: WEB_CB, state: 's1' }));
  assert.equal(p.status, 200);
  assert.match(p.headers.get('content-type')!, /^text\/html/);
  assert.match(p.html, /<input type="text" id="username" name="username"/);
  assert.match(p.html, /<input type="password" id="password" name="password"/);
  assert.match(p.html, /<label class="field" for="username">/);
  assert.match(p.html, /<label class="field" for="password">/);
  assert.ok(hiddenField(p.html, 'csrf_token'));
  const csp = p.headers.get('content-security-policy')!;
  assert.match(csp, /frame-ancestors 'none'/);
  assert.match(csp, /default-src 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline/);
  // No inline script: only the passkey button's files, from this origin (docs/oauth.md, Passkeys).
  assert.doesNotMatch(p.html, /<script(?![^>]*\ssrc="\/admin\/assets\/(webauthn|passkeys)\.js\?v(=|&#61;)[^"]+" defer><\/script>)/i);
  assert.match(csp, /script-src 'self';/);
  assert.equal(p.headers.get('x-frame-options'), 'DENY');
  assert.equal(p.headers.get('cache-control'), 'no-store');
  // The client's name is escaped.
  assert.match(p.html, /Web &#60;App&#62; &#38; &#34;Co&#34;/);
  assert.doesNotMatch(p.html, /Web <App>/);
  // __Host-: Secure, Path=/, no Domain — no other host (a sibling subdomain, a plain-HTTP page) can set or shadow it.
  const cookie = jar.raw.find((c) => c.startsWith('__Host-gatehouse_browser='))!;
  assert.match(cookie, /^__Host-gatehouse_browser=[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
});

test('signing in sets a session cookie (HttpOnly, Secure, SameSite=Lax) and shows the consent page', async () => {
  const jar = new CookieJar();
  const consent = await signIn(server, jar, authorizeUrl({ response_type: 'code', client_id: 'web', redirect_uri: WEB_CB, state: 's2' }), 'bob', PASSWORD);
  const session = jar.raw.find((c) => c.startsWith('__Host-gatehouse_session='))!;
  assert.match(session, /^__Host-gatehouse_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; Secure; SameSite=Lax; Max-Age=\d+$/);
  assert.match(consent.html, /Web &#60;App&#62;/);
  assert.match(consent.html, /Signed in as <strong>bob<\/strong>/);
  const offered = [...consent.html.matchAll(/<input type="checkbox" id="scope-\d+" name="scope" value="([^"]+)"( checked)?>/g)];
  assert.equal(offered.length, 8, 'every requested (here: every) scope');
  // No scope parameter: read is ticked, write is the user's explicit choice.
  for (const [, value, checked] of offered) assert.equal(Boolean(checked), value.endsWith(':read'), value);
  const ttls = [...consent.html.matchAll(/name="ttl" value="(\d+)"/g)].map((m) => Number(m[1]));
  assert.deepEqual(ttls, [3600, 86400, 2592000, 7776000]);
  assert.match(consent.html, /<button type="submit" name="decision" value="allow"/);
  assert.match(consent.html, /<button type="submit" name="decision" value="deny"/);
  assert.match(consent.headers.get('content-security-policy')!, /form-action 'self' https:\/\/client\.example/);
  // The session is remembered: the next authorization goes straight to consent.
  const again = await page(server, jar, authorizeUrl({ response_type: 'code', client_id: 'web', redirect_uri: WEB_CB }));
  assert.match(again.html, /name="decision" value="allow"/);
});

test('"Sign in as someone else" ends the session and shows the login page again', async () => {
  const jar = new CookieJar();
  const target = authorizeUrl({ response_type: 'code', client_id: 'web', redirect_uri: WEB_CB, state: 'sw' });
  const consent = await signIn(server, jar, target, 'bob', PASSWORD);
  const form = consent.html.slice(consent.html.indexOf('class="switch"'));
  const out = await page(server, jar, '/oauth/authorize', { request: hiddenField(form, 'request'), csrf_token: hiddenField(form, 'csrf_token'), step: 'logout' });
  assert.equal(out.status, 303);
  assert.ok(jar.raw.some((c) => /^__Host-gatehouse_session=; Path=\/; .*Max-Age=0$/.test(c)));
  const login = await page(server, jar, out.location!);
  assert.match(login.html, /name="password"/);
  assert.equal(new URLSearchParams(hiddenField(login.html, 'request')).get('state'), 'sw');
});

test('a wrong password re-shows the login form with an error and no session', async () => {
  const jar = new CookieJar();
  const login = await page(server, jar, authorizeUrl({ response_type: 'code', client_id: 'web', redirect_uri: WEB_CB }));
  const r = await page(server, jar, '/oauth/authorize', {
    request: hiddenField(login.html, 'request'),
    csrf_token: hiddenField(login.html, 'csrf_token'),
    step: 'login',
    username: 'bob',
    password: 'wrong-password',
  });
  assert.equal(r.status, 401);
  assert.match(r.html, /role="alert"/);
  assert.equal(r.location, null);
  assert.equal(jar.cookies.has('__Host-gatehouse_session'), false);
});

test('a form without a valid CSRF token is refused and redirects nowhere', async () => {
  const jar = new CookieJar();
  const consent = await signIn(server, jar, authorizeUrl({ response_type: 'code', client_id: 'web', redirect_uri: WEB_CB }), 'bob', PASSWORD);
  for (const csrf of ['', 'forged', hiddenField(consent.html, 'csrf_token').replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'))]) {
    const r = await page(server, jar, '/oauth/authorize', { request: hiddenField(consent.html, 'request'), csrf_token: csrf, step: 'consent', decision: 'allow', scope: 'zoos:read', ttl: '3600' });
    assert.equal(r.status, 403);
    assert.equal(r.location, null);
  }
  // Another browser's token does not fit this browser's cookie.
  const stranger = new CookieJar();
  const strangerLogin = await page(server, stranger, authorizeUrl({ response_type: 'code', client_id: 'web', redirect_uri: WEB_CB }));
  const r = await page(server, jar, '/oauth/authorize', { request: hiddenField(consent.html, 'request'), csrf_token: hiddenField(strangerLogin.html, 'csrf_token'), step: 'consent', decision: 'allow', scope: 'zoos:read', ttl: '3600' });
  assert.equal(r.status, 403);
});

/** The name under which this server keeps the login pages' CSRF binding (read from its own Set-Cookie). */
const bindingName = (jar: CookieJar) => [...jar.cookies.keys()].find((k) => k.endsWith('gatehouse_browser'))!;
const consentForm = (consent: { html: string }, csrf: string) => ({ request: hiddenField(consent.html, 'request'), csrf_token: csrf, step: 'consent', decision: 'allow', scope: 'zoos:read', ttl: '3600' });

test('CSRF binding: a planted cookie value is replaced, never adopted, and a token minted for it is refused with the victim\'s session', async () => {
  const target = authorizeUrl({ response_type: 'code', client_id: 'web', redirect_uri: WEB_CB, state: 'pl' });
  const probe = new CookieJar();
  await page(server, probe, target);
  const name = bindingName(probe);
  const planted = 'A'.repeat(43);
  // The attacker opens the login page with the value they chose...
  const attacker = new CookieJar();
  attacker.cookies.set(name, planted);
  const login = await page(server, attacker, target);
  assert.equal(login.status, 200);
  assert.notEqual(attacker.cookies.get(name), planted, 'the answer sets a fresh binding value of the server\'s own');
  assert.ok(attacker.raw.some((c) => c.startsWith(`${name}=`)), 'a Set-Cookie for the binding');
  const minted = hiddenField(login.html, 'csrf_token');
  // ...plants it in the victim's browser (who is signed in) and submits a form with that token.
  const victim = new CookieJar();
  const consent = await signIn(server, victim, target, 'bob', PASSWORD);
  victim.cookies.set(name, planted);
  const forged = await page(server, victim, '/oauth/authorize', consentForm(consent, minted));
  assert.equal(forged.status, 403, 'a token for a value the server never issued');
  assert.equal(forged.location, null);
  // A made-up value that merely looks signed is no better.
  victim.cookies.set(name, `${'B'.repeat(43)}.k.${'C'.repeat(43)}`);
  assert.equal((await page(server, victim, '/oauth/authorize', consentForm(consent, minted))).status, 403);
});

test('CSRF binding rotates at sign-in: the login page\'s token is refused once signed in', async () => {
  const jar = new CookieJar();
  const target = authorizeUrl({ response_type: 'code', client_id: 'web', redirect_uri: WEB_CB, state: 'rot' });
  const login = await page(server, jar, target);
  const name = bindingName(jar);
  const before = jar.cookies.get(name);
  const preLogin = hiddenField(login.html, 'csrf_token');
  const posted = await page(server, jar, '/oauth/authorize', { request: hiddenField(login.html, 'request'), csrf_token: preLogin, step: 'login', username: 'bob', password: PASSWORD });
  assert.equal(posted.status, 303, posted.html);
  assert.notEqual(jar.cookies.get(name), before, 'signing in sets a new binding');
  const consent = await page(server, jar, posted.location!);
  assert.equal((await page(server, jar, '/oauth/authorize', consentForm(consent, preLogin))).status, 403, 'the pre-login token');
  const done = await page(server, jar, '/oauth/authorize', consentForm(consent, hiddenField(consent.html, 'csrf_token')));
  assert.equal(done.status, 302, 'the consent page\'s own token');
});

test('code grant end to end: state comes back, unticked scopes are not granted, scope is returned', async () => {
  const { code, params } = await obtainCode(server, { clientId: 'web', redirectUri: WEB_CB, ...user, scope: 'zoos:read zoos:write orders:read', state: 'xyz/?&=', decision: { scope: ['zoos:read', 'orders:read'], ttl: 86400 } });
  assert.equal(params.get('state'), 'xyz/?&=');
  assert.ok(code.length >= 22, 'at least 128 bits');
  const r = await exchange(code, { redirect_uri: WEB_CB });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.headers.get('cache-control'), 'no-store');
  assert.equal(r.body.scope, 'zoos:read orders:read');
  assert.equal(r.body.token_type, 'bearer');
  assert.equal(r.body.expires_in, 3600);
  assert.ok(r.body.refresh_token);
  const info = await introspect(server, r.body.access_token, web);
  assert.equal(info.active, true);
  assert.equal(info.username, 'bob');
});

test('a replayed code fails and revokes every token issued from it', async () => {
  const { code } = await obtainCode(server, { clientId: 'web', redirectUri: WEB_CB, ...user });
  const first = await exchange(code, { redirect_uri: WEB_CB });
  assert.equal(first.status, 200);
  const refreshed = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, { auth: webAuth() });
  assert.equal(refreshed.status, 200);
  const replay = await exchange(code, { redirect_uri: WEB_CB });
  assert.equal(replay.status, 400);
  assert.equal(replay.body.error, 'invalid_grant');
  assert.equal((await introspect(server, first.body.access_token, web)).active, false);
  assert.equal((await introspect(server, refreshed.body.access_token, web)).active, false);
  const refreshAgain = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token }, { auth: webAuth() });
  assert.equal(refreshAgain.body.error, 'invalid_grant');
});

test('a code is bound to its client: another client cannot redeem it', async () => {
  const { code } = await obtainCode(server, { clientId: 'web', redirectUri: WEB_CB, ...user });
  const stolen = await exchange(code, { redirect_uri: WEB_CB }, basic('other', other.client_secret!));
  assert.equal(stolen.status, 400);
  assert.equal(stolen.body.error, 'invalid_grant');
  const rightful = await exchange(code, { redirect_uri: WEB_CB });
  assert.equal(rightful.status, 200);
});

test('a code is bound to its redirect_uri at the token endpoint', async () => {
  const { code } = await obtainCode(server, { clientId: 'web', redirectUri: WEB_CB, ...user });
  const wrong = await exchange(code, { redirect_uri: WEB_OTHER });
  assert.equal(wrong.status, 400);
  assert.equal(wrong.body.error, 'invalid_grant');
  // RFC 6749 §4.1.3 / §5.2: the authorization request had one, so its absence is a missing parameter.
  const missing = await exchange(code);
  assert.equal(missing.status, 400);
  assert.equal(missing.body.error, 'invalid_request');
  assert.equal(missing.body.detail.redirect_uri, 'is required');
  assert.equal((await exchange(code, { redirect_uri: WEB_CB })).status, 200, 'neither refusal spent the code');
});

test('redirect_uri may be omitted only when the client has exactly one (its query is kept)', async () => {
  const { code, params } = await obtainCode(server, { clientId: 'single', ...user });
  assert.equal(params.get('x'), '1');
  const r = await exchange(code, {}, basic('single', single.client_secret!));
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const several = await page(server, new CookieJar(), authorizeUrl({ response_type: 'code', client_id: 'web' }));
  assert.equal(several.status, 400);
  assert.equal(several.location, null);
});

test('open-redirect attempts: an unregistered or altered redirect_uri gets an error page, never a redirect', async () => {
  const attempts = [
    'https://evil.example/cb',
    'https://client.example/cb/../../evil',
    'https://client.example/cbx',
    'https://client.example/cb?next=https://evil.example',
    'https://client.example/cb#frag',
    'https://client.example.evil.example/cb',
    'https://CLIENT.example/cb',
    'http://client.example/cb',
    '//evil.example/cb',
    'javascript:alert(1)',
  ];
  for (const redirect_uri of attempts) {
    const p = await page(server, new CookieJar(), authorizeUrl({ response_type: 'code', client_id: 'web', redirect_uri, state: 's' }));
    assert.equal(p.status, 400, redirect_uri);
    assert.equal(p.location, null, redirect_uri);
    assert.match(p.headers.get('content-type')!, /^text\/html/);
    assert.match(p.html, /not registered/);
    // Even with bad other parameters, the error goes nowhere but the page.
    const p2 = await page(server, new CookieJar(), authorizeUrl({ response_type: 'bogus', client_id: 'web', redirect_uri }));
    assert.equal(p2.location, null);
  }
  const json = await server.json('GET', authorizeUrl({ response_type: 'code', client_id: 'web', redirect_uri: 'https://evil.example/cb' }));
  assert.equal(json.status, 400);
  assert.equal(json.body.error, 'invalid_request');
  assert.ok(json.body.detail.redirect_uri);
  assert.equal(json.headers.get('location'), null);
});

test('unknown or missing client: an error page (JSON when JSON is preferred), no redirect', async () => {
  const p = await page(server, new CookieJar(), authorizeUrl({ response_type: 'code', client_id: 'ghost', redirect_uri: WEB_CB }));
  assert.equal(p.status, 400);
  assert.equal(p.location, null);
  assert.match(p.html, /not registered/);
  const json = await server.json('GET', authorizeUrl({ response_type: 'code', client_id: 'ghost', redirect_uri: WEB_CB }));
  assert.equal(json.body.error, 'invalid_client');
  const none = await page(server, new CookieJar(), authorizeUrl({ response_type: 'code', redirect_uri: WEB_CB }));
  assert.equal(none.status, 400);
  assert.equal(none.location, null);
  const repeated = await page(server, new CookieJar(), `/oauth/authorize?response_type=code&client_id=web&client_id=single&redirect_uri=${encodeURIComponent(WEB_CB)}`);
  assert.equal(repeated.status, 400);
  assert.equal(repeated.location, null);
  const garbled = await page(server, new CookieJar(), `/oauth/authorize?response_type=code&client_id=web&redirect_uri=${encodeURIComponent(WEB_CB)}&state=%E0%A4%A`);
  assert.equal(garbled.status, 400);
  assert.equal(garbled.location, null);
  assert.match(garbled.headers.get('content-type')!, /^text\/html/);
});

test('other request errors are redirected to the client with RFC 6749 error parameters and state', async () => {
  const cases: [Record<string, string>, string, 'query' | 'fragment'][] = [
    [{ response_type: 'bogus', client_id: 'web', redirect_uri: WEB_CB }, 'unsupported_response_type', 'query'],
    [{ client_id: 'web', redirect_uri: WEB_CB }, 'invalid_request', 'query'],
    [{ response_type: 'code', client_id: 'web', redirect_uri: WEB_CB, scope: 'penguins:read' }, 'invalid_scope', 'query'],
    [{ response_type: 'code', client_id: 'single', scope: 'articles:read' }, 'invalid_scope', 'query'],
    [{ response_type: 'token', client_id: 'web', redirect_uri: WEB_CB }, 'unauthorized_client', 'fragment'],
    [{ response_type: 'code', client_id: 'machine' }, 'unauthorized_client', 'query'],
    [{ response_type: 'token', client_id: 'single', scope: 'penguins:read' }, 'invalid_scope', 'fragment'],
    [{ response_type: 'code', client_id: 'web', redirect_uri: WEB_CB, code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request', 'query'],
  ];
  for (const [params, error, mode] of cases) {
    const p = await page(server, new CookieJar(), authorizeUrl({ ...params, state: 'keep-me' }));
    assert.equal(p.status, 302, `${JSON.stringify(params)}: ${p.html.slice(0, 300)}`);
    const got = redirectParams(p.location!, mode);
    assert.equal(got.get('error'), error, JSON.stringify(params));
    assert.equal(got.get('state'), 'keep-me');
    assert.ok(got.get('error_description'));
    assert.equal(got.get('iss'), server.url, 'RFC 9207: the issuer of the metadata');
  }
  const dup = await page(server, new CookieJar(), `${authorizeUrl({ response_type: 'code', client_id: 'web', redirect_uri: WEB_CB })}&scope=zoos:read&scope=orders:read`);
  assert.equal(dup.status, 302);
  assert.equal(redirectParams(dup.location!).get('error'), 'invalid_request');
});

test('deny: 302 with error=access_denied and state', async () => {
  const jar = new CookieJar();
  const consent = await signIn(server, jar, authorizeUrl({ response_type: 'code', client_id: 'web', redirect_uri: WEB_CB, state: 'd1' }), 'bob', PASSWORD);
  const r = await decide(server, jar, consent, { decision: 'deny' });
  assert.equal(r.status, 302);
  assert.ok(r.location!.startsWith(WEB_CB + '?'));
  const params = redirectParams(r.location!);
  assert.equal(params.get('error'), 'access_denied');
  assert.equal(params.get('state'), 'd1');
  assert.equal(params.get('code'), null);
});

test('the consent form accepts only offered scopes and a validity within maxGrantTtl', async () => {
  const jar = new CookieJar();
  const consent = await signIn(server, jar, authorizeUrl({ response_type: 'code', client_id: 'web', redirect_uri: WEB_CB, scope: 'zoos:read' }), 'bob', PASSWORD);
  for (const d of [{ scope: ['zoos:read', 'zoos:write'] }, { scope: [] as string[] }, { ttl: 7776001 }, { ttl: 0 }, { ttl: 'soon' }]) {
    const r = await decide(server, jar, consent, d);
    assert.equal(r.status, 400, JSON.stringify(d));
    assert.equal(r.location, null);
    assert.match(r.html, /role="alert"/);
  }
});

test('public clients must use PKCE S256; a missing or wrong verifier fails', async () => {
  const noChallenge = await page(server, new CookieJar(), authorizeUrl({ response_type: 'code', client_id: 'spa', redirect_uri: SPA_CB, state: 'p' }));
  assert.equal(noChallenge.status, 302);
  assert.equal(redirectParams(noChallenge.location!).get('error'), 'invalid_request');

  const pkce = pkcePair();
  const a = await obtainCode(server, { clientId: 'spa', redirectUri: SPA_CB, ...user, challenge: pkce.challenge });
  const missing = await post(server, 'token', { grant_type: 'authorization_code', code: a.code, redirect_uri: SPA_CB, client_id: 'spa' });
  assert.equal(missing.body.error, 'invalid_grant');
  const wrong = await post(server, 'token', { grant_type: 'authorization_code', code: a.code, redirect_uri: SPA_CB, client_id: 'spa', code_verifier: pkcePair().verifier });
  assert.equal(wrong.body.error, 'invalid_grant');
  const ok = await post(server, 'token', { grant_type: 'authorization_code', code: a.code, redirect_uri: SPA_CB, client_id: 'spa', code_verifier: pkce.verifier });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.ok(ok.body.refresh_token);
});

test('PKCE is honoured for confidential clients too, and a verifier without a challenge is refused', async () => {
  const pkce = pkcePair();
  const a = await obtainCode(server, { clientId: 'web', redirectUri: WEB_CB, ...user, challenge: pkce.challenge });
  assert.equal((await exchange(a.code, { redirect_uri: WEB_CB })).body.error, 'invalid_grant');
  assert.equal((await exchange(a.code, { redirect_uri: WEB_CB, code_verifier: pkce.verifier })).status, 200);
  const b = await obtainCode(server, { clientId: 'web', redirectUri: WEB_CB, ...user });
  assert.equal((await exchange(b.code, { redirect_uri: WEB_CB, code_verifier: pkce.verifier })).body.error, 'invalid_grant');
});

test('implicit grant: the token in the fragment, never a refresh token', async () => {
  const jar = new CookieJar();
  const consent = await signIn(server, jar, authorizeUrl({ response_type: 'token', client_id: 'spa', redirect_uri: SPA_CB, scope: 'zoos:read orders:read', state: 'imp' }), 'bob', PASSWORD);
  const r = await decide(server, jar, consent, { scope: ['orders:read'], ttl: 86400 });
  assert.equal(r.status, 302);
  const url = new URL(r.location!);
  assert.equal(url.search, '');
  const f = redirectParams(r.location!, 'fragment');
  assert.ok(f.get('access_token'));
  assert.equal(f.get('token_type'), 'bearer');
  assert.equal(f.get('expires_in'), '3600');
  assert.equal(f.get('scope'), 'orders:read');
  assert.equal(f.get('state'), 'imp');
  assert.equal(f.get('refresh_token'), null);
  const info = await introspect(server, f.get('access_token')!, web);
  assert.equal(info.active, true);
  assert.equal(info.client_id, 'spa');
});

test('tokens never outlive the validity chosen on the consent page, refresh included', async () => {
  // Implicit: expires_in is capped by the chosen validity.
  const jar = new CookieJar();
  const consent = await signIn(server, jar, authorizeUrl({ response_type: 'token', client_id: 'single' }), 'bob', PASSWORD);
  const imp = redirectParams((await decide(server, jar, consent, { ttl: 2 })).location!, 'fragment');
  assert.ok(Number(imp.get('expires_in')) <= 2);

  // Code grant with refresh tokens: the refreshed token is capped too, and dies with the grant.
  const { code } = await obtainCode(server, { clientId: 'web', redirectUri: WEB_CB, ...user, decision: { ttl: 3 } });
  const tokens = await exchange(code, { redirect_uri: WEB_CB });
  assert.equal(tokens.status, 200);
  assert.ok(tokens.body.expires_in <= 3);
  const refreshed = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token }, { auth: webAuth() });
  assert.equal(refreshed.status, 200);
  assert.ok(refreshed.body.expires_in <= 3);
  assert.equal((await introspect(server, imp.get('access_token')!, web)).active, true);
  await sleep(3200);
  assert.equal((await introspect(server, imp.get('access_token')!, web)).active, false);
  assert.equal((await introspect(server, refreshed.body.access_token, web)).active, false);
  assert.equal((await introspect(server, refreshed.body.refresh_token, web)).active, false);
  const late = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token }, { auth: webAuth() });
  assert.equal(late.status, 400);
  assert.equal(late.body.error, 'invalid_grant');
});

test('reflected values are escaped in the pages', async () => {
  const evil = '"><script>alert(1)</script>';
  const p = await page(server, new CookieJar(), authorizeUrl({ response_type: 'code', client_id: 'web', redirect_uri: WEB_CB, state: evil }));
  assert.equal(p.status, 200);
  assert.doesNotMatch(p.html, /<script>/);
  assert.equal(new URLSearchParams(hiddenField(p.html, 'request')).get('state'), evil);
});
