// Time and rate limits of the authorization server, on a server with tiny limits: expired codes,
// the longest validity on the consent page, and login brute force (password grant and login form).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { CookieJar, addClient, addUser, authorizeUrl, basic, hiddenField, obtainCode, page, post, sleep, type RegisteredClient } from './helpers/oauth.js';

let server: InProcessApp;
let app: RegisteredClient;
const CB = 'https://client.example/cb';

before(async () => {
  server = await startApp({ config: { auth: { codeTtl: 1, maxGrantTtl: 1800, loginThrottle: { max: 3, window: 60 } } } });
  await addUser(server, 'carol', 'carol-password');
  await addUser(server, 'dave', 'dave-password');
  app = await addClient(server, 'app', ['--grant', 'authorization_code', '--grant', 'password', '--redirect-uri', CB]);
});
after(async () => {
  await server.cleanup();
});

const auth = () => basic('app', app.client_secret!);

test('an expired code is invalid_grant', async () => {
  const { code } = await obtainCode(server, { clientId: 'app', redirectUri: CB, username: 'carol', password: 'carol-password' });
  await sleep(1300);
  const r = await post(server, 'token', { grant_type: 'authorization_code', code, redirect_uri: CB }, { auth: auth() });
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'invalid_grant');
});

test('the consent page never offers more than maxGrantTtl', async () => {
  const jar = new CookieJar();
  const login = await page(server, jar, authorizeUrl({ response_type: 'code', client_id: 'app', redirect_uri: CB }));
  const posted = await page(server, jar, '/oauth/authorize', { request: hiddenField(login.html, 'request'), csrf_token: hiddenField(login.html, 'csrf_token'), step: 'login', username: 'carol', password: 'carol-password' });
  const consent = await page(server, jar, posted.location!);
  const ttls = [...consent.html.matchAll(/name="ttl" value="(\d+)"/g)].map((m) => Number(m[1]));
  assert.deepEqual(ttls, [1800]);
  assert.match(consent.html, /30 minutes/);
});

test('password grant: past loginThrottle.max failures for a user name the answer is 429 with Retry-After', async () => {
  for (let i = 0; i < 3; i++) {
    const r = await post(server, 'token', { grant_type: 'password', username: 'dave', password: `guess-${i}` }, { auth: auth() });
    assert.equal(r.status, 400);
    assert.equal(r.body.error, 'invalid_grant');
  }
  const blocked = await post(server, 'token', { grant_type: 'password', username: 'dave', password: 'dave-password' }, { auth: auth() });
  assert.equal(blocked.status, 429);
  const retry = Number(blocked.headers.get('retry-after'));
  assert.ok(retry >= 1 && retry <= 60, String(retry));
  assert.ok(blocked.body.error);
  assert.equal(blocked.headers.get('cache-control'), 'no-store');
  // The IP has now failed 3 times as well: the login form is throttled for everyone from it.
  const jar = new CookieJar();
  const login = await page(server, jar, authorizeUrl({ response_type: 'code', client_id: 'app', redirect_uri: CB }));
  const form = await page(server, jar, '/oauth/authorize', { request: hiddenField(login.html, 'request'), csrf_token: hiddenField(login.html, 'csrf_token'), step: 'login', username: 'carol', password: 'carol-password' });
  assert.equal(form.status, 429);
  assert.ok(Number(form.headers.get('retry-after')) >= 1);
  assert.match(form.html, /Too many failed attempts/);
  assert.equal(jar.cookies.has('__Host-gatehouse_session'), false);
});
