// The device flow's pages in a real browser (headless Chromium): the code entry of /oauth/device,
// a wrong code, the login and the consent page that follow (with the device warning), and the
// end page; screenshots at 1280×800 and 390×844 in test-results/, axe without serious or critical
// violations, no CSP report. Spawned server (test/helpers/server.ts): Chromium drives the pages over HTTPS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { ROOT, startServer, type TestServer } from './helpers/server.js';
import { addClient, addUser, post } from './helpers/oauth.js';

const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
const SHOTS = path.join(ROOT, 'test-results');
const SIZES = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];
let server: TestServer;
let browser: Browser;
let context: BrowserContext;
const csp: string[] = [];

before(async () => {
  server = await startServer();
  addUser(server, 'ola', 'ola-password-1');
  addClient(server, 'tv', ['--public', '--grant', DEVICE, '--name', 'Living Room TV']);
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: SIZES[0] });
  mkdirSync(SHOTS, { recursive: true });
});
after(async () => {
  await context?.close();
  await browser?.close();
  await server?.cleanup();
});

async function check(page: Page, name: string): Promise<void> {
  await page.evaluate('document.activeElement && document.activeElement.blur()');
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.screenshot({ path: path.join(SHOTS, `device-${name}-${size.name}.png`), fullPage: true });
    if (size.name === 'phone') assert.equal(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'), 0, `${name} overflows on the phone`);
    const bad = (await new AxeBuilder({ page }).analyze()).violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(bad.map((v) => `${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), [], `axe on ${name} at ${size.width} px`);
  }
  await page.setViewportSize(SIZES[0]);
}

test('code entry, a wrong code, login, consent with the device warning, approval; the device gets its tokens', async () => {
  const started = await post(server, 'device_authorization', { client_id: 'tv', scope: 'zoos:read zoos:write' });
  assert.equal(started.status, 200);
  const page = await context.newPage();
  page.on('console', (m) => void (/Content Security Policy/i.test(m.text()) && csp.push(m.text())));

  await page.goto(`${server.url}/oauth/device`);
  assert.match(await page.title(), /^Connect a device/);
  await check(page, 'code');

  await page.fill('#user_code', 'BBBB-BBBC');
  await Promise.all([page.waitForLoadState(), page.click('button[type=submit]')]);
  assert.match(await page.locator('[role=alert]').innerText(), /not valid/);
  await check(page, 'wrong-code');

  await page.fill('#user_code', started.body.user_code.toLowerCase());
  await Promise.all([page.waitForURL(/user_code=/), page.click('button[type=submit]')]);
  assert.match(await page.locator('h1').innerText(), /Sign in/);
  await page.fill('#username', 'ola');
  await page.fill('#password', 'ola-password-1');
  await Promise.all([page.waitForURL(/\/oauth\/device\?user_code=/), page.click('form.signin button[type=submit]')]);
  assert.ok(await page.getByText(`Only continue if you started this on a device you own: Living Room TV, showing the code ${started.body.user_code}.`).isVisible());
  await check(page, 'consent');

  await page.uncheck('input[name=scope][value="zoos:write"]');
  await page.check('input[name=ttl][value="86400"]');
  await Promise.all([page.waitForLoadState(), page.click('button[value=allow]')]);
  assert.match(await page.locator('h1').innerText(), /Device connected/);
  await check(page, 'done');

  const tokens = await post(server, 'token', { grant_type: DEVICE, device_code: started.body.device_code, client_id: 'tv' });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  assert.equal(tokens.body.scope, 'zoos:read');
  assert.deepEqual(csp, []);
});
