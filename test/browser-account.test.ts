// The end user's pages in headless Chromium: the account page lists and revokes (the revoked
// token is refused by /v1), and the login, consent, account and error pages are photographed at
// 1280×800 and 390×844 (test-results/user-*.png) and checked with axe-core (no serious or critical
// finding), with no CSP violation and no horizontal overflow on the phone.
// Spawned server (test/helpers/server.ts), not in process: Chromium drives the pages over HTTPS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { ROOT, demoConfig, startServer, type TestServer } from './helpers/server.js';
import { addClient, addUser, basic, post, redirectParams, type RegisteredClient } from './helpers/oauth.js';

const SHOTS = path.join(ROOT, 'test-results');
const SIZES = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];
const REDIRECT = 'https://planner.example/cb';
let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let planner: RegisteredClient;
const csp: string[] = [];

before(async () => {
  server = await startServer();
  addUser(server, 'uma', 'uma-password-1');
  planner = addClient(server, 'planner', ['--name', 'Zoo Planner', '--grant', 'authorization_code', '--redirect-uri', REDIRECT]);
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: SIZES[0] });
  mkdirSync(SHOTS, { recursive: true });
});
after(async () => {
  await context?.close();
  await browser?.close();
  await server?.cleanup();
});

async function newPage(): Promise<Page> {
  const page = await context.newPage();
  page.on('console', (m) => void (/Content Security Policy/i.test(m.text()) && csp.push(`${page.url()}: ${m.text()}`)));
  return page;
}

async function check(page: Page, name: string): Promise<void> {
  await page.evaluate('document.activeElement && document.activeElement.blur()');
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.screenshot({ path: path.join(SHOTS, `user-${name}-${size.name}.png`), fullPage: true });
    if (size.name === 'phone') assert.equal(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'), 0, `${name} overflows on the phone`);
    const bad = (await new AxeBuilder({ page }).analyze()).violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(bad.map((v) => `${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), [], `axe on ${name} at ${size.width} px`);
  }
  await page.setViewportSize(SIZES[0]);
}

test('login, consent, account (list, revoke) and error pages', async () => {
  const page = await newPage();
  const q = new URLSearchParams({ response_type: 'code', client_id: 'planner', redirect_uri: REDIRECT, scope: 'zoos:read zoos:write animals:read orders:read', state: 'b1' });
  await page.goto(`${server.url}/oauth/authorize?${q}`);
  await check(page, 'login');
  await page.getByLabel('Username').fill('uma');
  await page.getByLabel('Password').fill('uma-password-1');
  await page.keyboard.press('Enter');
  await page.getByRole('button', { name: 'Allow' }).waitFor();
  await check(page, 'consent');
  // The redirect URI is not served here: read the code from the request the browser makes.
  const [redirect] = await Promise.all([
    page.waitForRequest((r) => r.url().startsWith(REDIRECT)),
    page.getByRole('button', { name: 'Allow' }).click(),
  ]);
  const code = redirectParams(redirect.url()).get('code')!;
  const tokens = await post(server, 'token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, { auth: basic('planner', planner.client_secret!) });
  assert.equal(tokens.status, 200);
  const token = tokens.body.access_token as string;
  assert.equal((await server.json('GET', '/v1/zoos', undefined, { authorization: `Bearer ${token}` })).status, 200);

  // The browser's own navigation to the (unserved) redirect URI ends on Chromium's error page:
  // let it land first, or it interrupts the next navigation.
  await page.waitForURL((u) => u.protocol === 'chrome-error:' || u.href.startsWith(REDIRECT), { timeout: 10_000 }).catch(() => undefined);
  await page.goto(`${server.url}/oauth/account`);
  await page.getByRole('heading', { name: 'Applications with access' }).waitFor();
  assert.ok(await page.getByText('Zoo Planner').isVisible());
  await check(page, 'account');
  await page.getByRole('button', { name: 'Revoke access of Zoo Planner' }).click();
  await page.getByText('Access revoked').waitFor();
  assert.ok(await page.getByText('No application has access to your data.').isVisible());
  await check(page, 'account-revoked');
  assert.equal((await server.json('GET', '/v1/zoos', undefined, { authorization: `Bearer ${token}` })).status, 401);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByText('You are signed out.').waitFor();
  await check(page, 'account-signin');

  await page.goto(`${server.url}/oauth/no-such-page`);
  assert.equal(await page.title(), 'Page not found · gatehouse');
  await check(page, 'error-404');
  assert.deepEqual(csp, []);
  await page.close();
});

test('consent with 8 collections: one row each, Allow and Deny in view at both sizes, write unticked unless asked for, choices kept after an error, read only', async () => {
  const collections = { ...demoConfig().collections };
  for (const name of ['keepers', 'tickets', 'visits', 'feeds'])
    collections[name] = { schema: { type: 'object', properties: { name: { type: 'string' } } } };
  const big = await startServer({ config: { collections } });
  try {
    addUser(big, 'vic', 'vic-password-1');
    addClient(big, 'wide', ['--name', 'Wide App', '--grant', 'authorization_code', '--redirect-uri', REDIRECT]);
    const page = await newPage();
    // No scope parameter: every scope the client may have, 16 of them in 8 rows.
    await page.goto(`${big.url}/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: 'wide', redirect_uri: REDIRECT, state: 'w' })}`);
    await page.getByLabel('Username').fill('vic');
    await page.getByLabel('Password').fill('vic-password-1');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Allow', exact: true }).waitFor();
    assert.equal(await page.locator('.perm').count(), 8);
    const boxes = page.locator('input[name="scope"]');
    assert.equal(await boxes.count(), 16);
    for (let i = 0; i < 16; i++) {
      const value = await boxes.nth(i).getAttribute('value');
      assert.equal(await boxes.nth(i).isChecked(), value!.endsWith(':read'), `${value}: read ticked, write not`);
    }
    await check(page, 'consent-8');
    for (const size of SIZES) {
      await page.setViewportSize({ width: size.width, height: size.height });
      for (const name of ['Allow', 'Deny']) {
        const box = await page.getByRole('button', { name, exact: true }).boundingBox();
        assert.ok(box && box.y >= 0 && box.y + box.height <= size.height, `${name} in view at ${size.width}×${size.height} (${JSON.stringify(box)})`);
      }
    }
    await page.setViewportSize(SIZES[0]);
    // An error keeps the user's choices: tick a write box, pick a day, untick everything else.
    await page.getByLabel(/Create, change and delete your zoos/).check();
    await page.getByLabel('1 day').check();
    for (let i = 0; i < 16; i++) {
      const value = (await boxes.nth(i).getAttribute('value'))!;
      if (value !== 'zoos:write') await boxes.nth(i).uncheck();
    }
    await page.getByLabel(/Create, change and delete your zoos/).uncheck();
    await page.getByRole('button', { name: 'Allow', exact: true }).click();
    await page.getByText('Choose at least one permission').waitFor();
    assert.equal(await page.getByLabel('1 day').isChecked(), true, 'the validity is kept');
    for (let i = 0; i < 16; i++) assert.equal(await boxes.nth(i).isChecked(), false, 'the boxes are as the user left them');
    // Read only: the read scopes, whatever the boxes say.
    const [redirect] = await Promise.all([page.waitForRequest((r) => r.url().startsWith(REDIRECT)), page.getByRole('button', { name: 'Read only' }).click()]);
    assert.ok(redirectParams(redirect.url()).get('code'));
    const grants = JSON.parse(big.cli(['grant', 'list', '--json']).stdout) as { scope: string }[];
    assert.equal(grants.length, 0, 'the code is not redeemed yet: no grant');
    await page.close();
  } finally {
    await big.cleanup();
  }
});

test('OpenID Connect: "Your identity" on the consent page, the sign-out question and the signed-out page', async () => {
  addClient(server, 'rp', ['--name', 'Relying Party', '--grant', 'authorization_code', '--redirect-uri', REDIRECT, '--post-logout-redirect-uri', 'https://planner.example/bye']);
  const page = await newPage();
  const q = new URLSearchParams({ response_type: 'code', client_id: 'rp', redirect_uri: REDIRECT, scope: 'openid profile email zoos:read', state: 'o1', nonce: 'n1', prompt: 'consent' });
  await page.goto(`${server.url}/oauth/authorize?${q}`);
  if (await page.getByLabel('Password').isVisible()) {
    await page.getByLabel('Username').fill('uma');
    await page.getByLabel('Password').fill('uma-password-1');
    await page.keyboard.press('Enter');
  }
  await page.getByRole('button', { name: 'Allow' }).waitFor();
  assert.ok(await page.getByText('Your identity').isVisible());
  for (const words of ['Know who you are', 'Your name and user name', 'Your e-mail address'])
    assert.ok(await page.getByLabel(words, { exact: false }).isChecked(), `${words} is ticked`);
  await check(page, 'consent-identity');

  await page.goto(`${server.url}/oauth/logout?client_id=rp`);
  await page.getByRole('heading', { name: 'Sign out of gatehouse?' }).waitFor();
  await check(page, 'logout');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'You are signed out' }).waitFor();
  await check(page, 'logout-done');
  assert.deepEqual(csp, []);
  await page.close();
});
