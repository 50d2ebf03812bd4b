// No query or form value or key reaches an object's prototype: `constructor`, `__proto__`,
// `toString`, `hasOwnProperty` as values and as keys on the account page, the console's pages and
// forms, the authorization and token endpoints and the admin API answer like any unknown value —
// never 5xx, never a notice or label that was not asked for.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { CookieJar, addClient, addUser, basic, hiddenField, page, type RegisteredClient } from './helpers/oauth.js';

const NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];
const CB = 'https://client.example/cb';

let server: InProcessApp;
let web: RegisteredClient;
let adminToken: string;
let consoleJar: CookieJar;
let consoleCsrf: string;
let userId: string;

before(async () => {
  server = await startApp();
  await addUser(server, 'root', 'root-password-1');
  assert.equal((await server.cli(['user', 'admin', 'root', 'on'])).status, 0);
  await addUser(server, 'ada', 'ada-password-1');
  web = await addClient(server, 'web', ['--grant', 'authorization_code', '--grant', 'password', '--grant', 'client_credentials', '--redirect-uri', CB, '--scope', 'admin zoos:read']);
  const tokens = await server.fetch('/oauth/token', {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', authorization: basic('web', web.client_secret!) },
    body: 'grant_type=client_credentials&scope=admin',
  });
  adminToken = ((await tokens.json()) as { access_token: string }).access_token;
  assert.ok(adminToken);
  consoleJar = new CookieJar();
  const front = await page(server, consoleJar, '/admin');
  assert.equal((await page(server, consoleJar, '/admin/signin', { csrf_token: hiddenField(front.html, 'csrf_token'), username: 'root', password: 'root-password-1' })).status, 303);
  const users = await page(server, consoleJar, '/admin/users');
  consoleCsrf = hiddenField(users.html, 'csrf_token');
  userId = /href="\/admin\/users\/([0-9a-f-]+)">ada</.exec(users.html)![1];
});
after(async () => server?.cleanup());

/** Every answer below 500; the failures listed together. */
async function noServerErrors(label: string, probes: (() => Promise<{ status: number; what: string; text: string }>)[]) {
  const failures: string[] = [];
  for (const probe of probes) {
    const r = await probe();
    if (r.status >= 500) failures.push(`${r.what} → ${r.status}: ${r.text.slice(0, 200)}`);
  }
  assert.deepEqual(failures, [], `${label}:\n${failures.join('\n')}`);
}

const html = (target: string, jar = new CookieJar()) => async () => {
  const p = await page(server, jar, target);
  return { status: p.status, what: `GET ${target}`, text: p.html };
};
const form = (target: string, fields: Record<string, string>, jar = new CookieJar()) => async () => {
  const p = await page(server, jar, target, fields);
  return { status: p.status, what: `POST ${target} ${JSON.stringify(fields)}`, text: p.html };
};
const json = (method: string, target: string, body?: unknown, headers: Record<string, string> = {}) => async () => {
  const r = await server.json(method, target, body, headers);
  return { status: r.status, what: `${method} ${target} ${body === undefined ? '' : JSON.stringify(body)}`, text: r.text };
};
const tokenPost = (endpoint: string, raw: string) => async () => {
  const res = await server.fetch(`/oauth/${endpoint}`, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', authorization: basic('web', web.client_secret!) },
    body: raw,
  });
  return { status: res.status, what: `POST /oauth/${endpoint} ${raw}`, text: await res.text() };
};

test('the account page: prototype names as ?done= values and as keys are unknown notices', async () => {
  await noServerErrors(
    'account',
    NAMES.flatMap((n) => [html(`/oauth/account?done=${n}`), html(`/oauth/account?${n}=1`), html(`/oauth/account?done=${n}&done=revoked`)]),
  );
  for (const n of NAMES) {
    const p = await page(server, new CookieJar(), `/oauth/account?done=${n}`);
    assert.equal(p.status, 200);
    assert.doesNotMatch(p.html, /function|\[native code\]|\[object/);
  }
  const jar = new CookieJar();
  const first = await page(server, jar, '/oauth/account');
  const csrf = hiddenField(first.html, 'csrf_token');
  await noServerErrors(
    'account forms',
    NAMES.flatMap((n) => [form('/oauth/account', { csrf_token: csrf, action: n }, jar), form('/oauth/account', { csrf_token: csrf, action: 'signin', username: n, password: n, [n]: n }, jar)]),
  );
});

test('the console: prototype names as query values, keys, path segments and form fields answer like unknown ones', async () => {
  const pages = ['/admin', '/admin/clients', '/admin/users', '/admin/grants', '/admin/webhooks', '/admin/maintenance', `/admin/users/${userId}`, '/admin/clients/web'];
  await noServerErrors(
    'console pages',
    NAMES.flatMap((n) => [
      ...pages.flatMap((p) => [html(`${p}?done=${n}`, consoleJar), html(`${p}?${n}=1`, consoleJar)]),
      html(`/admin/grants?user=${n}&client=${n}`, consoleJar),
      html(`/admin/users/${n}`, consoleJar),
      html(`/admin/clients/${n}`, consoleJar),
      html(`/admin/webhooks/${n}`, consoleJar),
      html(`/admin/assets/${n}`, consoleJar),
      html(`/admin?next=${n}`),
    ]),
  );
  for (const n of NAMES) {
    const p = await page(server, consoleJar, `/admin/users/${userId}?done=${n}`);
    assert.equal(p.status, 200);
    assert.doesNotMatch(p.html, /function|\[native code\]|\[object/);
  }
  await noServerErrors(
    'console forms',
    NAMES.flatMap((n) => [
      form('/admin/users', { csrf_token: consoleCsrf, username: n, password: 'long-enough-1', [n]: n }, consoleJar),
      form(`/admin/users/${userId}/admin`, { csrf_token: consoleCsrf, admin: n }, consoleJar),
      form('/admin/clients', { csrf_token: consoleCsrf, client_id: `c-${n.replace(/_/g, '')}`, grant_types: n, token_type: n, [n]: n }, consoleJar),
      form('/admin/clients/web', { csrf_token: consoleCsrf, grant_types: n, token_type: n, [n]: n }, consoleJar),
      form('/admin/maintenance', { csrf_token: consoleCsrf, enabled: n }, consoleJar),
      form('/admin/webhooks', { csrf_token: consoleCsrf, url: n, types: n, [n]: n }, consoleJar),
      form('/admin/signin', { csrf_token: consoleCsrf, username: n, password: n, next: n }, consoleJar),
    ]),
  );
});

test('the authorization endpoint: prototype names as parameter values and keys are unknown values', async () => {
  const params = ['response_type', 'client_id', 'redirect_uri', 'scope', 'prompt', 'code_challenge_method', 'response_mode', 'ttl'];
  await noServerErrors(
    'authorize',
    NAMES.flatMap((n) => [
      ...params.map((p) => html(`/oauth/authorize?response_type=code&client_id=web&redirect_uri=${encodeURIComponent(CB)}&${p}=${n}`)),
      html(`/oauth/authorize?response_type=code&client_id=web&redirect_uri=${encodeURIComponent(CB)}&${n}=1`),
      html(`/oauth/authorize?response_type=code&client_id=web&redirect_uri=${encodeURIComponent(CB)}&scope=zoos:read%20${n}`),
      form('/oauth/authorize', { step: n, request: `response_type=code&client_id=web&${n}=1`, csrf_token: n, decision: n, ttl: n, [n]: n }),
    ]),
  );
});

test('the token, revocation and introspection endpoints: prototype names as values and keys are unknown values', async () => {
  await noServerErrors(
    'token endpoints',
    NAMES.flatMap((n) => [
      tokenPost('token', `grant_type=${n}`),
      tokenPost('token', `grant_type=client_credentials&scope=${n}`),
      tokenPost('token', `grant_type=password&username=${n}&password=${n}`),
      tokenPost('token', `grant_type=authorization_code&code=${n}&redirect_uri=${n}`),
      tokenPost('token', `grant_type=refresh_token&refresh_token=${n}`),
      tokenPost('token', `grant_type=client_credentials&${n}=1`),
      tokenPost('revocation', `token=${n}&token_type_hint=${n}`),
      tokenPost('introspection', `token=${n}&token_type_hint=${n}&${n}=1`),
      json('POST', '/oauth/token', { grant_type: n, [n]: n }),
    ]),
  );
});

test('the admin API: prototype names as query values, keys and body fields are unknown ones', async () => {
  const auth = { authorization: `Bearer ${adminToken}` };
  await noServerErrors(
    'admin API',
    NAMES.flatMap((n) => [
      json('GET', `/admin/v1/grants?user=${n}`, undefined, auth),
      json('GET', `/admin/v1/grants?client=${n}`, undefined, auth),
      json('GET', `/admin/v1/grants?${n}=1`, undefined, auth),
      json('GET', `/admin/v1/events?types=${n}`, undefined, auth),
      json('GET', `/admin/v1/events?${n}=1`, undefined, auth),
      json('GET', `/admin/v1/clients?${n}=1`, undefined, auth),
      json('GET', `/admin/v1/clients/${n}`, undefined, auth),
      json('GET', `/admin/v1/users/${n}`, undefined, auth),
      json('GET', `/admin/v1/webhooks/${n}/deliveries?limit=${n}&before=${n}`, undefined, auth),
      json('POST', '/admin/v1/clients', { client_id: `x${n.replace(/_/g, '')}`, grant_types: [n], [n]: n }, auth),
      json('POST', '/admin/v1/clients', `{"client_id":"y","${n}":{"a":1}}`, auth),
      json('POST', '/admin/v1/users', { username: n, password: 'long-enough-1', [n]: true }, auth),
      json('PATCH', '/admin/v1/clients/web', { [n]: n, token_type: n }, auth),
      json('PUT', '/admin/v1/maintenance', { enabled: n, [n]: 1 }, auth),
      json('POST', '/admin/v1/webhooks', { url: n, types: [n], [n]: n }, auth),
    ]),
  );
  const r = await server.json('POST', '/admin/v1/clients', { client_id: 'zz', constructor: 'x', toString: 1 }, auth);
  assert.equal(r.status, 400, r.text);
  assert.match(r.body.detail.constructor ?? '', /unknown field/);
  assert.match(r.body.detail.toString ?? '', /unknown field/);
});
