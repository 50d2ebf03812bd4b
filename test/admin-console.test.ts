// The admin console ({base_url}/admin) over HTTP: sign-in (admins only, the throttled signIn of
// the login page), its own session (cookie attributes, sign-out ends it on the server, the cookie
// never authorizes the admin API, a login-page session is no console session), CSRF on every POST,
// the headers of every page, maintenance mode, and HTML or JSON errors.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { findUserByUsername } from '../src/authserver/model/users.js';
import { addClient, addUser, authorizeUrl, basic, CookieJar, hiddenField, introspect, page, post, signIn as oauthSignIn, unescapeHtml, type Page, type RegisteredClient } from './helpers/oauth.js';

let server: InProcessApp;
let app: RegisteredClient;
let jar: CookieJar;
let csrf: string;

async function consoleSignIn(username: string, password: string, into = new CookieJar()): Promise<{ jar: CookieJar; csrf: string; answer: Page }> {
  const front = await page(server, into, '/admin');
  const token = hiddenField(front.html, 'csrf_token');
  const answer = await page(server, into, '/admin/signin', { csrf_token: token, username, password });
  // Signing in rotates the form binding: the forms from now on carry a new token.
  const csrf = answer.status === 303 ? hiddenField((await page(server, into, '/admin/users')).html, 'csrf_token') : token;
  return { jar: into, csrf, answer };
}

/** The name under which this server keeps the console's CSRF binding (read from its own Set-Cookie). */
const consoleBindingName = (j: CookieJar) => [...j.cookies.keys()].find((k) => k.endsWith('gatehouse_admin_browser'))!;

before(async () => {
  server = await startApp({ file: true });
  await addUser(server, 'root', 'root-password-1');
  assert.equal((await server.cli(['user', 'admin', 'root', 'on'])).status, 0);
  await addUser(server, 'frank', 'frank-password-1');
  app = await addClient(server, 'zoo-planner', ['--grant', 'password', '--grant', 'authorization_code', '--redirect-uri', 'https://planner.example/cb']);
  const signed = await consoleSignIn('root', 'root-password-1');
  assert.equal(signed.answer.status, 303, signed.answer.html);
  jar = signed.jar;
  csrf = signed.csrf;
});
after(async () => server?.cleanup());

test('sign-in: an admin gets a session cookie (__Host-, HttpOnly, Secure, SameSite=Strict, Path=/) and the dashboard', async () => {
  const { jar: mine, answer } = await consoleSignIn('root', 'root-password-1');
  assert.equal(answer.status, 303);
  assert.equal(answer.location, '/admin');
  const cookie = mine.raw.find((c) => c.startsWith('__Host-gatehouse_admin='))!;
  assert.match(cookie, /^__Host-gatehouse_admin=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; Secure; SameSite=Strict; Max-Age=\d+$/);
  const bindings = mine.raw.filter((c) => c.startsWith('__Host-gatehouse_admin_browser='));
  assert.equal(bindings.length, 2, 'one on first sight, a new one at sign-in');
  for (const b of bindings) assert.match(b, /^__Host-gatehouse_admin_browser=[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
  assert.ok(!mine.raw.some((c) => /domain=/i.test(c)), 'no Domain');
  const dashboard = await page(server, mine, '/admin');
  assert.equal(dashboard.status, 200);
  assert.match(dashboard.html, /<h1>Dashboard<\/h1>/);
  assert.match(dashboard.html, /Signed in as <\/span><strong>root<\/strong>/);
});

test('sign-in: a non-admin with the right password gets 403 "not an admin" and no session; a bad password 401 with the form again', async () => {
  const frank = await consoleSignIn('frank', 'frank-password-1');
  assert.equal(frank.answer.status, 403);
  assert.match(frank.answer.headers.get('content-type')!, /^text\/html/);
  assert.match(frank.answer.html, /Not an admin/);
  assert.ok(!frank.jar.cookies.has('__Host-gatehouse_admin'), 'no session for a non-admin');
  assert.equal((await page(server, frank.jar, '/admin/clients')).status, 401);

  const bad = await consoleSignIn('root', 'not-the-password');
  assert.equal(bad.answer.status, 401);
  assert.match(bad.answer.html, /The username or password is not correct/);
  assert.match(bad.answer.html, /name="password"/);
  assert.match(bad.answer.html, /value="root"/, 'the username is kept');
  assert.ok(!bad.jar.cookies.has('__Host-gatehouse_admin'));
  const unknown = await consoleSignIn('nobody', 'whatever-password');
  assert.equal(unknown.answer.status, 401);

  const empty = await consoleSignIn('root', '');
  assert.equal(empty.answer.status, 400);
});

test('sign-in is the throttled signIn of the login page: failures anywhere count, then 429 with Retry-After even for the right password', async () => {
  const throttled = await startApp({ file: true,  config: { auth: { loginThrottle: { max: 2, window: 60 } } } });
  try {
    await addUser(throttled, 'root', 'root-password-1');
    assert.equal((await throttled.cli(['user', 'admin', 'root', 'on'])).status, 0);
    const bot = await addClient(throttled, 'bot', ['--grant', 'password']);
    // One failure through the password grant, one through the console.
    const grant = await post(throttled, 'token', { grant_type: 'password', username: 'root', password: 'wrong-1' }, { auth: basic(bot.client_id, bot.client_secret!) });
    assert.equal(grant.status, 400);
    const j = new CookieJar();
    const front = await page(throttled, j, '/admin');
    const token = hiddenField(front.html, 'csrf_token');
    assert.equal((await page(throttled, j, '/admin/signin', { csrf_token: token, username: 'root', password: 'wrong-2' })).status, 401);
    const blocked = await page(throttled, j, '/admin/signin', { csrf_token: token, username: 'root', password: 'root-password-1' });
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.headers.get('retry-after')) > 0);
    assert.match(blocked.html, /Too many failed attempts/);
    assert.ok(!j.cookies.has('__Host-gatehouse_admin'));
  } finally {
    await throttled.cleanup();
  }
});

test('CSRF: every POST without the form token (or with another scope\'s token) is 403 and changes nothing', async () => {
  const { status: before } = await server.json('GET', '/v1/zoos');
  const grantTokens = await post(server, 'token', { grant_type: 'password', username: 'frank', password: 'frank-password-1', scope: 'zoos:read' }, { auth: basic(app.client_id, app.client_secret!) });
  const grantId = /href="\/admin\/grants\/([0-9a-f-]+)\/revoke"/.exec((await page(server, jar, '/admin/grants')).html)![1];
  const frankId = /href="\/admin\/users\/([0-9a-f-]+)">frank</.exec((await page(server, jar, '/admin/users')).html)![1];
  // A token of the login pages' scheme (their binding cookie): worthless here.
  const loginJar = new CookieJar();
  const login = await page(server, loginJar, authorizeUrl({ response_type: 'code', client_id: 'zoo-planner', state: 's' }));
  const loginToken = hiddenField(login.html, 'csrf_token');

  const posts: [string, Record<string, string>][] = [
    ['/admin/clients', { client_id: 'sneaky', grant_types: 'client_credentials' }],
    ['/admin/clients/zoo-planner', { name: 'Hijacked', grant_types: 'password' }],
    ['/admin/clients/zoo-planner/secret', {}],
    ['/admin/clients/zoo-planner/delete', {}],
    ['/admin/users', { username: 'mallory', password: 'mallory-password', admin: 'on' }],
    [`/admin/users/${frankId}/admin`, { admin: 'on' }],
    [`/admin/users/${frankId}/password`, { password: 'changed-password' }],
    [`/admin/users/${frankId}/delete`, {}],
    [`/admin/grants/${grantId}/revoke`, {}],
    ['/admin/maintenance', { enabled: 'on' }],
    ['/admin/signout', {}],
    ['/admin/signin', { username: 'root', password: 'root-password-1' }],
  ];
  for (const [url, form] of posts) {
    for (const token of [undefined, 'garbage.token', loginToken, `${csrf}x`]) {
      const j = new CookieJar();
      for (const [k, v] of jar.cookies) j.cookies.set(k, v);
      for (const [k, v] of loginJar.cookies) j.cookies.set(k, v);
      const answer = await page(server, j, url, token === undefined ? form : { ...form, csrf_token: token });
      assert.equal(answer.status, 403, `${url} with ${token ?? 'no token'}: ${answer.status}`);
      assert.match(answer.html, /This form has expired/);
      assert.match(answer.html, /Nothing was changed/);
    }
  }
  // A JSON body is no form: refused the same way.
  const json = await server.fetch('/admin/maintenance', { method: 'POST', headers: { accept: 'text/html', cookie: jar.header(), 'content-type': 'application/json' }, body: JSON.stringify({ enabled: 'on', csrf_token: csrf }) });
  assert.equal(json.status, 403);

  // Nothing changed.
  const clients = await page(server, jar, '/admin/clients');
  assert.ok(!clients.html.includes('sneaky') && !clients.html.includes('Hijacked') && clients.html.includes('zoo-planner'));
  assert.ok(!(await page(server, jar, '/admin/users')).html.includes('mallory'));
  assert.match((await page(server, jar, `/admin/users/${frankId}`)).html, /<dt>Admin<\/dt><dd>no<\/dd>/);
  assert.equal((await introspect(server, grantTokens.body.access_token, app)).active, true);
  assert.equal((await post(server, 'token', { grant_type: 'password', username: 'frank', password: 'frank-password-1' }, { auth: basic(app.client_id, app.client_secret!) })).status, 200, 'secret and password unchanged');
  await new Promise((r) => setTimeout(r, 1100));
  assert.equal((await server.json('GET', '/v1/zoos')).status, before, 'maintenance unchanged');
  assert.equal((await page(server, jar, '/admin')).status, 200, 'still signed in');
});

test('CSRF binding: a planted binding value is replaced, never adopted; a token minted for it is refused with the admin\'s session', async () => {
  const probe = new CookieJar();
  await page(server, probe, '/admin');
  const name = consoleBindingName(probe);
  const planted = 'A'.repeat(43);
  const attacker = new CookieJar();
  attacker.cookies.set(name, planted);
  const front = await page(server, attacker, '/admin');
  assert.notEqual(attacker.cookies.get(name), planted, 'the answer sets a fresh binding value of the server\'s own');
  const minted = hiddenField(front.html, 'csrf_token');
  // Planted in the signed-in admin's browser, with the attacker's token: refused, nothing made.
  const { jar: victim } = await consoleSignIn('root', 'root-password-1');
  victim.cookies.set(name, planted);
  const forged = await page(server, victim, '/admin/users', { csrf_token: minted, username: 'planted-admin', password: 'planted-password-1', admin: 'on' });
  assert.equal(forged.status, 403);
  assert.doesNotMatch((await page(server, jar, '/admin/users')).html, /planted-admin/);
});

test('CSRF binding rotates at sign-in: the sign-in page\'s token is refused once signed in', async () => {
  const mine = new CookieJar();
  const front = await page(server, mine, '/admin');
  const preLogin = hiddenField(front.html, 'csrf_token');
  const name = consoleBindingName(mine);
  const before = mine.cookies.get(name);
  const answer = await page(server, mine, '/admin/signin', { csrf_token: preLogin, username: 'root', password: 'root-password-1' });
  assert.equal(answer.status, 303);
  assert.notEqual(mine.cookies.get(name), before);
  const stale = await page(server, mine, '/admin/maintenance', { csrf_token: preLogin, enabled: 'off' });
  assert.equal(stale.status, 403, 'the pre-login token');
});

test('every page: strict CSP (no inline script or style), no framing, no-store, no referrer; a token in every POST form', async () => {
  const users = (await page(server, jar, '/admin/users')).html;
  const rootId = /href="\/admin\/users\/([0-9a-f-]+)">root</.exec(users)![1];
  const frankId = /href="\/admin\/users\/([0-9a-f-]+)">frank</.exec(users)![1];
  await post(server, 'token', { grant_type: 'password', username: 'frank', password: 'frank-password-1' }, { auth: basic(app.client_id, app.client_secret!) });
  const grantId = /href="\/admin\/grants\/([0-9a-f-]+)\/revoke"/.exec((await page(server, jar, '/admin/grants')).html)![1];
  const signedOut = new CookieJar();
  const pages: [string, CookieJar, number, Record<string, string>?][] = [
    ['/admin', signedOut, 200],
    ['/admin/clients', signedOut, 401],
    ['/admin', jar, 200],
    ['/admin/clients', jar, 200],
    ['/admin/clients/zoo-planner', jar, 200],
    ['/admin/clients/zoo-planner/secret', jar, 200],
    ['/admin/clients/zoo-planner/delete', jar, 200],
    ['/admin/clients/nobody', jar, 404],
    ['/admin/users', jar, 200],
    [`/admin/users/${rootId}`, jar, 200],
    [`/admin/users/${frankId}`, jar, 200],
    [`/admin/users/${frankId}/delete`, jar, 200],
    ['/admin/grants', jar, 200],
    ['/admin/grants?user=frank', jar, 200],
    ['/admin/grants?user=nobody', jar, 400],
    [`/admin/grants/${grantId}/revoke`, jar, 200],
    ['/admin/maintenance', jar, 200],
    ['/admin/no-such-page', jar, 404],
    ['/admin/clients', jar, 400, { csrf_token: csrf, client_id: 'bad id', grant_types: 'password' }],
    ['/admin/maintenance', jar, 403, { enabled: 'on' }],
  ];
  for (const [url, j, status, form] of pages) {
    const p = await page(server, j, url, form);
    const what = `${form ? 'POST' : 'GET'} ${url}`;
    assert.equal(p.status, status, `${what}: ${p.html.slice(0, 300)}`);
    assert.match(p.headers.get('content-type')!, /^text\/html; charset=utf-8/, what);
    const csp = p.headers.get('content-security-policy')!;
    for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "form-action 'self'", "base-uri 'none'"]) assert.ok(csp.includes(directive), `${what}: ${csp}`);
    assert.ok(!csp.includes('unsafe'), what);
    assert.equal(p.headers.get('x-frame-options'), 'DENY', what);
    assert.equal(p.headers.get('cache-control'), 'no-store', what);
    assert.equal(p.headers.get('referrer-policy'), 'no-referrer', what);
    assert.match(p.headers.get('strict-transport-security')!, /max-age=/, what);
    // No inline script, no inline style: the CSP would block them anyway.
    assert.ok(![...p.html.matchAll(/<script\b[^>]*>/g)].some((m) => !/ src="/.test(m[0])), `${what}: an inline script`);
    assert.ok(!/<style|\sstyle="/.test(p.html), `${what}: an inline style`);
    assert.match(p.html, /<link rel="stylesheet" href="\/admin\/assets\/console\.css\?v(=|&#61;)/, what);
    for (const f of p.html.match(/<form\b[\s\S]*?<\/form>/g) ?? []) {
      if (/method="get"/.test(f)) continue;
      assert.match(f, /<input type="hidden" name="csrf_token" value="[^"]+">/, `${what}: a form without its token`);
    }
    // Every input is labelled.
    for (const m of p.html.matchAll(/<(input|select|textarea)\b[^>]*\bid="([^"]+)"/g)) assert.ok(p.html.includes(`for="${m[2]}"`), `${what}: #${m[2]} has no label`);
  }
  // The assets: the script is the console's own, served with a type.
  const html = (await page(server, jar, '/admin')).html;
  const js = await server.fetch(unescapeHtml(/<script src="([^"]+)"/.exec(html)![1]));
  assert.equal(js.status, 200);
  assert.match(js.headers.get('content-type')!, /^text\/javascript/);
  assert.match(await js.text(), /data-copy/);
});

test('the secret is shown once: on the answer to registering and to rotating, never on the client page', async () => {
  const made = await page(server, jar, '/admin/clients', { csrf_token: csrf, client_id: 'once', type: 'confidential', grant_types: 'client_credentials', token_type: 'bearer' });
  assert.equal(made.status, 201);
  assert.equal(made.headers.get('location'), '/admin/clients/once');
  const secret = /id="client-secret">([^<]+)</.exec(made.html)![1];
  assert.equal((await post(server, 'token', { grant_type: 'client_credentials' }, { auth: basic('once', secret) })).status, 200);
  const later = await page(server, jar, '/admin/clients/once');
  assert.ok(!later.html.includes(secret));
  assert.ok(!(await page(server, jar, '/admin/clients')).html.includes(secret));
  const duplicate = await page(server, jar, '/admin/clients', { csrf_token: csrf, client_id: 'once', grant_types: 'password' });
  assert.equal(duplicate.status, 409);
  assert.match(duplicate.html, /id="f-client_id-error">already exists/);
  const rotated = await page(server, jar, '/admin/clients/once/secret', { csrf_token: csrf });
  assert.equal(rotated.status, 200);
  const fresh = /id="client-secret">([^<]+)</.exec(rotated.html)![1];
  assert.notEqual(fresh, secret);
  assert.equal((await post(server, 'token', { grant_type: 'client_credentials' }, { auth: basic('once', secret) })).status, 401);
  assert.equal((await page(server, jar, '/admin/clients/once/delete', { csrf_token: csrf })).status, 303);
});

test('a client\'s browser origins, home page and verification are set in the console and shown on its page', async () => {
  const bad = await page(server, jar, '/admin/clients', { csrf_token: csrf, client_id: 'spa-c', type: 'public', grant_types: 'authorization_code', redirect_uris: 'https://spa.example/cb', origins: 'https://spa.example/path', token_type: 'bearer' });
  assert.equal(bad.status, 400);
  assert.match(bad.html, /id="f-origins-error">[^<]*is not an origin/);
  const made = await page(server, jar, '/admin/clients', {
    csrf_token: csrf,
    client_id: 'spa-c',
    type: 'public',
    grant_types: 'authorization_code',
    redirect_uris: 'https://spa.example/cb',
    origins: 'https://other.example\nhttp://127.0.0.1:5173',
    uri: 'https://spa.example/about',
    verified: 'yes',
    token_type: 'bearer',
  });
  assert.equal(made.status, 201, made.html);
  const shown = await page(server, jar, '/admin/clients/spa-c');
  assert.match(shown.html, /<code>https:\/\/other\.example<\/code><br><code>http:\/\/127\.0\.0\.1:5173<\/code>/);
  assert.match(shown.html, /<dt>Home page<\/dt><dd><code>https:\/\/spa\.example\/about<\/code>/);
  assert.match(shown.html, /<dt>Verified<\/dt><dd>yes/);
  const api = JSON.parse((await server.cli(['client', 'list', '--json'])).stdout).find((c: { client_id: string }) => c.client_id === 'spa-c');
  assert.deepEqual(api.origins, ['https://spa.example', 'https://other.example', 'http://127.0.0.1:5173']);
  assert.equal((await page(server, jar, '/admin/clients/spa-c/delete', { csrf_token: csrf })).status, 303);
});

test('a resource server (may introspect every token) and a PKCE requirement are set in the console and shown on its page', async () => {
  const made = await page(server, jar, '/admin/clients', { csrf_token: csrf, client_id: 'rs-c', type: 'confidential', grant_types: 'authorization_code', redirect_uris: 'https://rs.example/cb', introspect: 'yes', require_pkce: 'yes', token_type: 'bearer' });
  assert.equal(made.status, 201, made.html);
  let shown = await page(server, jar, '/admin/clients/rs-c');
  assert.match(shown.html, /<dt>Resource server<\/dt><dd>yes/);
  assert.match(shown.html, /<dt>PKCE required<\/dt><dd>yes/);
  assert.match(shown.html, /name="introspect" value="yes" checked/);
  const listed = async () => JSON.parse((await server.cli(['client', 'list', '--json'])).stdout).find((c: { client_id: string }) => c.client_id === 'rs-c');
  assert.equal((await listed()).introspect, true);
  assert.equal((await listed()).require_pkce, true);
  // Unticking both: the form sends neither.
  const saved = await page(server, jar, '/admin/clients/rs-c', { csrf_token: csrf, grant_types: 'authorization_code', redirect_uris: 'https://rs.example/cb', token_type: 'bearer' });
  assert.equal(saved.status, 303, saved.html);
  shown = await page(server, jar, '/admin/clients/rs-c');
  assert.match(shown.html, /<dt>Resource server<\/dt><dd>no/);
  assert.equal((await listed()).introspect, false);
  assert.equal((await listed()).require_pkce, false);
  const pub = await page(server, jar, '/admin/clients', { csrf_token: csrf, client_id: 'rs-p', type: 'public', grant_types: 'authorization_code', redirect_uris: 'https://rs.example/cb', introspect: 'yes', token_type: 'bearer' });
  assert.equal(pub.status, 400);
  assert.match(pub.html, /id="f-introspect-error">[^<]*public client cannot introspect/);
  assert.equal((await page(server, jar, '/admin/clients/rs-c/delete', { csrf_token: csrf })).status, 303);
});

test('a user\'s name and e-mail address: set in the console (bad values named, nothing changed), shown in the list; the CLI and the admin API see the same', async () => {
  const frank = (await findUserByUsername(server.ctx, 'frank'))!.id;
  const bad = await page(server, jar, `/admin/users/${frank}/profile`, { csrf_token: csrf, name: 'Frank', email: 'not an address' });
  assert.equal(bad.status, 400);
  assert.match(bad.html, /id="f-email-error">[^<]*e-mail address is name@domain/);
  assert.match(bad.html, /value="not an address"/, 'the form comes back with what was typed');
  const saved = await page(server, jar, `/admin/users/${frank}/profile`, { csrf_token: csrf, name: 'Frank Fisher', email: 'frank@example.org', email_verified: 'on' });
  assert.equal(saved.status, 303, saved.html);
  const shown = await page(server, jar, `/admin/users/${frank}`);
  assert.match(shown.html, /<dt>Name<\/dt><dd>Frank Fisher<\/dd>/);
  assert.match(shown.html, /frank@example\.org <span class="tag on">verified<\/span>/);
  assert.doesNotMatch(shown.html, /Resend verification link/, 'nothing to resend for a verified address');
  assert.match((await page(server, jar, '/admin/users')).html, /frank@example\.org/);
  // The CLI changes the address: a new address is unverified unless it says otherwise.
  const cli = await server.cli(['user', 'update', 'frank', '--email', 'f.fisher@example.org']);
  assert.equal(cli.status, 0, cli.stderr);
  assert.deepEqual(JSON.parse(cli.stdout), { ...JSON.parse(cli.stdout), email: 'f.fisher@example.org', email_verified: false, name: 'Frank Fisher' });
  const refused = await server.cli(['user', 'update', 'frank', '--email', 'nope']);
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, /--email: an e-mail address is name@domain/);
  const forged = await page(server, jar, `/admin/users/${frank}/profile`, { name: 'Mallory' });
  assert.equal(forged.status, 403, 'no CSRF token, nothing changed');
  assert.match((await page(server, jar, `/admin/users/${frank}`)).html, /<dt>Name<\/dt><dd>Frank Fisher<\/dd>/);
});

test('OpenID Connect settings of a client: sign-out return addresses and the ID token signature, set in the console and shown on its page', async () => {
  const base = { csrf_token: csrf, client_id: 'oidc-c', type: 'confidential', grant_types: 'authorization_code', redirect_uris: 'https://rp.example/cb', token_type: 'bearer' };
  const bad = await page(server, jar, '/admin/clients', { ...base, post_logout_redirect_uris: 'javascript:alert(1)', id_token_signed_response_alg: 'ES256' });
  assert.equal(bad.status, 400);
  assert.match(bad.html, /id="f-post_logout_redirect_uris-error">[^<]*scheme javascript: is not allowed/);
  const made = await page(server, jar, '/admin/clients', { ...base, post_logout_redirect_uris: 'https://rp.example/bye', id_token_signed_response_alg: 'ES256' });
  assert.equal(made.status, 201, made.html);
  const shown = await page(server, jar, '/admin/clients/oidc-c');
  assert.match(shown.html, /<dt>ID token signature<\/dt><dd>ES256<\/dd>/);
  assert.match(shown.html, /<dt>Sign-out return addresses<\/dt><dd><code>https:\/\/rp\.example\/bye<\/code>/);
  assert.match(shown.html, /name="id_token_signed_response_alg" value="ES256" checked/);
  assert.equal((await page(server, jar, '/admin/clients/oidc-c/delete', { csrf_token: csrf })).status, 303);
});

test('sign-out ends the session on the server: the old cookie no longer works', async () => {
  const { jar: mine, csrf: token } = await consoleSignIn('root', 'root-password-1');
  const stolen = mine.cookies.get('__Host-gatehouse_admin')!;
  assert.equal((await page(server, mine, '/admin/users')).status, 200);
  const out = await page(server, mine, '/admin/signout', { csrf_token: token });
  assert.equal(out.status, 303);
  assert.match(mine.raw.at(-1)!, /^__Host-gatehouse_admin=; Path=\/; .*Max-Age=0$/);
  const replay = new CookieJar();
  replay.cookies.set('__Host-gatehouse_admin', stolen);
  const answer = await page(server, replay, '/admin/users');
  assert.equal(answer.status, 401);
  assert.match(answer.html, /Sign in to continue/);
});

test('the console cookie alone never authorizes the admin API; a login-page session is no console session', async () => {
  const { jar: mine } = await consoleSignIn('root', 'root-password-1');
  for (const [method, body] of [
    ['GET', undefined],
    ['PUT', { enabled: true }],
  ] as const) {
    const r = await server.json(method, method === 'GET' ? '/admin/v1/clients' : '/admin/v1/maintenance', body, { cookie: mine.header() });
    assert.equal(r.status, 401, r.text);
    assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer /);
    assert.equal(r.body.error, 'Authentication required');
  }
  const html = await server.fetch('/admin/v1/users', { headers: { cookie: mine.header(), accept: 'application/json, text/html;q=0.5' } });
  assert.equal(html.status, 401);
  assert.match(html.headers.get('content-type')!, /^application\/json/);

  // root signed in on the login page: that session value is not accepted by the console.
  const loginJar = new CookieJar();
  await oauthSignIn(server, loginJar, authorizeUrl({ response_type: 'code', client_id: 'zoo-planner', state: 's' }), 'root', 'root-password-1');
  const loginSession = loginJar.cookies.get('__Host-gatehouse_session')!;
  assert.ok(loginSession);
  const crossed = new CookieJar();
  crossed.cookies.set('__Host-gatehouse_admin', loginSession);
  assert.equal((await page(server, crossed, '/admin/clients')).status, 401);
  // …and the reverse: the console's value is no login session.
  const reverse = new CookieJar();
  reverse.cookies.set('__Host-gatehouse_session', mine.cookies.get('__Host-gatehouse_admin')!);
  const authorize = await page(server, reverse, authorizeUrl({ response_type: 'code', client_id: 'zoo-planner', state: 's' }));
  assert.match(authorize.html, /name="password"/, 'the login form, not the consent page');
});

test('an admin whose right is taken away is refused at the next request, and the session ends', async () => {
  await addUser(server, 'temp-admin', 'temp-password-1');
  assert.equal((await server.cli(['user', 'admin', 'temp-admin', 'on'])).status, 0);
  const { jar: mine, answer } = await consoleSignIn('temp-admin', 'temp-password-1');
  assert.equal(answer.status, 303);
  assert.equal((await page(server, mine, '/admin/clients')).status, 200);
  assert.equal((await server.cli(['user', 'admin', 'temp-admin', 'off'])).status, 0);
  const refused = await page(server, mine, '/admin/clients');
  assert.equal(refused.status, 403);
  assert.match(refused.html, /Not an admin/);
  assert.match(mine.raw.at(-1)!, /^__Host-gatehouse_admin=;/);
});

test('the sign-in page returns to the page asked for, and only to a console page', async () => {
  const j = new CookieJar();
  const asked = await page(server, j, '/admin/grants?user=frank');
  assert.equal(asked.status, 401);
  assert.equal(hiddenField(asked.html, 'next'), '/admin/grants?user=frank');
  const token = hiddenField(asked.html, 'csrf_token');
  const back = await page(server, j, '/admin/signin', { csrf_token: token, username: 'root', password: 'root-password-1', next: '/admin/grants?user=frank' });
  assert.equal(back.location, '/admin/grants?user=frank');
  for (const next of ['https://evil.example/', '//evil.example/admin', '/admin//evil.example', '/admin/../oauth/token', '/admin/%2E%2E/oauth', '/adminx', '/v1/zoos', '/admin/\\evil']) {
    const k = new CookieJar();
    const t = hiddenField((await page(server, k, '/admin')).html, 'csrf_token');
    const r = await page(server, k, '/admin/signin', { csrf_token: t, username: 'root', password: 'root-password-1', next });
    assert.equal(r.status, 303);
    assert.equal(r.location, '/admin', next);
  }
});

test('maintenance mode: the console keeps answering and switches it; the API answers 503 meanwhile', async () => {
  const on = await page(server, jar, '/admin/maintenance', { csrf_token: csrf, enabled: 'on' });
  assert.equal(on.status, 303);
  try {
    let status = 0;
    for (let i = 0; i < 30 && status !== 503; i++) {
      status = (await server.json('GET', '/v1/zoos')).status;
      if (status !== 503) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status, 503);
    for (const url of ['/admin', '/admin/clients', '/admin/maintenance']) {
      const p = await page(server, jar, url);
      assert.equal(p.status, 200, url);
      assert.match(p.html, /Maintenance mode is/);
    }
    assert.equal((await page(server, new CookieJar(), '/admin')).status, 200, 'the sign-in page too');
    const css = /href="([^"]+console\.css[^"]*)"/.exec((await page(server, jar, '/admin')).html)![1];
    assert.equal((await server.fetch(unescapeHtml(css))).status, 200);
  } finally {
    assert.equal((await page(server, jar, '/admin/maintenance', { csrf_token: csrf, enabled: 'off' })).status, 303);
    for (let i = 0; i < 30 && (await server.json('GET', '/v1/zoos')).status === 503; i++) await new Promise((r) => setTimeout(r, 100));
  }
});

test('errors: a browser gets styled HTML pages, a JSON client the JSON error body; 405 carries Allow', async () => {
  const missing = await page(server, jar, '/admin/nothing/here');
  assert.equal(missing.status, 404);
  assert.match(missing.html, /<h1>Not found<\/h1>/);
  assert.match(missing.html, /console\.css/);
  const json = await server.json('GET', '/admin/nothing/here');
  assert.equal(json.status, 404);
  assert.equal(typeof json.body.error, 'string');
  // A client that takes JSON gets the JSON error body for the console's refusals too.
  const signedOut = await server.json('GET', '/admin/clients');
  assert.equal(signedOut.status, 401);
  assert.deepEqual(signedOut.body, { error: 'Sign in to the admin console first', detail: { session: 'none, or it has ended' } });
  const noToken = await server.json('POST', '/admin/maintenance', { enabled: 'on' }, { cookie: jar.header() });
  assert.equal(noToken.status, 403);
  assert.deepEqual(noToken.body.detail, { csrf_token: 'missing or invalid' });
  const refusedForm = await server.fetch('/admin/users', { method: 'POST', headers: { accept: 'application/json', cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ csrf_token: csrf, username: 'x y', password: 'short' }).toString() });
  assert.equal(refusedForm.status, 400);
  assert.deepEqual(Object.keys(((await refusedForm.json()) as { detail: object }).detail).sort(), ['password', 'username']);
  const put = await server.fetch('/admin/clients', { method: 'PUT', headers: { accept: 'text/html', cookie: jar.header() } });
  assert.equal(put.status, 405);
  assert.equal(put.headers.get('allow'), 'GET, HEAD, POST');
  assert.match(await put.text(), /<h1>Method not allowed<\/h1>/);
  const broken = await server.fetch('/admin/clients', { method: 'POST', headers: { accept: 'text/html', cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=%zz' });
  assert.equal(broken.status, 400);
  assert.match(await broken.text(), /<h1>Bad request<\/h1>/);
  // The admin API's unknown URLs stay JSON, even for a browser.
  const api = await server.fetch('/admin/v1/nothing-here', { headers: { accept: 'text/html,*/*;q=0.8' } });
  assert.equal(api.status, 404);
  assert.match(api.headers.get('content-type')!, /^application\/json/);
  assert.equal(api.headers.get('content-security-policy'), "default-src 'none'; frame-ancestors 'none'", 'the JSON policy, not the pages\'');
});

test('webhooks: add (the secret shown once), refused URLs named, the delivery page, delete after confirming; every page keeps the console policy', async () => {
  const list = await page(server, jar, '/admin/webhooks');
  assert.equal(list.status, 200);
  assert.match(list.html, /No webhook yet/);
  const token = hiddenField(list.html, 'csrf_token');
  // http and a private address: 400, the form again with the field named, nothing added.
  for (const url of ['http://hooks.example/x', 'https://10.0.0.5/x']) {
    const bad = await page(server, jar, '/admin/webhooks', { csrf_token: token, url });
    assert.equal(bad.status, 400, bad.html.slice(0, 300));
    assert.match(bad.html, /href="#f-url">URL<\/a>/);
  }
  const added = await page(server, jar, '/admin/webhooks', { csrf_token: token, url: 'https://hooks.example/gatehouse', events: ['record.created', 'record.deleted'], collections: 'zoos' });
  assert.equal(added.status, 201, added.html.slice(0, 300));
  const secret = /<code class="secret" id="webhook-secret">(whsec_[^<]+)<\/code>/.exec(added.html);
  assert.ok(secret, 'the secret on the answer');
  const id = /href="\/admin\/webhooks\/([0-9a-f-]+)">Done/.exec(added.html)![1];
  // Listed everywhere without its secret; the CLI sees the same webhook.
  const after = await page(server, jar, '/admin/webhooks');
  assert.match(after.html, /https:\/\/hooks\.example\/gatehouse/);
  assert.ok(!after.html.includes(secret[1]));
  const listed = JSON.parse((await server.cli(['webhook', 'list', '--json'])).stdout);
  assert.deepEqual(listed.find((w: { id: string }) => w.id === id).events, ['record.created', 'record.deleted']);
  for (const [url, status] of [
    [`/admin/webhooks/${id}`, 200],
    [`/admin/webhooks/${id}/delete`, 200],
    ['/admin/webhooks/nope', 404],
  ] as const) {
    const p = await page(server, jar, url);
    assert.equal(p.status, status, url);
    assert.ok(!p.html.includes(secret[1]), url);
    assert.match(p.headers.get('content-security-policy')!, /script-src 'self'/);
    for (const m of p.html.matchAll(/<(input|select|textarea)\b[^>]*\bid="([^"]+)"/g)) assert.ok(p.html.includes(`for="${m[2]}"`), `${url}: #${m[2]} has no label`);
  }
  assert.match((await page(server, jar, `/admin/webhooks/${id}`)).html, /Nothing delivered yet/);
  // Without the form token nothing is deleted.
  assert.equal((await page(server, jar, `/admin/webhooks/${id}/delete`, { csrf_token: 'forged' })).status, 403);
  assert.equal((await page(server, jar, `/admin/webhooks/${id}`)).status, 200);
  const deleted = await page(server, jar, `/admin/webhooks/${id}/delete`, { csrf_token: token });
  assert.equal(deleted.status, 303);
  assert.equal((await page(server, jar, `/admin/webhooks/${id}`)).status, 404);
  assert.match((await page(server, jar, '/admin/webhooks?deleted')).html, /Webhook deleted/);
});

test('pushed authorization requests (RFC 9126) are required in the console and shown on the client page', async () => {
  const made = await page(server, jar, '/admin/clients', { csrf_token: csrf, client_id: 'par-c', type: 'confidential', grant_types: 'authorization_code', redirect_uris: 'https://par.example/cb', require_par: 'yes', token_type: 'bearer' });
  assert.equal(made.status, 201, made.html);
  let shown = await page(server, jar, '/admin/clients/par-c');
  assert.match(shown.html, /<dt>Pushed requests required<\/dt><dd>yes/);
  assert.match(shown.html, /name="require_par" value="yes" checked/);
  const listed = async () => JSON.parse((await server.cli(['client', 'list', '--json'])).stdout).find((c: { client_id: string }) => c.client_id === 'par-c');
  assert.equal((await listed()).require_pushed_authorization_requests, true);
  const saved = await page(server, jar, '/admin/clients/par-c', { csrf_token: csrf, grant_types: 'authorization_code', redirect_uris: 'https://par.example/cb', token_type: 'bearer' });
  assert.equal(saved.status, 303, saved.html);
  shown = await page(server, jar, '/admin/clients/par-c');
  assert.match(shown.html, /<dt>Pushed requests required<\/dt><dd>no/);
  assert.equal((await listed()).require_pushed_authorization_requests, false);
  assert.equal((await page(server, jar, '/admin/clients/par-c/delete', { csrf_token: csrf })).status, 303);
});
