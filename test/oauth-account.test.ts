// {auth_url}/account over HTTPS, as a browser drives it: sign in, see the authorized apps, revoke
// one (its tokens stop working at once), sign out (the old cookie is dead), change the password.
// A forged, another user's or a CSRF-less revoke changes nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { findUserByUsername, updateProfile } from '../src/authserver/model/users.js';
import { CookieJar, addClient, addUser, basic, hiddenField, obtainCode, page, post, sleep, type RegisteredClient } from './helpers/oauth.js';

const REDIRECT = 'https://planner.example/cb';
let server: InProcessApp;
let planner: RegisteredClient;

before(async () => {
  server = await startApp({ file: true });
  await addUser(server, 'ada', 'ada-password-1');
  await addUser(server, 'bob', 'bob-password-1');
  planner = await addClient(server, 'planner', ['--name', 'Zoo Planner', '--grant', 'authorization_code', '--redirect-uri', REDIRECT]);
});
after(async () => server?.cleanup());

async function tokenFor(username: string, password: string, scope = 'zoos:read orders:read'): Promise<string> {
  const { code } = await obtainCode(server, { clientId: 'planner', redirectUri: REDIRECT, username, password, scope });
  const r = await post(server, 'token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, { auth: basic('planner', planner.client_secret!) });
  assert.equal(r.status, 200);
  return r.body.access_token;
}

async function signedIn(username: string, password: string): Promise<{ jar: CookieJar; html: string }> {
  const jar = new CookieJar();
  const first = await page(server, jar, '/oauth/account');
  assert.equal(first.status, 200);
  assert.match(first.html, /Sign in to see the applications you authorized/);
  const posted = await page(server, jar, '/oauth/account', { csrf_token: hiddenField(first.html, 'csrf_token'), action: 'signin', username, password });
  assert.equal(posted.status, 303);
  const shown = await page(server, jar, '/oauth/account');
  assert.match(shown.html, new RegExp(`Signed in as <strong>${username}</strong>`));
  return { jar, html: shown.html };
}

const grantIds = (html: string) => [...html.matchAll(/name="grant_id" value="([^"]+)"/g)].map((m) => m[1]);
const api = (token: string) => server.json('GET', '/v1/zoos', undefined, { authorization: `Bearer ${token}` });

test('the page lists the apps the user authorized: name, scopes in words, granted, expires, last used', async () => {
  const token = await tokenFor('ada', 'ada-password-1');
  assert.equal((await api(token)).status, 200);
  const { html } = await signedIn('ada', 'ada-password-1');
  assert.match(html, /Zoo Planner/);
  assert.match(html, /Read your zoos/i);
  assert.match(html, /<dt>Granted<\/dt>/);
  assert.match(html, /valid for 1 hour/);
  assert.match(html, /<dt>Last used<\/dt><dd>\d{4}-/);
  assert.equal(grantIds(html).length, 1);
  assert.match(html, /<button type="submit" name="action" value="revoke"/);
});

test('revoke ends the grant and its tokens at once; a forged, another user\'s or a CSRF-less revoke changes nothing', async () => {
  const token = await tokenFor('ada', 'ada-password-1');
  const earlier = await tokenFor('ada', 'ada-password-1', 'zoos:read orders:read');
  const { jar, html } = await signedIn('ada', 'ada-password-1');
  const ids = grantIds(html);
  assert.equal(ids.length, 1, 'the app authorized three times is listed once');
  assert.equal(html.match(/<p class="app-name">Zoo Planner/g)?.length, 1);
  const csrf = hiddenField(html, 'csrf_token');

  // Bob signs in on his own browser and tries Ada's grant: nothing happens.
  const bob = await signedIn('bob', 'bob-password-1');
  const cross = await page(server, bob.jar, '/oauth/account', { csrf_token: hiddenField(bob.html, 'csrf_token'), action: 'revoke', grant_id: ids[0] });
  assert.equal(cross.status, 404);
  const forged = await page(server, jar, '/oauth/account', { csrf_token: csrf, action: 'revoke', grant_id: 'no-such-grant' });
  assert.equal(forged.status, 404);
  const noCsrf = await page(server, jar, '/oauth/account', { action: 'revoke', grant_id: ids[0] });
  assert.equal(noCsrf.status, 403);
  const otherCsrf = await page(server, jar, '/oauth/account', { csrf_token: hiddenField(bob.html, 'csrf_token'), action: 'revoke', grant_id: ids[0] });
  assert.equal(otherCsrf.status, 403, 'another browser\'s form token');
  assert.equal(grantIds((await page(server, jar, '/oauth/account')).html).length, 1, 'nothing was revoked');
  assert.equal((await api(token)).status, 200);

  for (const id of ids) {
    const done = await page(server, jar, '/oauth/account', { csrf_token: csrf, action: 'revoke', grant_id: id });
    assert.equal(done.status, 303);
    assert.match(done.location!, /\/oauth\/account\?done=revoked$/);
  }
  const after = await page(server, jar, '/oauth/account?done=revoked');
  assert.match(after.html, /Access revoked/);
  assert.match(after.html, /No application has access to your data/);
  assert.equal((await api(token)).status, 401, 'the token died with its grant, at once on this instance');
  assert.equal((await api(earlier)).status, 401, 'one revoke took the app back: the tokens of every earlier authorization too');
});

test('CSRF binding: a planted cookie value is replaced, never adopted, and the token minted for it is refused', async () => {
  const probe = new CookieJar();
  await page(server, probe, '/oauth/account');
  const name = [...probe.cookies.keys()].find((k) => k.endsWith('gatehouse_browser'))!;
  const planted = 'A'.repeat(43);
  const attacker = new CookieJar();
  attacker.cookies.set(name, planted);
  const first = await page(server, attacker, '/oauth/account');
  assert.notEqual(attacker.cookies.get(name), planted, 'the answer sets a fresh binding value of the server\'s own');
  const minted = hiddenField(first.html, 'csrf_token');
  // Planted in Ada's signed-in browser with the attacker's token: her session is not signed out.
  const { jar } = await signedIn('ada', 'ada-password-1');
  jar.cookies.set(name, planted);
  assert.equal((await page(server, jar, '/oauth/account', { csrf_token: minted, action: 'signout' })).status, 403);
  jar.cookies.delete(name);
  assert.match((await page(server, jar, '/oauth/account')).html, /Signed in as <strong>ada<\/strong>/);
});

test('CSRF binding rotates at sign-in: the sign-in form\'s token is refused once signed in', async () => {
  const jar = new CookieJar();
  const first = await page(server, jar, '/oauth/account');
  const preLogin = hiddenField(first.html, 'csrf_token');
  const posted = await page(server, jar, '/oauth/account', { csrf_token: preLogin, action: 'signin', username: 'ada', password: 'ada-password-1' });
  assert.equal(posted.status, 303);
  assert.equal((await page(server, jar, '/oauth/account', { csrf_token: preLogin, action: 'signout' })).status, 403, 'the pre-login token');
  assert.match((await page(server, jar, '/oauth/account')).html, /Signed in as <strong>ada<\/strong>/);
});

test('sign out ends the session on the server: the old cookie no longer signs in', async () => {
  const { jar, html } = await signedIn('ada', 'ada-password-1');
  const cookie = jar.header();
  const out = await page(server, jar, '/oauth/account', { csrf_token: hiddenField(html, 'csrf_token'), action: 'signout' });
  assert.equal(out.status, 303);
  const replayed = await server.fetch('/oauth/account', { headers: { accept: 'text/html', cookie } });
  assert.match(await replayed.text(), /Sign in to see the applications/);
});

test('change password: the current one is required, the rules apply, the new one works', async () => {
  const { jar, html } = await signedIn('ada', 'ada-password-1');
  const csrf = hiddenField(html, 'csrf_token');
  const wrong = await page(server, jar, '/oauth/account', { csrf_token: csrf, action: 'password', current_password: 'not-it-at-all', new_password: 'ada-password-2' });
  assert.equal(wrong.status, 400);
  assert.match(wrong.html, /current password is not correct/);
  const short = await page(server, jar, '/oauth/account', { csrf_token: csrf, action: 'password', current_password: 'ada-password-1', new_password: 'short' });
  assert.equal(short.status, 400);
  assert.match(short.html, /at least 8 characters/);
  const ok = await page(server, jar, '/oauth/account', { csrf_token: csrf, action: 'password', current_password: 'ada-password-1', new_password: 'ada-password-2' });
  assert.equal(ok.status, 303);
  await signedIn('ada', 'ada-password-2');
  const old = new CookieJar();
  const first = await page(server, old, '/oauth/account');
  const refused = await page(server, old, '/oauth/account', { csrf_token: hiddenField(first.html, 'csrf_token'), action: 'signin', username: 'ada', password: 'ada-password-1' });
  assert.equal(refused.status, 401);
});

test('profile: name and e-mail address (OpenID Connect claims); a bad address changes nothing; a new address waits for its link', async () => {
  await updateProfile(server.ctx, 'bob', { email: 'bob@example.org', emailVerified: true });
  const { jar, html } = await signedIn('bob', 'bob-password-1');
  assert.match(html, /value="bob@example\.org"/);
  assert.match(html, /\(verified\)/);
  const csrf = hiddenField(html, 'csrf_token');
  const bad = await page(server, jar, '/oauth/account', { csrf_token: csrf, action: 'profile', name: 'Bob Baker', email: 'bob at example' });
  assert.equal(bad.status, 400);
  assert.match(bad.html, /e-mail address is name@domain.*Nothing was changed/);
  assert.match(bad.html, /value="bob at example"/, 'the form comes back as typed');
  assert.equal((await findUserByUsername(server.ctx, 'bob'))!.name, null);
  const ok = await page(server, jar, '/oauth/account', { csrf_token: csrf, action: 'profile', name: 'Bob Baker', email: 'b.baker@example.org', password: 'bob-password-1' });
  assert.equal(ok.status, 303);
  // The name at once; the new address only once the link mailed to it is opened (test/users-lifecycle.test.ts).
  const bob = (await findUserByUsername(server.ctx, 'bob'))!;
  assert.deepEqual([bob.name, bob.email, bob.emailVerified], ['Bob Baker', 'bob@example.org', true]);
  assert.match((await page(server, jar, ok.location!)).html, /Waiting for confirmation: <strong>b\.baker@example\.org<\/strong>/);
  const forged = await page(server, jar, '/oauth/account', { action: 'profile', name: 'Mallory' });
  assert.equal(forged.status, 403);
  assert.equal((await findUserByUsername(server.ctx, 'bob'))!.name, 'Bob Baker');
});

test('the login and consent pages link to the account page; JSON clients get JSON errors', async () => {
  const login = await page(server, new CookieJar(), '/oauth/authorize?response_type=code&client_id=planner&scope=zoos%3Aread');
  assert.match(login.html, /href="\/oauth\/account"/);
  const json = await server.json('POST', '/oauth/account', 'action=revoke&grant_id=x', { 'content-type': 'application/x-www-form-urlencoded' });
  assert.equal(json.status, 403);
  assert.equal(typeof json.body.error, 'string');
  await sleep(0);
});

test('the consent and account pages show a client\'s home page; the consent page says when the operator has not verified it', async () => {
  await addClient(server, 'homely', ['--name', 'Homely', '--uri', 'https://homely.example/about', '--grant', 'authorization_code', '--redirect-uri', REDIRECT]);
  await addClient(server, 'vouched', ['--name', 'Vouched', '--verified', '--grant', 'authorization_code', '--redirect-uri', REDIRECT]);
  const jar = new CookieJar();
  const { signIn } = await import('./helpers/oauth.js');
  const homely = await signIn(server, jar, '/oauth/authorize?response_type=code&client_id=homely&scope=zoos%3Aread', 'bob', 'bob-password-1');
  assert.match(homely.html, /Home page: <strong class="client">homely\.example<\/strong>/);
  assert.match(homely.html, /has not verified this application/);
  const vouched = await signIn(server, jar, '/oauth/authorize?response_type=code&client_id=vouched&scope=zoos%3Aread', 'bob', 'bob-password-1');
  assert.doesNotMatch(vouched.html, /has not verified/);
  assert.doesNotMatch(vouched.html, /Home page:/);
  const listed = JSON.parse((await server.cli(['client', 'list', '--json'])).stdout) as { client_id: string; uri: string | null; verified: boolean }[];
  assert.deepEqual(listed.filter((c) => c.client_id === 'homely' || c.client_id === 'vouched').map((c) => [c.client_id, c.uri, c.verified]), [['homely', 'https://homely.example/about', false], ['vouched', null, true]]);
  const bad = (await server.cli(['client', 'add', 'bad-uri', '--uri', 'javascript:alert(1)', '--grant', 'client_credentials']));
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--uri/);
});
