// A browser app on another origin (examples/spa, as docs/oauth.md "A browser app, step by step"
// uses it) in headless Chromium: the authorization code + PKCE flow of a public client, the token
// request and GET /v1/zoos by fetch — allowed by CORS for the client's registered origin; the same
// calls from an origin no client lists are blocked by the browser.
// Spawned server (test/helpers/server.ts), not in process: Chromium enforces CORS between two real origins.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { ROOT, startServer, type TestServer } from './helpers/server.js';
import { addClient, addUser } from './helpers/oauth.js';
import { clientToken } from './helpers/tokens.js';

const SPA_DIR = path.join(ROOT, 'examples/spa');
const SHOTS = path.join(ROOT, 'test-results');
let server: TestServer;
let browser: Browser;
let context: BrowserContext;
const statics: http.Server[] = [];

/** Serves examples/spa on `host`, pointed at the test server. */
async function serveSpa(host: string): Promise<string> {
  const s = http.createServer((req, res) => {
    const file = new URL(req.url!, 'http://x').pathname === '/app.js' ? 'app.js' : 'index.html';
    let body = readFileSync(path.join(SPA_DIR, file), 'utf8');
    if (file === 'index.html') body = body.replace('data-gatehouse="https://127.0.0.1:8443"', `data-gatehouse="${server.url}"`);
    res.setHeader('content-type', file === 'app.js' ? 'text/javascript' : 'text/html; charset=utf-8');
    res.end(body);
  });
  await new Promise<void>((r) => s.listen(0, host === 'localhost' ? '127.0.0.1' : host, r));
  statics.push(s);
  return `http://${host}:${(s.address() as AddressInfo).port}`;
}

before(async () => {
  server = await startServer();
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  // The test server's certificate is self-signed; the page's own origin is plain http on loopback.
  context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
  mkdirSync(SHOTS, { recursive: true });
});
after(async () => {
  await context?.close();
  await browser?.close();
  await server?.cleanup();
  for (const s of statics) await new Promise((r) => s.close(r));
});

test('a public client\'s page on another origin signs in with PKCE, redeems the code and lists zoos by fetch', async () => {
  const spa = await serveSpa('127.0.0.1');
  addClient(server, 'zoo-spa', ['--public', '--name', 'Zoo SPA', '--grant', 'authorization_code', '--redirect-uri', `${spa}/`]);
  addUser(server, 'sally', 'sally-password-1');
  const page = await context.newPage();
  await page.goto(`${spa}/`);
  await page.getByRole('button', { name: 'Sign in with gatehouse' }).click();
  await page.waitForURL(/\/oauth\/authorize\?/);
  await page.getByLabel('Username').fill('sally');
  await page.getByLabel('Password').fill('sally-password-1');
  await page.keyboard.press('Enter');
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.waitForURL(`${spa}/`);
  await page.getByText(/GET \/v1\/zoos: 200/).waitFor({ timeout: 10_000 });
  assert.match((await page.locator('#status').textContent()) ?? '', /Signed in \(zoos:read\)\. GET \/v1\/zoos: 200, 0 in all\./);
  assert.equal((await page.locator('#zoos').textContent())?.trim(), '[]');
  await page.screenshot({ path: path.join(SHOTS, 'spa-signed-in.png') });
  await page.close();
});

test('the same calls from an origin no client lists are blocked by the browser', async () => {
  const stranger = await serveSpa('localhost'); // another origin than 127.0.0.1: not registered
  const token = await clientToken(server, 'cors-probe', 'zoos:read');
  const page = await context.newPage();
  await page.goto(`${stranger}/`);
  // A string, not a function: the test runner's TypeScript transform would add helpers the page lacks.
  const outcome = (await page.evaluate(`(async () => {
    const tryFetch = async (target, init) => {
      try { const res = await fetch(target, init); return 'read ' + res.status; } catch (e) { return 'blocked: ' + e.name; }
    };
    const url = ${JSON.stringify(server.url)};
    return {
      api: await tryFetch(url + '/v1/zoos', { headers: { authorization: 'Bearer ${token}' } }),
      token: await tryFetch(url + '/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' }),
      metadata: await tryFetch(url + '/.well-known/oauth-authorization-server', {}),
    };
  })()`)) as { api: string; token: string; metadata: string };
  assert.equal(outcome.api, 'blocked: TypeError', 'the preflight is refused: the page never sees the answer');
  assert.equal(outcome.token, 'blocked: TypeError');
  assert.equal(outcome.metadata, 'read 200', 'public metadata is readable from any origin');
  await page.close();
});
