// Consent and access end to end (docs/oauth.md, docs/access.md): a user grants zoos:read only, for 1 hour, on the consent page in headless
// Chromium; the client then reads the user's zoos, gets 405 on POST, 403 on orders, 401 after revocation.
// Spawned server (test/helpers/server.ts), not in process: Chromium drives the pages over HTTPS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { startServer, type TestServer } from './helpers/server.js';
import { addClient, addUser, basic, post } from './helpers/oauth.js';

let server: TestServer;
let browser: Browser;
let callback: http.Server;
let callbackBase: string;

before(async () => {
  callback = http.createServer((_req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end('<!doctype html><title>client</title><p>back at the client</p>');
  });
  await new Promise<void>((r) => callback.listen(0, '127.0.0.1', r));
  callbackBase = `http://127.0.0.1:${(callback.address() as AddressInfo).port}`;
  server = await startServer();
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
});

after(async () => {
  await browser?.close();
  await server?.cleanup();
  await new Promise((r) => callback?.close(r));
});

test('a user grants zoos:read for 1 hour in the browser; the client gets exactly that', async () => {
  addUser(server, 'alice', 'alice-password-1');
  // The user's own zoos, created through a first-party app using the password grant.
  addClient(server, 'first-party', ['--secret', 'fp-secret-0123456789abcdef0123456789', '--grant', 'password']);
  const own = await post(server, 'token', { grant_type: 'password', username: 'alice', password: 'alice-password-1', scope: 'zoos:write zoos:read' }, { auth: basic('first-party', 'fp-secret-0123456789abcdef0123456789') });
  assert.equal(own.status, 200, JSON.stringify(own.body));
  const created = await server.json('POST', '/v1/zoos', { name: "Alice's zoo", city: 'Utrecht' }, { authorization: `Bearer ${own.body.access_token}` });
  assert.equal(created.status, 201);
  const other = await server.json('POST', '/v1/orders', { item: 'tickets', quantity: 2 }, { authorization: `Bearer ${own.body.access_token}` });
  assert.equal(other.status, 403, 'the first-party token has no orders scope');

  addClient(server, 'zoo-viewer', ['--name', 'Zoo Viewer', '--secret', 'viewer-secret-0123456789abcdef0123456789', '--grant', 'authorization_code', '--redirect-uri', `${callbackBase}/cb`]);
  const context = await browser.newContext({ ignoreHTTPSErrors: true });
  const page = await context.newPage();
  const authorize = new URLSearchParams({ response_type: 'code', client_id: 'zoo-viewer', redirect_uri: `${callbackBase}/cb`, scope: 'zoos:read zoos:write orders:read', state: 'e2e' });
  await page.goto(`${server.url}/oauth/authorize?${authorize}`);
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password').fill('alice-password-1');
  await page.getByRole('button', { name: /sign in/i }).click();
  await page.getByRole('button', { name: 'Allow' }).waitFor();
  await page.getByLabel(/Create, change and delete your zoos/).uncheck();
  await page.getByLabel(/Read your orders/).uncheck();
  await page.getByLabel('1 hour').check();
  await Promise.all([page.waitForURL(`${callbackBase}/cb?**`), page.getByRole('button', { name: 'Allow' }).click()]);
  const params = new URL(page.url()).searchParams;
  assert.equal(params.get('state'), 'e2e');
  await context.close();

  const token = await post(server, 'token', { grant_type: 'authorization_code', code: params.get('code')!, redirect_uri: `${callbackBase}/cb` }, { auth: basic('zoo-viewer', 'viewer-secret-0123456789abcdef0123456789') });
  assert.equal(token.status, 200, JSON.stringify(token.body));
  assert.equal(token.body.scope, 'zoos:read');
  assert.ok(token.body.expires_in <= 3600);
  const auth = { authorization: `Bearer ${token.body.access_token}` };

  const list = await server.json('GET', '/v1/zoos', undefined, auth);
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.map((z: { name: string }) => z.name), ["Alice's zoo"]);
  const one = await server.json('GET', `/v1/zoos/${created.body.id}`, undefined, auth);
  assert.equal(one.status, 200);
  assert.equal(one.body.city, 'Utrecht');

  const write = await server.json('POST', '/v1/zoos', { name: 'not allowed' }, auth);
  assert.equal(write.status, 405);
  assert.equal(write.headers.get('allow'), 'GET, HEAD');
  const orders = await server.json('GET', '/v1/orders', undefined, auth);
  assert.equal(orders.status, 403);

  const revoked = await post(server, 'revocation', { token: token.body.access_token }, { auth: basic('zoo-viewer', 'viewer-secret-0123456789abcdef0123456789') });
  assert.equal(revoked.status, 200);
  await new Promise((r) => setTimeout(r, 1000));
  const after = await server.json('GET', '/v1/zoos', undefined, auth);
  assert.equal(after.status, 401);
  assert.match(after.headers.get('www-authenticate')!, /invalid_token/);
});
