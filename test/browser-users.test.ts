// The user's lifecycle pages (docs/users.md) in headless Chromium, with the real server over HTTPS
// (`auth.signup: open`) and a real SMTP server beside it: the login page's links, sign-up with its
// mailed confirmation, a refused sign-up's field errors, password reset (and a used link), the
// closed and the invitation sign-up pages, and the account page with an e-mail change waiting.
// Every page and every kind of mail (rendered from its builder) is photographed at 1280×800 and
// 390×844 (test-results/users-*.png, test-results/mail-*.png) and checked with axe-core (no serious
// or critical finding), with no CSP violation and no horizontal overflow on the phone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { ROOT, startServer, type TestServer } from './helpers/server.js';
import { Mailbox } from './helpers/mailbox.js';
import { addClient } from './helpers/oauth.js';
import { layout } from '../src/platform/http/html/index.js';
import { signUpPage } from '../src/authserver/lifecycle/lifecycle-view.js';
import {
  emailChangeMail,
  emailChangeNoticeMail,
  emailChangedMail,
  inviteMail,
  passwordResetMail,
  resetMail,
  signupTakenMail,
  verifyMail,
} from '../src/authserver/mails.js';

const SHOTS = path.join(ROOT, 'test-results');
const SIZES = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];
const REDIRECT = 'https://planner.example/cb';
// Long enough to wrap on a phone: the pages and the mails must break it, not overflow.
const ADDRESS = 'nia.okonkwo-abernathy@mail.departments.example.org';
const NEW_ADDRESS = 'nia.okonkwo-abernathy.personal@another-provider.example.net';
let server: TestServer;
let closed: TestServer;
let mailbox: Mailbox;
let browser: Browser;
let context: BrowserContext;
const csp: string[] = [];

before(async () => {
  mailbox = await Mailbox.start();
  // The second server (sign-up closed, the default) starts beside the first: the wait is shared.
  [server, closed] = await Promise.all([
    startServer({ config: { auth: { signup: 'open' } }, env: { GATEHOUSE_SMTP_URL: mailbox.url } }),
    startServer({ env: { GATEHOUSE_SMTP_URL: mailbox.url } }),
  ]);
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: SIZES[0] });
  mkdirSync(SHOTS, { recursive: true });
});
after(async () => {
  await context?.close();
  await browser?.close();
  await Promise.all([server?.cleanup(), closed?.cleanup()]);
  await mailbox?.close();
});

async function newPage(): Promise<Page> {
  const page = await context.newPage();
  page.on('console', (m) => void (/Content Security Policy/i.test(m.text()) && csp.push(`${page.url()}: ${m.text()}`)));
  return page;
}

/** Both sizes: a full-page screenshot `<prefix>-<name>-<size>.png`, no overflow on the phone, axe without serious or critical findings. */
async function check(page: Page, name: string, prefix = 'users'): Promise<void> {
  await page.evaluate('document.activeElement && document.activeElement.blur()');
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.screenshot({ path: path.join(SHOTS, `${prefix}-${name}-${size.name}.png`), fullPage: true });
    if (size.name === 'phone') assert.equal(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'), 0, `${name} overflows on the phone`);
    const bad = (await new AxeBuilder({ page }).options({ resultTypes: ['violations'] }).analyze()).violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(bad.map((v) => `${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), [], `axe on ${name} at ${size.width} px`);
  }
  await page.setViewportSize(SIZES[0]);
}

/** What the reader sees first on arriving at a section: the viewport (not the full page) with the heading at its top. */
async function shootSection(page: Page, heading: string, name: string): Promise<void> {
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.getByRole('heading', { name: heading }).evaluate((h) => window.scrollTo(0, h.getBoundingClientRect().top + window.scrollY - 16));
    await page.screenshot({ path: path.join(SHOTS, `users-${name}-${size.name}.png`) });
  }
  await page.setViewportSize(SIZES[0]);
}

/** Opens a mailed link in the browser, as the reader's mail program would. */
const linkOf = (mail: { link: string | null; text: string }) => {
  assert.ok(mail.link, mail.text);
  return mail.link;
};

test('the login page offers a reset and a sign-up; sign-up, its mailed link and the button confirm the address; a refused sign-up says what is wrong by field', async () => {
  addClient(server, 'planner', ['--name', 'Zoo Planner', '--grant', 'authorization_code', '--redirect-uri', REDIRECT]);
  const page = await newPage();
  const q = new URLSearchParams({ response_type: 'code', client_id: 'planner', redirect_uri: REDIRECT, scope: 'zoos:read', state: 'u1' });
  await page.goto(`${server.url}/oauth/authorize?${q}`);
  assert.ok(await page.getByRole('link', { name: 'Forgot your password?' }).isVisible());
  assert.ok(await page.getByRole('link', { name: 'Create an account' }).isVisible());
  await check(page, 'login');

  await page.getByRole('link', { name: 'Create an account' }).click();
  await page.getByRole('heading', { name: 'Create your account' }).waitFor();
  await check(page, 'signup');

  // A bad address and a short password, sent by a browser that does not check the form itself.
  await page.getByLabel('Username').fill('nia');
  await page.getByLabel('E-mail address').fill('not-an-address');
  await page.getByLabel(/^Password/).fill('short');
  await page.locator('form.signin').evaluate((f: HTMLFormElement) => (f.noValidate = true));
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.locator('.field-error').first().waitFor();
  assert.equal(await page.getByLabel('E-mail address').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.getByLabel('Username').inputValue(), 'nia', 'what was typed is kept');
  // Each problem is said once, beside its field; the message above says which fields.
  assert.equal(await page.getByRole('alert').innerText(), 'Nothing was made: correct the e-mail address and the password below.');
  assert.deepEqual(await page.locator('.field-error').allInnerTexts(), ['An e-mail address is name@domain, at most 254 characters.', 'The password must have at least 8 characters.']);
  await check(page, 'signup-errors');

  await page.getByLabel('E-mail address').fill(ADDRESS);
  await page.getByLabel(/^Password/).fill('nia-password-1');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'Check your mail' }).waitFor();
  await check(page, 'signup-check-mail');

  const mail = await mailbox.waitFor(ADDRESS, 'verify');
  await page.goto(linkOf(mail));
  await page.getByRole('button', { name: 'Confirm my address' }).waitFor();
  await check(page, 'verify');
  await page.getByRole('button', { name: 'Confirm my address' }).click();
  await page.getByRole('heading', { name: 'Address confirmed' }).waitFor();
  await check(page, 'verify-done');
  assert.deepEqual(csp, []);
  await page.close();
});

test('forgot password: the request, "check your mail", the mailed link, the new password, done; the used link then does not work', async () => {
  const page = await newPage();
  await page.goto(`${server.url}/oauth/account`);
  await page.getByRole('link', { name: 'Forgot your password?' }).click();
  await page.getByRole('heading', { name: 'Forgot your password?' }).waitFor();
  await check(page, 'reset-request');
  await page.getByLabel('Username or e-mail address').fill('nia');
  await page.getByRole('button', { name: 'Send the link' }).click();
  await page.getByRole('heading', { name: 'Check your mail' }).waitFor();
  await check(page, 'reset-check-mail');

  const link = linkOf(await mailbox.waitFor(ADDRESS, 'reset'));
  await page.goto(link);
  await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
  await check(page, 'reset-new-password');
  await page.getByLabel(/^New password/).fill('nia-password-2');
  await page.getByRole('button', { name: 'Set the new password' }).click();
  await page.getByRole('heading', { name: 'Your password is changed' }).waitFor();
  await check(page, 'reset-done');

  await page.goto(link);
  await page.getByRole('heading', { name: 'This link does not work' }).waitFor();
  await check(page, 'link-invalid');
  assert.deepEqual(csp, []);
  await page.close();
});

test('sign-up closed: the page says so; the invitation sign-up page (rendered: no invitation command on this branch)', async () => {
  const page = await newPage();
  const shown = await page.goto(`${closed.url}/oauth/signup`);
  assert.equal(shown?.status(), 403);
  await page.getByRole('heading', { name: 'Sign-up is closed' }).waitFor();
  await check(page, 'signup-closed');

  // The invitation's form with its fixed address, laid out as the server lays it out and styled by
  // the server's own stylesheet (the page is set on the server's origin).
  await page.goto(`${server.url}/oauth/account`);
  const view = signUpPage({ action: '/oauth/signup', csrf: 'x', signInUrl: '/oauth/account', invite: { token: 'invitation-token', email: ADDRESS } });
  await page.setContent(layout({ kind: 'card', title: view.title, body: view.body, basePath: server.url }), { waitUntil: 'load' });
  assert.ok(await page.getByText(`You were invited as ${ADDRESS}.`).isVisible());
  await check(page, 'signup-invite');
  await page.close();
});

test('the account page: an e-mail change waits for its link ("Waiting for confirmation"); your profile, your data, delete your account', async () => {
  const page = await newPage();
  await page.goto(`${server.url}/oauth/account`);
  await page.getByLabel('Username').fill('nia');
  await page.getByLabel('Password').fill('nia-password-2');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Your profile' }).waitFor();
  await page.getByLabel('Name', { exact: true }).fill('Nia Okonkwo-Abernathy');
  await page.getByLabel(/^E-mail address/).fill(NEW_ADDRESS);
  await page.getByLabel(/^Your password \(only to change or remove the e-mail address\)/).fill('nia-password-2');
  await page.getByRole('button', { name: 'Save profile' }).click();
  await page.getByText(`Waiting for confirmation: ${NEW_ADDRESS}`).waitFor();
  assert.equal(await page.getByLabel(/^E-mail address/).inputValue(), ADDRESS, 'the old address stays until the link is opened');
  await check(page, 'account-email-pending');
  await shootSection(page, 'Your profile', 'account-profile');
  await shootSection(page, 'Your data', 'account-data');
  assert.ok(await page.getByRole('heading', { name: 'Delete your account' }).isVisible());
  assert.ok(await page.getByRole('button', { name: 'Download my data' }).isVisible());
  assert.ok(await page.getByRole('button', { name: 'Delete my account' }).isVisible());
  await mailbox.waitFor(NEW_ADDRESS, 'email-change');
  assert.deepEqual(csp, []);
  await page.close();
});

test('every kind of mail, its HTML part as a mail program shows it: a document with a language, a title, readable colours, no overflow on a phone', async () => {
  const base = 'https://accounts.zoo-keepers.example.org/oauth';
  const token = (path: string) => `${base}/${path}?token=3f9c2e7a1b0d4c6e8f2a5b7c9d1e3f5a.k7Xq2pLmN9vR4sT8wY1zA3bC6dE0fG5hJ2kL8mN4pQ`;
  const mails = [
    verifyMail(ADDRESS, token('verify')),
    signupTakenMail(ADDRESS, `${base}/account`, `${base}/reset`),
    inviteMail(ADDRESS, `${base}/signup?invite=9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d.Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe`),
    resetMail(ADDRESS, 'nia', token('reset')),
    passwordResetMail(ADDRESS, 'nia', `${base}/reset`),
    emailChangeMail(NEW_ADDRESS, 'nia', token('verify')),
    emailChangeNoticeMail(ADDRESS, 'nia', NEW_ADDRESS),
    emailChangedMail(ADDRESS, 'nia', NEW_ADDRESS),
  ];
  assert.deepEqual(mails.map((m) => m.kind), ['verify', 'signup-taken', 'invite', 'reset', 'password-reset', 'email-change', 'email-change-notice', 'email-changed']);
  const page = await context.newPage();
  for (const mail of mails) {
    await page.setContent(mail.html);
    assert.equal(await page.title(), mail.subject);
    if (mail.link) assert.ok(await page.getByRole('link', { name: /^(Confirm|Make|Choose)/ }).isVisible(), `${mail.kind}: the button`);
    // A web address in a sentence is a link too, without the comma or full stop after it.
    if (mail.kind === 'signup-taken') assert.deepEqual(await page.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href'))), [`${base}/account`, `${base}/reset`]);
    await check(page, mail.kind, 'mail');
  }
  await page.close();
});
