// The login and consent pages in a real browser (headless Chromium): sign in, untick a scope,
// pick a validity, allow, land on the client's redirect URI with a code; the implicit grant with
// a client page whose script reads the token from the fragment; screenshots for a visual check.
// Spawned server (test/helpers/server.ts), not in process: Chromium drives the pages over HTTPS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { ROOT, startServer, type TestServer } from './helpers/server.js';
import { addClient, addUser, basic, introspect, post, type RegisteredClient } from './helpers/oauth.js';

let server: TestServer;
let callbackServer: http.Server;
let callbackBase: string;
let browser: Browser;
let context: BrowserContext;
let web: RegisteredClient;
const SHOTS = path.join(ROOT, 'test-results');

// The client's side: a code callback, and an implicit-grant page whose script reads the fragment.
const IMPLICIT_PAGE = `<!doctype html><html><head><title>client</title></head><body>
<pre id="token">waiting</pre><pre id="scope"></pre><pre id="state"></pre>
<script>
const f = new URLSearchParams(location.hash.slice(1));
document.getElementById('token').textContent = f.get('access_token') || 'none';
document.getElementById('scope').textContent = f.get('scope') || '';
document.getElementById('state').textContent = f.get('state') || '';
</script></body></html>`;

before(async () => {
  callbackServer = http.createServer((req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(req.url!.startsWith('/implicit') ? IMPLICIT_PAGE : '<!doctype html><title>callback</title><p>callback</p>');
  });
  await new Promise<void>((r) => callbackServer.listen(0, '127.0.0.1', r));
  callbackBase = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}`;

  server = await startServer();
  addUser(server, 'frank', 'frank-password-1');
  web = addClient(server, 'zoo-planner', ['--name', 'Zoo Planner', '--grant', 'authorization_code', '--grant', 'implicit', '--redirect-uri', `${callbackBase}/cb`, '--redirect-uri', `${callbackBase}/implicit`]);
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1100, height: 900 } });
  mkdirSync(SHOTS, { recursive: true });
});
after(async () => {
  await context?.close();
  await browser?.close();
  await server?.cleanup();
  await new Promise((r) => callbackServer?.close(r));
});

function authorize(params: Record<string, string>): string {
  // The consent page every time (an earlier grant would otherwise be remembered).
  return `${server.url}/oauth/authorize?${new URLSearchParams({ prompt: 'consent', ...params })}`;
}

test('code grant in the browser: sign in, untick a scope, pick a validity, allow, land on the redirect URI', async () => {
  const page = await context.newPage();
  await page.goto(authorize({ response_type: 'code', client_id: 'zoo-planner', redirect_uri: `${callbackBase}/cb`, scope: 'zoos:read zoos:write orders:read', state: 'browser-1' }));
  await page.screenshot({ path: path.join(SHOTS, 'login.png'), fullPage: true });
  assert.equal(await page.title(), 'Sign in · gatehouse');
  // Labels are wired to their inputs; the keyboard alone signs in (Enter submits).
  await page.getByLabel('Username').fill('frank');
  await page.keyboard.press('Tab');
  await page.keyboard.type('frank-password-1');
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/oauth\/authorize\?/);
  await page.getByRole('button', { name: 'Allow' }).waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'consent.png'), fullPage: true });

  assert.ok(await page.getByText('Zoo Planner').first().isVisible());
  const boxes = page.locator('input[name="scope"]');
  assert.equal(await boxes.count(), 3);
  for (let i = 0; i < 3; i++) assert.equal(await boxes.nth(i).isChecked(), true);
  await page.getByLabel(/Create, change and delete your zoos/).uncheck();
  await page.getByLabel('1 day').check();
  const [response] = await Promise.all([page.waitForURL(`${callbackBase}/cb?**`), page.getByRole('button', { name: 'Allow' }).click()]);
  void response;
  const landed = new URL(page.url());
  assert.equal(landed.origin + landed.pathname, `${callbackBase}/cb`);
  assert.equal(landed.searchParams.get('state'), 'browser-1');
  const code = landed.searchParams.get('code')!;
  assert.ok(code);

  const tokens = await post(server, 'token', { grant_type: 'authorization_code', code, redirect_uri: `${callbackBase}/cb` }, { auth: basic('zoo-planner', web.client_secret!) });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  assert.equal(tokens.body.scope, 'zoos:read orders:read');
  const info = await introspect(server, tokens.body.access_token, web);
  assert.equal(info.active, true);
  await page.close();
});

test('implicit grant in the browser: the client page script reads the token from the fragment', async () => {
  const page = await context.newPage();
  await page.goto(authorize({ response_type: 'token', client_id: 'zoo-planner', redirect_uri: `${callbackBase}/implicit`, scope: 'zoos:read orders:read', state: 'imp-2' }));
  // Still signed in from the previous test: straight to consent.
  await page.getByRole('button', { name: 'Allow' }).waitFor();
  await page.getByLabel(/Read your orders/).uncheck();
  await page.getByLabel('1 hour').check();
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.waitForURL(`${callbackBase}/implicit#**`);
  await page.locator('#token:not(:text("waiting"))').waitFor();
  const token = (await page.locator('#token').textContent())!;
  assert.match(token, /^[0-9a-f]{32}\.[A-Za-z0-9_-]{43}$/);
  assert.equal(await page.locator('#scope').textContent(), 'zoos:read');
  assert.equal(await page.locator('#state').textContent(), 'imp-2');
  const info = await introspect(server, token, web);
  assert.equal(info.active, true);
  assert.equal(info.scope, 'zoos:read');
  await page.close();
});

test('deny in the browser sends access_denied back; the pages fit a phone screen', async () => {
  const phone = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 375, height: 720 }, deviceScaleFactor: 2 });
  const page = await phone.newPage();
  await page.goto(authorize({ response_type: 'code', client_id: 'zoo-planner', redirect_uri: `${callbackBase}/cb`, state: 'deny-3' }));
  await page.getByLabel('Username').fill('frank');
  await page.getByLabel('Password').fill('frank-password-1');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Deny' }).waitFor();
  // Nothing overflows horizontally on a narrow screen.
  const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
  assert.equal(overflow, 0);
  await page.screenshot({ path: path.join(SHOTS, 'consent-phone.png'), fullPage: true });
  await Promise.all([page.waitForURL(`${callbackBase}/cb?**`), page.getByRole('button', { name: 'Deny' }).click()]);
  const landed = new URL(page.url());
  assert.equal(landed.searchParams.get('error'), 'access_denied');
  assert.equal(landed.searchParams.get('state'), 'deny-3');
  assert.equal(landed.searchParams.get('code'), null);
  await phone.close();
});

test('admin in the browser: never pre-ticked, said to be full control; Allow as shown grants no admin', async () => {
  assert.equal(server.cli(['user', 'add', 'root', '--admin', '--password', 'root-password-1']).status, 0);
  const tool = addClient(server, 'admin-tool', ['--name', 'Admin Tool', '--grant', 'authorization_code', '--redirect-uri', `${callbackBase}/cb`, '--scope', 'admin zoos:read']);
  const fresh = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1100, height: 900 } });
  const page = await fresh.newPage();
  await page.goto(authorize({ response_type: 'code', client_id: 'admin-tool', redirect_uri: `${callbackBase}/cb`, scope: 'zoos:read admin', state: 'adm' }));
  await page.getByLabel('Username').fill('root');
  await page.getByLabel('Password').fill('root-password-1');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Allow' }).waitFor();
  const admin = page.locator('input[name="scope"][value="admin"]');
  assert.equal(await admin.isChecked(), false, 'the admin box is not ticked');
  assert.equal(await page.locator('input[name="scope"][value="zoos:read"]').isChecked(), true);
  assert.ok(await page.getByText(/Full control of this gatehouse deployment/).isVisible());
  await page.screenshot({ path: path.join(SHOTS, 'consent-admin.png'), fullPage: true });
  await Promise.all([page.waitForURL(`${callbackBase}/cb?**`), page.getByRole('button', { name: 'Allow' }).click()]);
  const code = new URL(page.url()).searchParams.get('code')!;
  const tokens = await post(server, 'token', { grant_type: 'authorization_code', code, redirect_uri: `${callbackBase}/cb` }, { auth: basic('admin-tool', tool.client_secret!) });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  assert.equal(tokens.body.scope, 'zoos:read');
  await fresh.close();
});
