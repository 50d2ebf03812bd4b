// The user's lifecycle by e-mail (docs/users.md), black-box: the real server over HTTPS with a
// real SMTP server beside it (test/helpers/mailbox.ts), every flow through the HTML forms as a
// browser sends them — open sign-up and verification, an address already taken, password reset
// (no enumeration, single use, expiry on a moved clock, sessions ended), the e-mail change, the
// mail quota.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, tempDir, type TestServer } from './helpers/server.js';
import { Mailbox } from './helpers/mailbox.js';
import { CookieJar, addUser, hiddenField, page, type Page } from './helpers/oauth.js';

const CLOCK = path.join(path.dirname(fileURLToPath(import.meta.url)), 'helpers', 'shifted-clock.mjs');
let server: TestServer;
let mailbox: Mailbox;
let clockFile: string;

before(async () => {
  mailbox = await Mailbox.start();
  clockFile = path.join(tempDir('gatehouse-clock-'), 'offset');
  writeFileSync(clockFile, '0');
  server = await startServer({
    config: { auth: { signup: 'open' } },
    env: { GATEHOUSE_SMTP_URL: mailbox.url, NODE_OPTIONS: `--import ${CLOCK}`, GATEHOUSE_TEST_CLOCK_FILE: clockFile, GATEHOUSE_REQUEST_LOGS: '1', LOG_LEVEL: 'info' },
  });
});
after(async () => {
  await server?.cleanup();
  await mailbox?.close();
});

const body = (p: Page) => /<main[^>]*>([\s\S]*)<\/main>/.exec(p.html)?.[1] ?? p.html;
const text = (p: Page) => body(p).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim();

async function form(jar: CookieJar, target: string, fields: Record<string, string>): Promise<Page> {
  const shown = await page(server, jar, target);
  assert.equal(shown.status, 200, shown.html);
  return page(server, jar, target.replace(/\?.*$/, ''), { csrf_token: hiddenField(shown.html, 'csrf_token'), ...fields });
}

/** Opens a mailed link as a browser: the page, then its button. */
async function openLink(jar: CookieJar, link: string, fields: Record<string, string> = {}): Promise<Page> {
  const url = new URL(link);
  const shown = await page(server, jar, url.pathname + url.search);
  if (shown.status !== 200) return shown;
  return page(server, jar, url.pathname, { csrf_token: hiddenField(shown.html, 'csrf_token'), token: hiddenField(shown.html, 'token'), ...fields });
}

async function accountSignIn(jar: CookieJar, username: string, password: string): Promise<Page> {
  return form(jar, '/oauth/account', { action: 'signin', username, password });
}

test('open sign-up: an unverified account cannot sign in; the mailed link (once) lets it', async () => {
  const jar = new CookieJar();
  const made = await form(jar, '/oauth/signup', { username: 'nia', email: 'nia@example.com', password: 'nia-password-1' });
  assert.equal(made.status, 200, made.html);
  assert.match(text(made), /Check your mail/);
  const mail = await mailbox.waitFor('nia@example.com', 'verify');
  assert.equal(mail.subject, 'Confirm your e-mail address');
  assert.match(mail.from, /no-reply@localhost/);
  assert.ok(mail.link?.startsWith(`${server.url}/oauth/verify?token=`), mail.text);
  assert.ok(mail.html.includes(mail.link!.replaceAll('&', '&amp;')) || mail.html.includes('verify?token'), 'the HTML part carries the link');

  // Before the link: refused, and a new link is mailed.
  const early = await accountSignIn(new CookieJar(), 'nia', 'nia-password-1');
  assert.equal(early.status, 403);
  assert.match(text(early), /not verified yet/);
  const fresh = await mailbox.waitFor('nia@example.com', 'verify', 2);
  // The newer link replaced the first one.
  assert.equal((await openLink(new CookieJar(), mail.link!)).status, 400);

  // A scanner's GET of the link changes nothing; the button does.
  const scanned = await page(server, new CookieJar(), new URL(fresh.link!).pathname + new URL(fresh.link!).search);
  assert.equal(scanned.status, 200);
  assert.equal((await accountSignIn(new CookieJar(), 'nia', 'nia-password-1')).status, 403);
  await mailbox.waitFor('nia@example.com', 'verify', 3);
  const latest = mailbox.to('nia@example.com', 'verify')[2];
  const first = await openLink(new CookieJar(), latest.link!);
  assert.equal(first.status, 200, first.html);
  assert.match(text(first), /Address confirmed/);
  const again = await openLink(new CookieJar(), latest.link!);
  assert.equal(again.status, 400);
  assert.match(text(again), /This link does not work/);
  const signedIn = await accountSignIn(new CookieJar(), 'nia', 'nia-password-1');
  assert.equal(signedIn.status, 303, signedIn.html);
});

test('sign-up with a taken address: the same page, no account, a mail to the address\'s owner; a taken username is said', async () => {
  addUser(server, 'owen', 'owen-password-1');
  assert.equal(server.cli(['user', 'update', 'owen', '--email', 'owen@example.com', '--email-verified']).status, 0);
  const free = await form(new CookieJar(), '/oauth/signup', { username: 'fay', email: 'fay@example.com', password: 'fay-password-1' });
  const taken = await form(new CookieJar(), '/oauth/signup', { username: 'mallory', email: 'owen@example.com', password: 'mallory-password-1' });
  assert.equal(taken.status, free.status);
  assert.equal(text(taken).replace('owen@example.com', 'X'), text(free).replace('fay@example.com', 'X'));
  const told = await mailbox.waitFor('owen@example.com', 'signup-taken');
  assert.match(told.text, /already have an account/);
  assert.equal(mailbox.to('owen@example.com', 'verify').length, 0);
  assert.equal((await accountSignIn(new CookieJar(), 'mallory', 'mallory-password-1')).status, 401);

  const sameName = await form(new CookieJar(), '/oauth/signup', { username: 'fay', email: 'other@example.com', password: 'fay-password-2' });
  assert.equal(sameName.status, 409);
  assert.match(text(sameName), /username &#34;fay&#34; is taken/);
  const bad = await form(new CookieJar(), '/oauth/signup', { username: 'bad name', email: 'not-an-address', password: 'short' });
  assert.equal(bad.status, 400);
  assert.match(bad.html, /id="email-error"/);
});

test('password reset: the same answer for an unknown account and no mail; the link works once, for an hour; sessions end', async () => {
  addUser(server, 'rita', 'rita-password-1');
  assert.equal(server.cli(['user', 'update', 'rita', '--email', 'Rita@Example.com', '--email-verified']).status, 0);
  const session = new CookieJar();
  assert.equal((await accountSignIn(session, 'rita', 'rita-password-1')).status, 303);

  const known = await form(new CookieJar(), '/oauth/reset', { login: 'rita' });
  const unknown = await form(new CookieJar(), '/oauth/reset', { login: 'nobody-here' });
  const unknownAddress = await form(new CookieJar(), '/oauth/reset', { login: 'nobody@example.com' });
  assert.equal(known.status, 200);
  assert.equal(unknown.status, known.status);
  assert.equal(text(unknown), text(known));
  assert.equal(text(unknownAddress), text(known));
  const mail = await mailbox.waitFor('Rita@Example.com', 'reset');
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(mailbox.to('nobody').length, 0, 'no mail for an account that does not exist');

  // By address too, in any case — but within 15 minutes of the last link no second one is mailed: a stranger's requests cannot spend the address's quota.
  const again = await form(new CookieJar(), '/oauth/reset', { login: 'rita@example.COM' });
  assert.equal(text(again), text(known));

  const jar = new CookieJar();
  const url = new URL(mail.link!);
  const shown = await page(server, jar, url.pathname + url.search);
  assert.equal(shown.status, 200);
  assert.match(text(shown), /Choose a new password/);
  const tooShort = await page(server, jar, '/oauth/reset', { csrf_token: hiddenField(shown.html, 'csrf_token'), token: hiddenField(shown.html, 'token'), password: 'short' });
  assert.equal(tooShort.status, 400);
  const done = await page(server, jar, '/oauth/reset', { csrf_token: hiddenField(shown.html, 'csrf_token'), token: hiddenField(shown.html, 'token'), password: 'rita-new-password' });
  assert.equal(done.status, 200, done.html);
  assert.match(text(done), /Your password is changed/);
  const notice = await mailbox.waitFor('Rita@Example.com', 'password-reset');
  assert.match(notice.text, /every sign-in session was ended/);

  // Once.
  assert.equal((await openLink(new CookieJar(), mail.link!, { password: 'rita-third-password' })).status, 400);
  assert.equal(mailbox.to('Rita@Example.com', 'reset').length, 1, 'one link in the quarter hour');
  // The session signed in before is over; the old password no longer works; the new one does.
  const before = await page(server, session, '/oauth/account');
  assert.match(text(before), /Sign in to see the applications/);
  assert.equal((await accountSignIn(new CookieJar(), 'rita', 'rita-password-1')).status, 401);
  assert.equal((await accountSignIn(new CookieJar(), 'rita', 'rita-new-password')).status, 303);
});

test('a reset link past its hour does not work (the server\'s clock moved)', async () => {
  addUser(server, 'tim', 'tim-password-1');
  assert.equal(server.cli(['user', 'update', 'tim', '--email', 'tim@example.com', '--email-verified']).status, 0);
  await form(new CookieJar(), '/oauth/reset', { login: 'tim' });
  const mail = await mailbox.waitFor('tim@example.com', 'reset');
  writeFileSync(clockFile, String(61 * 60_000));
  try {
    await new Promise((r) => setTimeout(r, 200));
    const late = await openLink(new CookieJar(), mail.link!, { password: 'tim-new-password' });
    assert.equal(late.status, 400);
    assert.equal((await accountSignIn(new CookieJar(), 'tim', 'tim-password-1')).status, 303);
  } finally {
    writeFileSync(clockFile, '0');
    await new Promise((r) => setTimeout(r, 200));
  }
});

test('e-mail change on the account page: a link to the new address, a notice to the old one, the change only after the link', async () => {
  addUser(server, 'eve', 'eve-password-1');
  assert.equal(server.cli(['user', 'update', 'eve', '--email', 'eve@old.example', '--email-verified']).status, 0);
  const jar = new CookieJar();
  assert.equal((await accountSignIn(jar, 'eve', 'eve-password-1')).status, 303);
  const shown = await page(server, jar, '/oauth/account');
  // A session alone does not change the address: the password is asked.
  const noPassword = await page(server, jar, '/oauth/account', { csrf_token: hiddenField(shown.html, 'csrf_token'), action: 'profile', name: 'Eve', email: 'eve@new.example' });
  assert.equal(noPassword.status, 400);
  assert.match(text(noPassword), /password is not correct\. Nothing was changed/);
  const saved = await page(server, jar, '/oauth/account', { csrf_token: hiddenField(shown.html, 'csrf_token'), action: 'profile', name: 'Eve', email: 'eve@new.example', password: 'eve-password-1' });
  assert.equal(saved.status, 303);
  const after = await page(server, jar, saved.location!);
  assert.match(text(after), /We sent a link to your new address/);
  assert.match(text(after), /Waiting for confirmation: eve@new\.example/);
  assert.match(after.html, /value="eve@old\.example"/);
  const link = await mailbox.waitFor('eve@new.example', 'email-change');
  assert.equal(mailbox.to('eve@new.example').length, 1, 'the refused form mailed nothing');
  const notice = await mailbox.waitFor('eve@old.example', 'email-change-notice');
  assert.match(notice.text, /eve@new\.example/);
  assert.equal(notice.link, null, 'the old address gets no link');
  const user = () => (JSON.parse(server.cli(['user', 'list']).stdout) as { username: string; email: string; email_verified: boolean }[]).find((u) => u.username === 'eve')!;
  assert.equal(user().email, 'eve@old.example');
  const confirmed = await openLink(new CookieJar(), link.link!);
  assert.equal(confirmed.status, 200);
  assert.equal(user().email, 'eve@new.example');
  assert.equal(user().email_verified, true);
  await mailbox.waitFor('eve@old.example', 'email-changed');
});

test('at most 5 mails an hour reach one address, however it is written; the 6th is refused and changes nothing', async () => {
  addUser(server, 'quinn', 'quinn-password-1');
  assert.equal(server.cli(['user', 'update', 'quinn', '--email', 'quinn@example.com', '--email-verified']).status, 0);
  const jar = new CookieJar();
  assert.equal((await accountSignIn(jar, 'quinn', 'quinn-password-1')).status, 303);
  const statuses: number[] = [];
  for (const email of ['target@example.com', 'TARGET@example.com', 'target@EXAMPLE.com', 'Target@Example.com', 'target@example.com', 'target@example.COM']) {
    const shown = await page(server, jar, '/oauth/account');
    const p = await page(server, jar, '/oauth/account', { csrf_token: hiddenField(shown.html, 'csrf_token'), action: 'profile', name: '', email, password: 'quinn-password-1' });
    statuses.push(p.status);
    if (p.status === 429) assert.match(text(p), /has been sent 5 mails this hour/);
  }
  assert.deepEqual(statuses, [303, 303, 303, 303, 303, 429]);
  await mailbox.waitFor('target@example.com', 'email-change', 5);
  await new Promise((r) => setTimeout(r, 2000));
  assert.equal(mailbox.to('target@example.com').length, 5);
});

test('no log line holds a mailed link\'s secret, though every request was logged', async () => {
  const links = mailbox.mails.map((m) => m.link).filter((l): l is string => l !== null);
  assert.ok(links.length >= 5);
  const out = server.output();
  assert.match(out, /\/oauth\/verify\?token=[0-9a-f]+\.…/, 'the request lines are there, cut');
  for (const link of links) {
    const secret = new URL(link).search.replace(/^.*=[^.]*\./, '');
    assert.ok(secret.length > 20 && !out.includes(secret), `the secret of ${link.slice(0, 60)}… is in the log`);
  }
});
