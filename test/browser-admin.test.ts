// The admin console in a real browser (headless Chromium): sign in with the keyboard, register a
// client and see its secret once (copied by the button; not on the client's page later), revoke
// a grant, switch maintenance mode; without JavaScript too. Every page is photographed at
// 1280×800 and 390×844 (test-results/admin-*.png), checked with axe-core (no serious or critical
// finding), for horizontal overflow on the phone, and for CSP violations.
// Spawned server (test/helpers/server.ts), not in process: Chromium drives the console over HTTPS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { ROOT, startServer, type TestServer } from './helpers/server.js';
import { addClient, addUser, basic, introspect, post, type RegisteredClient } from './helpers/oauth.js';

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let app: RegisteredClient;
const SHOTS = path.join(ROOT, 'test-results');
const SIZES = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;
const cspViolations: string[] = [];
const checked = new Set<string>();

before(async () => {
  // Sign-up by invitation, for the Invitations section.
  server = await startServer({ config: { auth: { signup: 'invite', registration: 'token' } } });
  addUser(server, 'root', 'root-password-1');
  assert.equal(server.cli(['user', 'admin', 'root', 'on']).status, 0);
  addUser(server, 'frank', 'frank-password-1');
  app = addClient(server, 'zoo-planner', ['--name', 'Zoo Planner', '--grant', 'password', '--grant', 'refresh_token']);
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  mkdirSync(SHOTS, { recursive: true });
});
after(async () => {
  await context?.close();
  await browser?.close();
  await server?.cleanup();
});

function watch(page: Page): Page {
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(`${page.url()}: ${m.text()}`);
  });
  return page;
}

/** Photographs the page at both sizes, checks it with axe, and that nothing overflows on the phone. */
async function check(page: Page, name: string): Promise<void> {
  // The layout as it is, not with whatever the test last focused.
  await page.evaluate('document.activeElement && document.activeElement.blur()');
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.screenshot({ path: path.join(SHOTS, `admin-${name}-${size.name}.png`), fullPage: true });
    if (size.name === 'phone') {
      const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      assert.equal(overflow, 0, `${name} overflows horizontally at ${size.width} px`);
    }
    const result = await new AxeBuilder({ page }).analyze();
    const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(
      bad.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
      [],
      `axe on ${name} at ${size.width} px`,
    );
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  checked.add(name);
}

async function signIn(page: Page, username: string, password: string): Promise<void> {
  await page.goto(`${server.url}/admin`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

test('sign-in: a bad password and a non-admin are refused on styled pages; the admin signs in with the keyboard', async () => {
  const page = watch(await context.newPage());
  const front = await page.goto(`${server.url}/admin`);
  assert.equal(front!.status(), 200);
  assert.equal(await page.title(), 'Sign in · gatehouse admin');
  await check(page, 'signin');

  await signIn(page, 'root', 'wrong-password');
  await page.getByRole('alert').waitFor();
  assert.match((await page.getByRole('alert').textContent())!, /not correct/);
  await check(page, 'signin-refused');

  await signIn(page, 'frank', 'frank-password-1');
  await page.getByRole('heading', { name: 'Not an admin' }).waitFor();
  await check(page, 'not-admin');

  // Keyboard only: the username field has the focus, Tab to the password, Enter submits.
  await page.goto(`${server.url}/admin`);
  // The page gives the username field the focus itself (autofocus); typing waits until it has it.
  await page.waitForFunction(() => document.activeElement?.id === 'f-username');
  await page.keyboard.type('root');
  await page.keyboard.press('Tab');
  await page.keyboard.type('root-password-1');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  // The focus is visible: a focused link has our outline. The heading can be in the DOM before the
  // stylesheet applies (the browser's own 'auto' ring shows then), so wait for the page's load first
  // and give the style a moment; a page without the rule still fails.
  await page.waitForLoadState('load');
  await page.keyboard.press('Tab');
  const solid = await page
    .waitForFunction(() => getComputedStyle(document.activeElement!).outlineStyle === 'solid', null, { timeout: 5000 })
    .then(() => true, () => false);
  const outline = await page.evaluate('getComputedStyle(document.activeElement).outlineStyle');
  assert.ok(solid, `the focused element's outline is ${String(outline)}, not solid`);
  await check(page, 'dashboard');
  await page.close();
});

test('register a client: the secret is shown once (the button copies it), never on the client page; edit errors sit by their field', async () => {
  const page = watch(await context.newPage());
  await page.goto(`${server.url}/admin/clients`);
  await check(page, 'clients');

  // A broken rule: the form comes back with the error next to its field and the input kept.
  await page.getByLabel('Client id').fill('shop');
  await page.getByLabel('authorization_code').check();
  await page.getByLabel('Redirect URIs').fill('http://shop.example/cb');
  await page.getByRole('button', { name: 'Register the client' }).click();
  await page.locator('#f-redirect_uris-error').waitFor();
  assert.match((await page.locator('#f-redirect_uris-error').textContent())!, /plain http is only allowed/);
  assert.equal(await page.getByLabel('Redirect URIs').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.getByLabel('Client id').inputValue(), 'shop');
  await check(page, 'clients-refused');

  await page.getByLabel('Redirect URIs').fill('https://shop.example/cb');
  await page.getByLabel('Name').fill('The Shop');
  await page.getByLabel('refresh_token').check();
  await page.getByRole('button', { name: 'Register the client' }).click();
  await page.getByRole('heading', { name: /Client registered/ }).waitFor();
  const secret = (await page.locator('#client-secret').textContent())!.trim();
  assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
  await page.getByRole('button', { name: 'Copy the secret' }).click();
  await page.getByText('Copied to the clipboard.').waitFor();
  assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret);
  await check(page, 'client-registered');

  // The secret works, and is never shown again.
  const t = await post(server, 'token', { grant_type: 'authorization_code', code: 'x', redirect_uri: 'https://shop.example/cb' }, { auth: basic('shop', secret) });
  assert.equal(t.body.error, 'invalid_grant', 'the client authenticated (the code is what is wrong)');
  await page.getByRole('link', { name: /client's page/ }).click();
  await page.getByRole('heading', { name: /Client shop/ }).waitFor();
  assert.ok(!(await page.content()).includes(secret));
  await check(page, 'client');

  await page.getByLabel('Scope').fill('zoos:read nonsense:read');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.locator('#f-scope-error').waitFor();
  assert.match((await page.locator('#f-scope-error').textContent())!, /unknown scope nonsense:read/);
  await check(page, 'client-refused');
  await page.getByLabel('Scope').fill('zoos:read');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Changes saved.').waitFor();
  assert.ok(await page.getByText('zoos:read', { exact: true }).first().isVisible());

  await page.getByRole('link', { name: 'Rotate the secret…' }).click();
  await check(page, 'client-rotate');
  await page.getByRole('button', { name: 'Rotate the secret' }).click();
  await page.getByRole('heading', { name: /New secret for/ }).waitFor();
  const rotated = (await page.locator('#client-secret').textContent())!.trim();
  assert.notEqual(rotated, secret);
  await check(page, 'client-rotated');

  await page.goto(`${server.url}/admin/clients/shop/delete`);
  await check(page, 'client-delete');
  await page.getByRole('button', { name: 'Delete the client' }).click();
  await page.getByText('Client shop deleted').waitFor();
  await page.close();
});

test('users: add one, make them an admin, set a password, remove after confirming', async () => {
  const page = watch(await context.newPage());
  await page.goto(`${server.url}/admin/users`);
  await check(page, 'users');
  await page.getByLabel('Username').fill('gina');
  await page.getByLabel('Password').fill('short');
  await page.getByRole('button', { name: 'Add the user' }).click();
  await page.locator('#f-password-error').waitFor();
  await check(page, 'users-refused');
  await page.getByLabel('Password').fill('gina-password-1');
  await page.getByRole('button', { name: 'Add the user' }).click();
  await page.getByText('User added.').waitFor();
  await page.getByRole('button', { name: 'Make admin' }).click();
  await page.getByText('The user is now an admin.').waitFor();
  await check(page, 'user');
  await page.getByLabel('New password').fill('gina-password-2');
  await page.getByRole('button', { name: 'Set the password' }).click();
  await page.getByText(/Password set/).waitFor();
  await page.getByRole('link', { name: 'Remove the user…' }).click();
  await check(page, 'user-delete');
  await page.getByRole('button', { name: 'Remove the user' }).click();
  await page.getByText('User gina removed').waitFor();
  await page.close();
});

test('invitations: a refused address by its field, invite, the open list, revoke after confirming; an unverified user gets a new verification link', async () => {
  const page = watch(await context.newPage());
  await page.goto(`${server.url}/admin/invitations`);
  await page.getByText(/Sign-up is by invitation/).waitFor();
  await page.getByLabel('E-mail address').fill('not an address');
  await page.getByRole('button', { name: 'Send the invitation' }).click();
  await page.locator('#f-email-error').waitFor();
  assert.equal(await page.getByLabel('E-mail address').getAttribute('aria-invalid'), 'true');
  await check(page, 'invitations-refused');
  await page.getByLabel('E-mail address').fill('guest@example.org');
  await page.getByRole('button', { name: 'Send the invitation' }).click();
  await page.getByText(/Invitation sent/).waitFor();
  assert.equal(await page.locator('tbody tr').count(), 1);
  await check(page, 'invitations');
  await page.getByRole('link', { name: /^Revoke the invitation of guest@example\.org/ }).click();
  await check(page, 'invitation-revoke');
  await page.getByRole('button', { name: 'Revoke the invitation' }).click();
  await page.getByText(/Invitation revoked/).waitFor();
  await page.getByText('No open invitation.').waitFor();

  assert.equal(server.cli(['user', 'update', 'frank', '--email', 'frank@example.org']).status, 0);
  await page.goto(`${server.url}/admin/users`);
  await page.getByRole('link', { name: 'frank' }).click();
  await page.getByRole('button', { name: 'Resend verification link' }).click();
  await page.getByText(/A new verification link was sent to frank@example\.org/).waitFor();
  await check(page, 'user-unverified');
  await page.close();
});

test('registration tokens: a refused value by its field, make one (shown once), the live list, revoke after confirming; a client registered with one is marked in the list', async () => {
  const page = watch(await context.newPage());
  await page.goto(`${server.url}/admin/clients`);
  await page.getByRole('link', { name: 'Registration tokens' }).click();
  await page.getByText(/Registration needs an initial access token/).waitFor();
  await page.getByLabel('Registrations').fill('many');
  await page.getByRole('button', { name: 'Make the token' }).click();
  await page.locator('#f-uses-error').waitFor();
  await check(page, 'registration-tokens-refused');
  await page.getByLabel('Registrations').fill('2');
  await page.getByRole('button', { name: 'Make the token' }).click();
  await page.getByRole('heading', { name: 'Registration token made' }).waitFor();
  const token = (await page.locator('#registration-token').textContent())!.trim();
  await check(page, 'registration-token-made');
  const registered = await server.json('POST', '/oauth/register', { redirect_uris: ['https://rp.example/cb'], client_name: 'Self Made' }, { authorization: `Bearer ${token}` });
  assert.equal(registered.status, 201, JSON.stringify(registered.body));
  await page.getByRole('link', { name: 'Done' }).click();
  assert.equal(await page.locator('tbody tr').count(), 1);
  await check(page, 'registration-tokens');
  await page.getByRole('link', { name: /^Revoke the token / }).click();
  await check(page, 'registration-token-revoke');
  await page.getByRole('button', { name: 'Revoke the token' }).click();
  await page.getByText(/Registration token revoked/).waitFor();
  await page.goto(`${server.url}/admin/clients`);
  await page.getByText('registered by itself, not verified').waitFor();
  await check(page, 'clients-registered-by-itself');
  await page.close();
});

test('grants: filter by user, revoke after confirming; the tokens stop working', async () => {
  const t = await post(server, 'token', { grant_type: 'password', username: 'frank', password: 'frank-password-1', scope: 'zoos:read' }, { auth: basic(app.client_id, app.client_secret!) });
  assert.equal(t.status, 200, JSON.stringify(t.body));
  const page = watch(await context.newPage());
  await page.goto(`${server.url}/admin/grants`);
  await page.getByLabel('User').selectOption('frank');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForURL(/\?user=frank/);
  await check(page, 'grants');
  assert.equal(await page.locator('tbody tr').count(), 1);
  await page.getByRole('link', { name: /^Revoke the grant to zoo-planner/ }).click();
  await check(page, 'grant-revoke');
  await page.getByRole('button', { name: 'Revoke the grant' }).click();
  await page.getByText('Grant revoked').waitFor();
  assert.equal((await introspect(server, t.body.access_token, app)).active, false);
  await page.close();
});

test('webhooks: add one (the secret shown once), its delivery page, delete after confirming', async () => {
  const page = watch(await context.newPage());
  await page.goto(`${server.url}/admin/webhooks`);
  await page.getByLabel('URL').fill('https://hooks.example/gatehouse');
  await page.getByLabel('record.created').check();
  await page.getByLabel('zoos').check();
  await check(page, 'webhooks');
  await page.getByRole('button', { name: 'Add the webhook' }).click();
  await page.getByRole('heading', { name: 'Webhook added' }).waitFor();
  const secret = await page.locator('#webhook-secret').textContent();
  assert.match(secret ?? '', /^whsec_/);
  await check(page, 'webhook-added');
  await page.getByRole('link', { name: 'Done: to its deliveries' }).click();
  await page.getByText('Nothing delivered yet.').waitFor();
  assert.ok(!(await page.content()).includes(secret!));
  await check(page, 'webhook');
  await page.getByRole('link', { name: 'Delete the webhook…' }).click();
  await check(page, 'webhook-delete');
  await page.getByRole('button', { name: 'Delete the webhook' }).click();
  await page.getByText('Webhook deleted.').waitFor();
  await page.close();
});

test('maintenance: on from the console (the API answers 503, the console still works), then off', async () => {
  const page = watch(await context.newPage());
  await page.goto(`${server.url}/admin/maintenance`);
  await page.getByRole('button', { name: 'Turn maintenance mode on' }).click();
  await page.getByText('Switched on').waitFor();
  await check(page, 'maintenance');
  await page.getByRole('link', { name: 'Dashboard' }).click();
  await page.getByText(/Maintenance mode is on:/).waitFor();
  await check(page, 'dashboard-maintenance');
  // Every instance polls the switch each second.
  let status = 0;
  for (let i = 0; i < 30 && status !== 503; i++) {
    status = (await server.json('GET', '/v1/zoos')).status;
    if (status !== 503) await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(status, 503);
  await page.goto(`${server.url}/admin/maintenance`);
  await page.getByRole('button', { name: 'Turn maintenance mode off' }).click();
  await page.getByText('Switched off').waitFor();
  for (let i = 0; i < 30 && (await server.json('GET', '/v1/zoos')).status === 503; i++) await new Promise((r) => setTimeout(r, 100));
  await page.close();
});

test('error pages are styled HTML; sign-out ends the session', async () => {
  const page = watch(await context.newPage());
  const missing = await page.goto(`${server.url}/admin/no-such-page`);
  assert.equal(missing!.status(), 404);
  assert.match(missing!.headers()['content-type'], /^text\/html/);
  await check(page, 'not-found');
  await page.goto(`${server.url}/admin`);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByText('You are signed out.').waitFor();
  const after = await page.goto(`${server.url}/admin/clients`);
  assert.equal(after!.status(), 401);
  await check(page, 'signin-required');
  await page.close();
});

test('without JavaScript: signing in and registering work; the secret is plain selectable text', async () => {
  const noJs = await browser.newContext({ ignoreHTTPSErrors: true, javaScriptEnabled: false, viewport: { width: 390, height: 844 } });
  const page = await noJs.newPage();
  await signIn(page, 'root', 'root-password-1');
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  await page.goto(`${server.url}/admin/clients`);
  await page.getByLabel('Client id').fill('robot');
  await page.getByLabel('client_credentials').check();
  await page.getByRole('button', { name: 'Register the client' }).click();
  await page.getByRole('heading', { name: /Client registered/ }).waitFor();
  assert.match((await page.locator('#client-secret').textContent())!.trim(), /^[A-Za-z0-9_-]{43}$/);
  // The copy button needs the script: without it, it stays hidden.
  assert.equal(await page.locator('button[data-copy]').isVisible(), false);
  await page.screenshot({ path: path.join(SHOTS, 'admin-client-registered-nojs-phone.png'), fullPage: true });
  await noJs.close();
});

test('every console page was checked, and no page broke its CSP', () => {
  for (const name of ['signin', 'not-admin', 'dashboard', 'clients', 'client-registered', 'client', 'client-rotate', 'client-delete', 'users', 'user', 'user-delete', 'invitations', 'invitation-revoke', 'user-unverified', 'registration-tokens-refused', 'registration-token-made', 'registration-tokens', 'registration-token-revoke', 'clients-registered-by-itself', 'grants', 'grant-revoke', 'webhooks', 'webhook-added', 'webhook', 'webhook-delete', 'maintenance', 'not-found'])
    assert.ok(checked.has(name), `${name} was not checked`);
  assert.deepEqual(cspViolations, []);
});
