// Second factors in headless Chromium: an authenticator app set up on the account page (the code
// computed from the secret the page shows), the login page's code prompt, and a passkey registered,
// used to sign in (its assertion replayed is refused) and removed with a CDP virtual authenticator (WebAuthn.addVirtualAuthenticator:
// CTAP2, internal, resident keys, user verification). The pages are photographed at 1280×800 and
// 390×844 (test-results/factors-*.png) and checked with axe-core (no serious or critical finding),
// with no CSP violation and no horizontal overflow on the phone.
// Spawned server (test/helpers/server.ts), not in process: Chromium drives the pages over HTTPS, at
// https://localhost:<port> (browsers refuse WebAuthn on an IP address; docs/oauth.md, Passkeys).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { Secret, TOTP } from 'otpauth';
import { ROOT, startServer, type TestServer } from './helpers/server.js';
import { addClient, addUser } from './helpers/oauth.js';

const SHOTS = path.join(ROOT, 'test-results');
const SIZES = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];
const REDIRECT = 'https://planner.example/cb';
let server: TestServer;
let browser: Browser;
let base: string;
const csp: string[] = [];

before(async () => {
  server = await startServer();
  base = server.url.replace('https://127.0.0.1:', 'https://localhost:');
  addUser(server, 'pia', 'pia-password-1');
  addUser(server, 'tom', 'tom-password-1');
  assert.equal(server.cli(['user', 'admin', 'tom', 'on']).status, 0);
  addClient(server, 'planner', ['--name', 'Zoo Planner', '--grant', 'authorization_code', '--redirect-uri', REDIRECT]);
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  mkdirSync(SHOTS, { recursive: true });
});
after(async () => {
  await browser?.close();
  await server?.cleanup();
});

async function newBrowser(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: SIZES[0] });
  const page = await context.newPage();
  page.on('console', (m) => void (/Content Security Policy/i.test(m.text()) && csp.push(`${page.url()}: ${m.text()}`)));
  return { context, page };
}

async function check(page: Page, name: string): Promise<void> {
  await page.evaluate('document.activeElement && document.activeElement.blur()');
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.screenshot({ path: path.join(SHOTS, `factors-${name}-${size.name}.png`), fullPage: true });
    if (size.name === 'phone') assert.equal(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'), 0, `${name} overflows on the phone`);
    const bad = (await new AxeBuilder({ page }).analyze()).violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(bad.map((v) => `${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), [], `axe on ${name} at ${size.width} px`);
  }
  await page.setViewportSize(SIZES[0]);
}

async function accountSignIn(page: Page, username: string) {
  await page.goto(`${base}/oauth/account`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(`${username}-password-1`);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
}

const authorize = () => `${base}/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: 'planner', redirect_uri: REDIRECT, scope: 'zoos:read', state: 'p1' })}`;

test('an authenticator app: set up on the account page, recovery codes, then the code at sign-in', async () => {
  const { context, page } = await newBrowser();
  try {
    await accountSignIn(page, 'tom');
    await check(page, 'account-enrol');
    const secret = (await page.locator('[data-totp-secret]').textContent())!.trim();
    const code = TOTP.generate({ secret: Secret.fromBase32(secret) });
    // On the account page a session alone adds no factor: the password is asked too.
    await page.getByLabel('Your password', { exact: true }).fill('tom-password-1');
    await page.getByLabel('Code from the app').fill(code);
    await page.getByRole('button', { name: 'Turn on two-step sign-in' }).click();
    await page.locator('[data-recovery-code]').first().waitFor();
    assert.equal(await page.locator('[data-recovery-code]').count(), 10);
    const recovery = (await page.locator('[data-recovery-code]').first().textContent())!.trim();
    await check(page, 'recovery-codes');
    await page.getByRole('button', { name: 'Sign out' }).click();

    await page.goto(authorize());
    await page.getByLabel('Username').fill('tom');
    await page.getByLabel('Password').fill('tom-password-1');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByLabel('Code from your authenticator app').waitFor();
    await check(page, 'otp-prompt');
    await page.getByLabel('Code from your authenticator app').fill('000000' === code ? '111111' : '000000');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('alert').waitFor();
    await check(page, 'otp-wrong');
    const next = TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: Date.now() + 30_000 });
    await page.getByLabel('Code from your authenticator app').fill(next);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();

    // The console asks for the code too (tom is an admin).
    await page.goto(`${base}/admin`);
    await page.getByLabel('Username').fill('tom');
    await page.getByLabel('Password').fill('tom-password-1');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByLabel('Code from your authenticator app').waitFor();
    await check(page, 'console-otp-prompt');
    // The codes of this step and the next are used: a recovery code, then.
    await page.getByLabel('Code from your authenticator app').fill(recovery);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('navigation').first().waitFor();
  } finally {
    await context.close();
  }
});

test('a passkey: registered on the account page, used to sign in without a password, listed and removed with the password', async () => {
  const { context, page } = await newBrowser();
  try {
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
    await accountSignIn(page, 'pia');
    const register = page.locator('button[data-passkey-register]');
    await register.waitFor({ state: 'visible' });
    await page.getByLabel('Your password, to add a passkey').fill('pia-password-1');
    await register.click();
    await page.getByText('Your passkey is registered').waitFor();
    assert.equal(await page.locator('[data-recovery-code]').count(), 10, 'the first factor brings the recovery codes');
    await page.getByRole('button', { name: 'Sign out' }).click();

    await page.goto(authorize());
    const signin = page.locator('button[data-passkey-signin]');
    await signin.waitFor({ state: 'visible' });
    await check(page, 'login-passkey');
    const [posted] = await Promise.all([page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/oauth/authorize')), signin.click()]);
    // No password, no code: the passkey is both factors.
    await page.getByRole('button', { name: 'Allow' }).waitFor();

    // The same assertion replayed (with this browser's current form token): its challenge was used.
    const replay = new URLSearchParams(posted.postData()!);
    assert.equal(replay.get('step'), 'passkey');
    replay.set('csrf_token', (await page.locator('input[name="csrf_token"]').first().getAttribute('value'))!);
    const answer = await page.request.post(`${base}/oauth/authorize`, { headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' }, data: replay.toString(), maxRedirects: 0 });
    assert.equal(answer.status(), 401);
    assert.match(await answer.text(), /passkey was not accepted/);

    // With the password, the second step offers the passkey (or a recovery code).
    await page.goto(`${base}/oauth/account`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.goto(authorize());
    await page.getByLabel('Username').fill('pia');
    await page.getByLabel('Password').fill('pia-password-1');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByLabel('Recovery code').waitFor();
    await page.locator('button[data-passkey-signin]').waitFor({ state: 'visible' });
    await check(page, 'second-step-passkey');
    await page.locator('button[data-passkey-signin]').click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();

    await page.goto(`${base}/oauth/account`);
    await page.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
    assert.equal(await page.locator('ul.factors > li').count(), 1);
    await check(page, 'factors-list');
    await page.getByLabel('Your password, to remove it').fill('pia-password-1');
    await page.getByRole('button', { name: 'Remove Passkey' }).click();
    await page.getByText('The second factor was removed').waitFor();
    assert.equal(await page.locator('ul.factors > li').count(), 0);
  } finally {
    await context.close();
  }
});

test('auth.mfa: all — a user without a factor sets one up right after the password, sees the recovery codes, and goes on to the application', async () => {
  const strict = await startServer({ config: { auth: { mfa: 'all' } } });
  const { context, page } = await newBrowser();
  try {
    addUser(strict, 'una', 'una-password-1');
    addClient(strict, 'planner', ['--name', 'Zoo Planner', '--grant', 'authorization_code', '--redirect-uri', REDIRECT]);
    const at = strict.url.replace('https://127.0.0.1:', 'https://localhost:');
    await page.goto(`${at}/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: 'planner', redirect_uri: REDIRECT, scope: 'zoos:read', state: 'm1' })}`);
    await page.getByLabel('Username').fill('una');
    await page.getByLabel('Password').fill('una-password-1');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Set up two-step sign-in' }).waitFor();
    await check(page, 'signin-enrol');
    const secret = (await page.locator('[data-totp-secret]').textContent())!.trim();
    await page.getByLabel('Code from the app').fill(TOTP.generate({ secret: Secret.fromBase32(secret) }));
    await page.getByRole('button', { name: 'Turn on two-step sign-in' }).click();
    await page.locator('[data-recovery-code]').first().waitFor();
    await check(page, 'signin-recovery-codes');
    await page.getByRole('link', { name: 'Continue to Zoo Planner' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
  } finally {
    await context.close();
    await strict.cleanup();
  }
});

test('without script the login page still signs in with a password; no CSP violation anywhere', async () => {
  const context = await browser.newContext({ ignoreHTTPSErrors: true, javaScriptEnabled: false });
  try {
    const page = await context.newPage();
    await page.goto(authorize());
    assert.equal(await page.locator('button[data-passkey-signin]').isVisible(), false, 'the passkey button stays hidden');
    await page.getByLabel('Username').fill('pia');
    await page.getByLabel('Password').fill('pia-password-1');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
  } finally {
    await context.close();
  }
  assert.deepEqual(csp, []);
});
