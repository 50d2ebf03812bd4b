// The demo deployment in a real browser: the sign-in link the start-up banner prints ends on
// gatehouse's own callback page (not on a port where nothing listens), which shows the code and a
// curl that redeems it. Screenshots at 1280×800 and 390×844 (test-results/demo-callback-*.png),
// checked with axe-core (no serious or critical finding) and for horizontal overflow on the phone.
// Spawned server (test/helpers/server.ts), not in process: the demo's start-up banner and Chromium on its callback page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { ROOT, startServer, type TestServer } from './helpers/server.js';
import { basic, post } from './helpers/oauth.js';

const SHOTS = path.join(ROOT, 'test-results');
const SIZES = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];
let server: TestServer;
let browser: Browser;

before(async () => {
  server = await startServer({ config: { auth: { demo: true } } });
  for (let i = 0; i < 100 && !/or sign in in a browser: \S+/.test(server.output()); i++) await new Promise((r) => setTimeout(r, 50));
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  mkdirSync(SHOTS, { recursive: true });
});
after(async () => {
  await browser?.close();
  await server?.cleanup();
});

test('the banner\'s sign-in link ends on a working page', async () => {
  const link = /or sign in in a browser: (\S+)/.exec(server.output())![1];
  const { password, client_secret: secret } = JSON.parse(readFileSync(path.join(server.dataDir, 'demo-credentials.json'), 'utf8'));
  // The README's tour first: its password grant leaves a grant covering every scope, which must
  // not make the link skip the consent page.
  const tour = await post(server, 'token', { grant_type: 'password', username: 'demo', password }, { auth: basic('demo-app', secret) });
  assert.equal(tour.status, 200, JSON.stringify(tour.body));
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: SIZES[0] });
  const page = await context.newPage();
  const csp: string[] = [];
  page.on('console', (m) => void (/Content Security Policy/i.test(m.text()) && csp.push(m.text())));
  await page.goto(link);
  await page.getByLabel('Username').fill('demo');
  await page.getByLabel('Password').fill(password);
  await page.keyboard.press('Enter');
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.waitForURL(/\/demo\/callback\?/);
  await page.getByRole('heading', { name: 'The demo app received a code' }).waitFor();
  const code = new URL(page.url()).searchParams.get('code')!;
  assert.ok(((await page.locator('dl.values').textContent()) ?? '').includes(code));
  assert.match((await page.locator('pre.snippet').first().textContent()) ?? '', /grant_type=authorization_code -d code=/);
  assert.equal(((await page.locator('body').textContent()) ?? '').includes(secret), false, 'the page shows no client secret');
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.screenshot({ path: path.join(SHOTS, `demo-callback-${size.name}.png`), fullPage: true });
    if (size.name === 'phone') assert.equal(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'), 0, 'no horizontal overflow');
    const bad = (await new AxeBuilder({ page }).analyze()).violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(bad.map((v) => `${v.id}: ${v.help}`), [], `axe at ${size.width} px`);
  }
  assert.deepEqual(csp, []);
  await context.close();
});
