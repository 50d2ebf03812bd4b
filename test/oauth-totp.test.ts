// Second factors over HTTPS, as a browser and a client drive them (docs/oauth.md, Second factors):
// an authenticator app set up on the account page (codes computed here with otpauth from the
// secret the page shows), the second step of the login page, the account page and the console,
// recovery codes, the password grant's `otp`, the throttle, `auth.mfa`, removal. And the attacks:
// a replayed code, two requests racing with one code, consent posted without the second step, a
// half-done sign-in taken to another browser or forged, forms without their CSRF token.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Secret, TOTP } from 'otpauth';
import { startApp, type InProcessApp } from './helpers/app.js';
import { createPgDatabase, pgAvailable } from './helpers/server.js';
import { CookieJar, addClient, addUser, authorizeUrl, basic, hiddenField, page, post, unescapeHtml, type Page, type RegisteredClient } from './helpers/oauth.js';
import { listFactorsOfUser } from '../src/authserver/store/factors.js';
import { TOTP_FAILURE_LIMIT, confirmTotp, startTotpEnrolment, totpSecretContext, verifySecondFactor } from '../src/authserver/model/factors.js';
import { findUserByUsername } from '../src/authserver/model/users.js';
import { readEvents } from '../src/platform/store/outbox.js';

const REDIRECT = 'https://planner.example/cb';
let server: InProcessApp;
let planner: RegisteredClient;
let app: RegisteredClient;

before(async () => {
  server = await startApp({ file: true, logLevel: 'info', config: { auth: { loginThrottle: { max: 1000, window: 60 } } } });
  for (const name of ['ada', 'bob', 'cyd', 'dee', 'eve', 'fay', 'gus', 'hal', 'ivy']) await addUser(server, name, `${name}-password-1`);
  await addUser(server, 'root', 'root-password-1');
  assert.equal((await server.cli(['user', 'admin', 'root', 'on'])).status, 0);
  planner = await addClient(server, 'planner', ['--name', 'Zoo Planner', '--grant', 'authorization_code', '--redirect-uri', REDIRECT]);
  app = await addClient(server, 'app', ['--grant', 'password']);
});
after(async () => server?.cleanup());

/** The code an authenticator app shows `steps` periods from now. */
const codeOf = (secret: string, steps = 0) => TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp: Date.now() + steps * 30_000 });
const attr = (html: string, name: string) => {
  const m = new RegExp(`${name}="([^"]*)"`).exec(html);
  assert.ok(m, `${name} not found in:\n${html.slice(0, 3000)}`);
  return unescapeHtml(m[1]);
};
const recoveryCodes = (html: string) => [...html.matchAll(/data-recovery-code="([^"]+)"/g)].map((m) => m[1]);
const sessionCookie = (jar: CookieJar) => [...jar.cookies].find(([k, v]) => k.includes('gatehouse_session') && v !== '');

async function accountSignIn(username: string, jar = new CookieJar()): Promise<{ jar: CookieJar; html: string }> {
  const first = await page(server, jar, '/oauth/account');
  const posted = await page(server, jar, '/oauth/account', { csrf_token: hiddenField(first.html, 'csrf_token'), action: 'signin', username, password: `${username}-password-1` });
  assert.equal(posted.status, 303, posted.html);
  const shown = await page(server, jar, '/oauth/account');
  return { jar, html: shown.html };
}

/** Sets up an authenticator for `username` on the account page; its secret and recovery codes. */
async function enrol(username: string): Promise<{ secret: string; codes: string[]; jar: CookieJar; html: string }> {
  const { jar, html } = await accountSignIn(username);
  const secret = attr(html, 'data-totp-secret');
  const done = await page(server, jar, '/oauth/account', { csrf_token: hiddenField(html, 'csrf_token'), enrolment: hiddenField(html, 'enrolment'), otp: codeOf(secret), password: `${username}-password-1`, action: 'totp-confirm' });
  assert.equal(done.status, 200, done.html);
  const codes = recoveryCodes(done.html);
  assert.equal(codes.length, 10);
  return { secret, codes, jar, html: done.html };
}

/** The login page's first step for `username`: the second-step page (or whatever came back). */
async function loginPassword(username: string, jar = new CookieJar(), password = `${username}-password-1`): Promise<Page & { authorize: string }> {
  const authorize = authorizeUrl({ response_type: 'code', client_id: 'planner', redirect_uri: REDIRECT, scope: 'zoos:read', state: 's1', prompt: 'consent' });
  const login = await page(server, jar, authorize);
  const p = await page(server, jar, '/oauth/authorize', { request: hiddenField(login.html, 'request'), csrf_token: hiddenField(login.html, 'csrf_token'), step: 'login', username, password });
  return { ...p, authorize };
}

const secondStep = (jar: CookieJar, p: Page, otp: string, extra: Record<string, string> = {}) =>
  page(server, jar, '/oauth/authorize', { request: hiddenField(p.html, 'request'), csrf_token: hiddenField(p.html, 'csrf_token'), step: 'second-factor', pending: hiddenField(p.html, 'pending'), otp, ...extra });

async function events(type: string) {
  return (await readEvents(server.ctx.store, { after: 0, limit: 10_000, types: [type], collections: null })).map((e) => ({ ...e, data: e.data ? JSON.parse(e.data) : null }));
}

test('the account page sets up an authenticator: secret, otpauth URI, QR code, confirmed by a code; 10 recovery codes shown once; the secret is stored sealed', async () => {
  const { jar, html } = await accountSignIn('ada');
  assert.match(html, /<h2 id="two-step-title">Two-step sign-in<\/h2>/);
  const secret = attr(html, 'data-totp-secret');
  assert.match(secret, /^[A-Z2-7]{32}$/);
  const uri = attr(html, 'data-otpauth-uri');
  assert.equal(new URL(uri).protocol, 'otpauth:');
  assert.equal(new URL(uri).searchParams.get('secret'), secret);
  assert.match(uri, /^otpauth:\/\/totp\/gatehouse:ada\?/);
  assert.match(html, /<svg role="img" aria-label="QR code of the set-up link"/);
  assert.match(html, /name="otp"/);
  assert.match(html, /<button type="submit" name="action" value="totp-confirm"/);
  const res = await server.fetch('/oauth/account', { headers: { accept: 'text/html', cookie: jar.header() } });
  assert.doesNotMatch(res.headers.get('content-security-policy')!, /unsafe-inline|data:/, 'nothing inline allowed, no data: images: the QR code is inline SVG');

  // A session alone adds no factor: the password is asked too.
  const bare = { csrf_token: hiddenField(html, 'csrf_token'), enrolment: hiddenField(html, 'enrolment'), action: 'totp-confirm' };
  const noPassword = await page(server, jar, '/oauth/account', { ...bare, otp: codeOf(secret) });
  assert.equal(noPassword.status, 400);
  assert.match(noPassword.html, /password is not correct/);
  assert.equal(attr(noPassword.html, 'data-totp-secret'), secret, 'the same set-up is offered again');
  const form = { ...bare, password: 'ada-password-1' };
  const wrong = await page(server, jar, '/oauth/account', { ...form, otp: String((Number(codeOf(secret)) + 1) % 1_000_000).padStart(6, '0') });
  assert.equal(wrong.status, 400, wrong.html.replace(/[\s\S]*<main>/, '').slice(0, 600));
  assert.match(wrong.html, /the code is not correct/i);
  assert.equal(attr(wrong.html, 'data-totp-secret'), secret, 'the same set-up is offered again');
  const forged = await page(server, jar, '/oauth/account', { ...form, enrolment: 'v1.x.y.z.w', otp: codeOf(secret) });
  assert.equal(forged.status, 400, 'a made-up sealed field');
  const done = await page(server, jar, '/oauth/account', { ...form, otp: codeOf(secret) });
  assert.equal(done.status, 200);
  const codes = recoveryCodes(done.html);
  assert.equal(codes.length, 10);
  assert.equal(new Set(codes).size, 10);
  for (const c of codes) assert.match(c, /^[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}$/);
  const again = await page(server, jar, '/oauth/account');
  assert.equal(recoveryCodes(again.html).length, 0, 'shown once');
  assert.doesNotMatch(again.html, /data-totp-secret/, 'no second authenticator offered');
  assert.match(again.html, /Authenticator app/);
  assert.match(again.html, /10 of 10 recovery codes left/);
  assert.match(again.html, /value="factor-remove"/);

  const user = (await findUserByUsername(server.ctx, 'ada'))!;
  const [factor] = await listFactorsOfUser(server.ctx.store, user.id);
  assert.equal(factor.kind, 'totp');
  assert.ok(factor.secret && !factor.secret.includes(secret), 'stored sealed, not in clear');
  assert.equal(server.ctx.sealer.open(factor.secret, totpSecretContext(factor.id, user.id)), secret);
  assert.throws(() => server.ctx.sealer.open(factor.secret!, totpSecretContext(factor.id, 'someone-else')), 'sealed to its user');
  assert.equal(server.output().includes(secret), false, 'the secret is never logged');
  for (const c of codes) assert.equal(server.output().includes(c), false, 'nor a recovery code');
  const updated = (await events('user.updated')).filter((e) => e.record_id === user.id);
  assert.ok(updated.length >= 1, 'user.updated when a factor is added');
});

test('login page: after the password, the code; no session until both; a wrong code is 401 and a failed login; a code works once', async () => {
  const { secret } = await enrol('bob');
  const jar = new CookieJar();
  const step = await loginPassword('bob', jar);
  assert.equal(step.status, 200);
  assert.match(step.html, /name="otp"/);
  assert.match(step.html, /Two-step sign-in/);
  assert.equal(sessionCookie(jar), undefined, 'no session after the password alone');

  // Skipping the second step: consent posted straight away finds no session.
  const skip = await page(server, jar, '/oauth/authorize', { request: hiddenField(step.html, 'request'), csrf_token: hiddenField(step.html, 'csrf_token'), step: 'consent', decision: 'allow', scope: 'zoos:read', ttl: '3600' });
  assert.equal(skip.status, 401);
  assert.equal(skip.location, null, 'no code went to the client');
  assert.match(skip.html, /name="password"/);

  const failedBefore = (await events('login.failed')).length;
  const wrong = await secondStep(jar, step, '000000' === codeOf(secret, 1) ? '111111' : '000000');
  assert.equal(wrong.status, 401);
  assert.match(wrong.html, /not correct/);
  const failed = (await events('login.failed')).slice(failedBefore);
  assert.equal(failed.length, 1);
  assert.deepEqual({ username: failed[0].data.username, via: failed[0].data.via, reason: failed[0].data.reason }, { username: 'bob', via: 'login form', reason: 'second factor' });
  assert.match(server.output(), /"event":"login.failed"[^\n]*"reason":"login form: second factor"/);

  const code = codeOf(secret, 1); // the set-up used the current step
  const ok = await secondStep(jar, wrong, code);
  assert.equal(ok.status, 303, ok.html);
  assert.equal(ok.location, step.authorize);
  assert.ok(sessionCookie(jar), 'signed in');
  const consent = await page(server, jar, ok.location!);
  assert.match(consent.html, /name="decision" value="allow"/);

  // The same code again, on a fresh sign-in: refused (each code once).
  const other = new CookieJar();
  const step2 = await loginPassword('bob', other);
  const replay = await secondStep(other, step2, code);
  assert.equal(replay.status, 401);
  assert.equal(sessionCookie(other), undefined);
});

test('two requests racing with one code: exactly one signs in', async () => {
  const { secret } = await enrol('cyd');
  const a = new CookieJar();
  const b = new CookieJar();
  const [sa, sb] = [await loginPassword('cyd', a), await loginPassword('cyd', b)];
  const code = codeOf(secret, 1);
  const answers = await Promise.all([secondStep(a, sa, code), secondStep(b, sb, code)]);
  assert.deepEqual(answers.map((r) => r.status).sort(), [303, 401]);
});

test('a half-done sign-in is bound to its browser and cannot be forged', async () => {
  const { secret } = await enrol('dee');
  const victim = new CookieJar();
  const step = await loginPassword('dee', victim);
  // Another browser with its own form token and the victim's pending value.
  const attacker = new CookieJar();
  const own = await page(server, attacker, step.authorize);
  const stolen = await page(server, attacker, '/oauth/authorize', {
    request: hiddenField(step.html, 'request'),
    csrf_token: hiddenField(own.html, 'csrf_token'),
    step: 'second-factor',
    pending: hiddenField(step.html, 'pending'),
    otp: codeOf(secret, 1),
  });
  assert.equal(stolen.status, 401);
  assert.match(stolen.html, /sign-in has expired/);
  assert.equal(sessionCookie(attacker), undefined);
  // A pending value for another user id, or with a later expiry, under the victim's own cookies: refused.
  const [id, expires, ...mac] = hiddenField(step.html, 'pending').split('.');
  const eve = (await findUserByUsername(server.ctx, 'eve'))!;
  for (const pending of [[eve.id, expires, ...mac].join('.'), [id, String(Number(expires) + 3_600_000), ...mac].join('.'), 'garbage', `${id}.1.${mac.join('.')}`, 'x'.repeat(5000)]) {
    const r = await secondStep(victim, step, codeOf(secret, 1), { pending });
    assert.equal(r.status, 401, pending.slice(0, 40));
  }
  // A step the server does not know, and an absurd code: plain refusals, never 5xx.
  assert.equal((await secondStep(victim, step, 'x'.repeat(10_000))).status, 401);
  assert.equal((await secondStep(victim, step, '')).status, 400);
  assert.equal(sessionCookie(victim), undefined);
});

test('a recovery code signs in once; the account page counts what is left', async () => {
  const { codes } = await enrol('eve');
  const jar = new CookieJar();
  const step = await loginPassword('eve', jar);
  const ok = await secondStep(jar, step, codes[0].toLowerCase());
  assert.equal(ok.status, 303, 'a recovery code, typed in lower case');
  const again = new CookieJar();
  const step2 = await loginPassword('eve', again);
  assert.equal((await secondStep(again, step2, codes[0])).status, 401, 'used already');
  assert.equal((await secondStep(again, step2, codes[1].replace(/-/g, ' '))).status, 303, 'another one, with spaces');
  const account = await page(server, again, '/oauth/account');
  assert.match(account.html, /8 of 10 recovery codes left/);
});

test('failed codes count in the login throttle: past auth.loginThrottle.max, 429 with Retry-After even for the right code', async () => {
  // An app of its own, with a small window: every request here comes from one IP, whose count the main app must not spend.
  const main = server;
  server = await startApp({ config: { auth: { loginThrottle: { max: 3, window: 60 } } } });
  try {
    await addUser(server, 'fay', 'fay-password-1');
    await addClient(server, 'planner', ['--name', 'Zoo Planner', '--grant', 'authorization_code', '--redirect-uri', REDIRECT]);
    const { secret } = await enrol('fay');
    const jar = new CookieJar();
    let step: Page = await loginPassword('fay', jar);
    for (let i = 0; i < 3; i++) {
      step = await secondStep(jar, step, i % 2 ? '000001' : '999998');
      assert.equal(step.status, 401);
    }
    const blocked = await secondStep(jar, step, codeOf(secret, 1));
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.headers.get('retry-after')) >= 1);
    // The password is refused too now: the same window.
    const locked = await loginPassword('fay', new CookieJar());
    assert.equal(locked.status, 429);
  } finally {
    await server.cleanup();
    server = main;
  }
});

test('password grant: a user with a second factor must send otp; invalid_grant names it; a right code or a recovery code works', async () => {
  const { secret, codes } = await enrol('gus');
  const auth = basic('app', app.client_secret!);
  const none = await post(server, 'token', { grant_type: 'password', username: 'gus', password: 'gus-password-1' }, { auth });
  assert.equal(none.status, 400);
  assert.equal(none.body.error, 'invalid_grant');
  assert.match(none.body.error_description, /\botp\b/);
  const wrong = await post(server, 'token', { grant_type: 'password', username: 'gus', password: 'gus-password-1', otp: '12345' }, { auth });
  assert.equal(wrong.body.error, 'invalid_grant');
  assert.match(wrong.body.error_description, /\botp\b/);
  const code = codeOf(secret, 1);
  const ok = await post(server, 'token', { grant_type: 'password', username: 'gus', password: 'gus-password-1', otp: code }, { auth });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.ok(ok.body.access_token);
  const replay = await post(server, 'token', { grant_type: 'password', username: 'gus', password: 'gus-password-1', otp: code }, { auth });
  assert.equal(replay.body.error, 'invalid_grant', 'the code was used');
  const recovery = await post(server, 'token', { grant_type: 'password', username: 'gus', password: 'gus-password-1', otp: codes[3] }, { auth });
  assert.equal(recovery.status, 200);
  // A user without a factor is not asked (auth.mfa: optional); otp is ignored.
  const plain = await post(server, 'token', { grant_type: 'password', username: 'hal', password: 'hal-password-1', otp: '123456' }, { auth });
  assert.equal(plain.status, 200);
});

test('removing a factor takes the password again; the recovery codes go with the last one', async () => {
  const { jar, html } = await enrol('ivy');
  const factorId = hiddenField(html, 'factor_id');
  const csrf = hiddenField(html, 'csrf_token');
  const wrong = await page(server, jar, '/oauth/account', { csrf_token: csrf, action: 'factor-remove', factor_id: factorId, password: 'not-it-1' });
  assert.equal(wrong.status, 400);
  assert.match(wrong.html, /password is not correct/);
  const missing = await page(server, jar, '/oauth/account', { csrf_token: csrf, action: 'factor-remove', factor_id: factorId });
  assert.equal(missing.status, 400);
  const noCsrf = await page(server, jar, '/oauth/account', { action: 'factor-remove', factor_id: factorId, password: 'ivy-password-1' });
  assert.equal(noCsrf.status, 403);
  const user = (await findUserByUsername(server.ctx, 'ivy'))!;
  assert.equal((await listFactorsOfUser(server.ctx.store, user.id)).length, 1);
  const eventsBefore = (await events('user.updated')).filter((e) => e.record_id === user.id).length;
  const done = await page(server, jar, '/oauth/account', { csrf_token: csrf, action: 'factor-remove', factor_id: factorId, password: 'ivy-password-1' });
  assert.equal(done.status, 303);
  assert.equal((await listFactorsOfUser(server.ctx.store, user.id)).length, 0);
  assert.equal((await events('user.updated')).filter((e) => e.record_id === user.id).length, eventsBefore + 1);
  // Without a factor the password alone signs in again.
  const again = await loginPassword('ivy', new CookieJar());
  assert.equal(again.status, 303);
});

test('the new forms refuse a missing or foreign CSRF token', async () => {
  const { jar, html } = await accountSignIn('hal');
  const confirm = await page(server, jar, '/oauth/account', { enrolment: hiddenField(html, 'enrolment'), otp: codeOf(attr(html, 'data-totp-secret')), action: 'totp-confirm' });
  assert.equal(confirm.status, 403);
  const other = await accountSignIn('root');
  const foreign = await page(server, jar, '/oauth/account', { csrf_token: hiddenField(other.html, 'csrf_token'), enrolment: hiddenField(html, 'enrolment'), otp: '123456', action: 'recovery-codes', password: 'hal-password-1' });
  assert.equal(foreign.status, 403);
  const step = await loginPassword('bob');
  const noToken = await page(server, new CookieJar(), '/oauth/authorize', { request: hiddenField(step.html, 'request'), step: 'second-factor', pending: hiddenField(step.html, 'pending'), otp: '123456' });
  assert.equal(noToken.status, 403);
});

test('the admin console asks an admin with a factor for the code; no console session before it', async () => {
  const { secret } = await enrol('root');
  const jar = new CookieJar();
  const front = await page(server, jar, '/admin');
  const step = await page(server, jar, '/admin/signin', { csrf_token: hiddenField(front.html, 'csrf_token'), username: 'root', password: 'root-password-1' });
  assert.equal(step.status, 200);
  assert.match(step.html, /name="otp"/);
  assert.equal((await page(server, jar, '/admin/users')).status, 401, 'no console session yet');
  const form = { csrf_token: hiddenField(step.html, 'csrf_token'), step: 'second-factor', pending: hiddenField(step.html, 'pending') };
  const wrong = await page(server, jar, '/admin/signin', { ...form, otp: '000000' === codeOf(secret, 1) ? '111111' : '000000' });
  assert.equal(wrong.status, 401);
  // The login pages' half-done sign-in is no console one (another cookie scope).
  const loginStep = await loginPassword('root');
  assert.equal((await page(server, jar, '/admin/signin', { ...form, pending: hiddenField(loginStep.html, 'pending'), otp: codeOf(secret, 1) })).status, 401);
  const ok = await page(server, jar, '/admin/signin', { ...form, otp: codeOf(secret, 1) });
  assert.equal(ok.status, 303, ok.html);
  assert.equal((await page(server, jar, '/admin/users')).status, 200);
});

test('auth.mfa: all leads a user without a factor to set one up after the password, then on to the application; the password grant refuses them', async () => {
  const strict = await startApp({ config: { auth: { mfa: 'all' } } });
  try {
    await addUser(strict, 'kim', 'kim-password-1');
    await addUser(strict, 'lou', 'lou-password-1');
    assert.equal((await strict.cli(['user', 'admin', 'lou', 'on'])).status, 0);
    await addClient(strict, 'planner', ['--name', 'Zoo Planner', '--grant', 'authorization_code', '--redirect-uri', REDIRECT]);
    const pw = await addClient(strict, 'app', ['--grant', 'password']);
    const grant = await post(strict, 'token', { grant_type: 'password', username: 'kim', password: 'kim-password-1' }, { auth: basic('app', pw.client_secret!) });
    assert.equal(grant.body.error, 'invalid_grant');
    assert.match(grant.body.error_description, /\botp\b/);

    const jar = new CookieJar();
    const authorize = authorizeUrl({ response_type: 'code', client_id: 'planner', redirect_uri: REDIRECT, scope: 'zoos:read', state: 's', prompt: 'consent' });
    const login = await page(strict, jar, authorize);
    const enrolPage = await page(strict, jar, '/oauth/authorize', { request: hiddenField(login.html, 'request'), csrf_token: hiddenField(login.html, 'csrf_token'), step: 'login', username: 'kim', password: 'kim-password-1' });
    assert.equal(enrolPage.status, 200);
    assert.match(enrolPage.html, /Set up two-step sign-in/);
    assert.equal(sessionCookie(jar), undefined);
    const secret = attr(enrolPage.html, 'data-totp-secret');
    const form = { request: hiddenField(enrolPage.html, 'request'), csrf_token: hiddenField(enrolPage.html, 'csrf_token'), step: 'enrol', pending: hiddenField(enrolPage.html, 'pending'), enrolment: hiddenField(enrolPage.html, 'enrolment'), action: 'totp-confirm' };
    const wrong = await page(strict, jar, '/oauth/authorize', { ...form, otp: 'abc' });
    assert.equal(wrong.status, 400);
    assert.equal(sessionCookie(jar), undefined);
    const done = await page(strict, jar, '/oauth/authorize', { ...form, otp: codeOf(secret) });
    assert.equal(done.status, 200, done.html);
    assert.equal(recoveryCodes(done.html).length, 10);
    const next = unescapeHtml(/<a class="button primary" href="([^"]+)">Continue to Zoo Planner<\/a>/.exec(done.html)![1]);
    assert.equal(next, authorize);
    const consent = await page(strict, jar, next);
    assert.match(consent.html, /name="decision" value="allow"/);
    const withOtp = await post(strict, 'token', { grant_type: 'password', username: 'kim', password: 'kim-password-1', otp: codeOf(secret, 1) }, { auth: basic('app', pw.client_secret!) });
    assert.equal(withOtp.status, 200);

    // The console applies the same rule to admins.
    const cj = new CookieJar();
    const front = await page(strict, cj, '/admin');
    const cstep = await page(strict, cj, '/admin/signin', { csrf_token: hiddenField(front.html, 'csrf_token'), username: 'lou', password: 'lou-password-1' });
    assert.equal(cstep.status, 200);
    const csecret = attr(cstep.html, 'data-totp-secret');
    const cdone = await page(strict, cj, '/admin/signin', {
      csrf_token: hiddenField(cstep.html, 'csrf_token'),
      step: 'enrol',
      pending: hiddenField(cstep.html, 'pending'),
      enrolment: hiddenField(cstep.html, 'enrolment'),
      otp: codeOf(csecret),
      action: 'totp-confirm',
    });
    assert.equal(cdone.status, 200, cdone.html);
    assert.equal(recoveryCodes(cdone.html).length, 10);
    assert.equal((await page(strict, cj, '/admin/users')).status, 200);
  } finally {
    await strict.cleanup();
  }
});

test('passkeys: the login page offers the button with a remembered challenge; a made-up, replayed or foreign response signs nobody in, never 5xx; the forms need their CSRF token', async () => {
  const jar = new CookieJar();
  const authorize = authorizeUrl({ response_type: 'code', client_id: 'planner', redirect_uri: REDIRECT, scope: 'zoos:read', state: 'pk' });
  const login = await page(server, jar, authorize);
  assert.match(login.html, /<button type="button" data-passkey-signin/);
  assert.match(login.html, /<form method="post" action="\/oauth\/authorize" class="passkey" hidden>/, 'hidden until the script finds WebAuthn');
  assert.match(login.headers.get('content-security-policy')!, /script-src 'self';/);
  const options = JSON.parse(attr(login.html, 'data-passkey-options'));
  const host = new URL(server.url).hostname;
  assert.equal(options.rpId, ['127.0.0.1', '[::1]'].includes(host) ? 'localhost' : host);
  assert.equal(options.userVerification, 'required');
  const clientData = (challenge: string, origin = server.url) => Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge, origin })).toString('base64url');
  const forged = (challenge: string) =>
    JSON.stringify({ id: 'AAAA', rawId: 'AAAA', type: 'public-key', clientExtensionResults: {}, response: { clientDataJSON: clientData(challenge), authenticatorData: 'AAAA', signature: 'AAAA' } });
  const form = { request: hiddenField(login.html, 'request'), csrf_token: hiddenField(login.html, 'csrf_token'), step: 'passkey' };
  for (const credential of ['', 'not json', '{"id":1}', forged(options.challenge), forged(options.challenge), forged('made-up'), 'x'.repeat(30_000)]) {
    const r = await page(server, jar, '/oauth/authorize', { ...form, credential });
    assert.equal(r.status, 401, credential.slice(0, 30));
    assert.match(r.html, /passkey was not accepted/);
  }
  assert.equal(sessionCookie(jar), undefined);
  assert.equal((await page(server, new CookieJar(), '/oauth/authorize', { ...form, credential: forged(options.challenge) })).status, 403, 'without this browser\'s CSRF token');
  assert.ok((await events('login.failed')).some((e) => e.data.reason === 'passkey' && e.data.via === 'login form'), 'a refused passkey is a failed sign-in in the feed');

  const { jar: signed, html } = await accountSignIn('hal');
  assert.match(html, /<button type="button" data-passkey-register/);
  const register = JSON.parse(attr(html, 'data-passkey-options'));
  assert.equal(register.authenticatorSelection.residentKey, 'required');
  const noPassword = await page(server, signed, '/oauth/account', { csrf_token: hiddenField(html, 'csrf_token'), action: 'passkey-register', credential: forged(register.challenge) });
  assert.equal(noPassword.status, 400);
  assert.match(noPassword.html, /password is not correct/, 'a session alone registers no passkey');
  const bad = await page(server, signed, '/oauth/account', { csrf_token: hiddenField(html, 'csrf_token'), action: 'passkey-register', password: 'hal-password-1', credential: forged(register.challenge) });
  assert.equal(bad.status, 400);
  assert.match(bad.html, /passkey was not registered/);
  assert.equal((await page(server, signed, '/oauth/account', { action: 'passkey-register', credential: '{}' })).status, 403);
});

test('PostgreSQL: two requests racing with one code, and with one recovery code, sign in once each', { skip: !pgAvailable && 'PostgreSQL not available' }, async () => {
  const main = server;
  const database = await createPgDatabase();
  server = await startApp({ database: database.url });
  try {
    await addUser(server, 'pat', 'pat-password-1');
    await addClient(server, 'planner', ['--name', 'Zoo Planner', '--grant', 'authorization_code', '--redirect-uri', REDIRECT]);
    const { secret, codes } = await enrol('pat');
    const jars = [new CookieJar(), new CookieJar(), new CookieJar()];
    const steps = await Promise.all(jars.map((j) => loginPassword('pat', j)));
    const code = codeOf(secret, 1);
    assert.deepEqual((await Promise.all(jars.map((j, i) => secondStep(j, steps[i], code)))).map((r) => r.status).sort(), [303, 401, 401]);
    const again = await Promise.all(jars.map((j) => loginPassword('pat', j)));
    assert.deepEqual((await Promise.all(jars.map((j, i) => secondStep(j, again[i], codes[0])))).map((r) => r.status).sort(), [303, 401, 401]);
  } finally {
    await server.cleanup();
    server = main;
    await database.drop();
  }
});

test('a factor added ends the password-only sessions of the user: another browser signs in again; this one goes on', async () => {
  await addUser(server, 'kit', 'kit-password-1');
  const elsewhere = await accountSignIn('kit');
  const silent = authorizeUrl({ response_type: 'code', client_id: 'planner', redirect_uri: REDIRECT, scope: 'zoos:read', state: 'p', prompt: 'none' });
  assert.match((await page(server, elsewhere.jar, '/oauth/account')).html, /Signed in as <strong>kit<\/strong>/);
  const { jar } = await enrol('kit');
  assert.match((await page(server, jar, '/oauth/account')).html, /Signed in as <strong>kit<\/strong>/, 'the browser that added it stays signed in');
  const stale = await page(server, elsewhere.jar, '/oauth/account');
  assert.doesNotMatch(stale.html, /Signed in as/, 'a session made with the password alone no longer stands');
  const none = await page(server, elsewhere.jar, silent);
  assert.equal(new URL(none.location!).searchParams.get('error'), 'login_required');
});

test('gatehouse user reset-factors: an operator removes a lost factor; the user signs in with the password alone', async () => {
  await addUser(server, 'lou', 'lou-password-1');
  await enrol('lou');
  assert.equal((await loginPassword('lou')).status, 200, 'the code is asked');
  const reset = await server.cli(['user', 'reset-factors', 'lou']);
  assert.equal(reset.status, 0, reset.stderr);
  assert.equal(JSON.parse(reset.stdout).factors_removed, 1);
  assert.equal((await loginPassword('lou', new CookieJar())).status, 303, 'the password alone signs in');
  const unknown = await server.cli(['user', 'reset-factors', 'nobody']);
  assert.equal(unknown.status, 1);
  assert.match(unknown.stderr, /no user named "nobody"/);
});

test(`${TOTP_FAILURE_LIMIT} wrong authenticator codes in a row: the app's codes are refused until a recovery code is used`, async () => {
  await addUser(server, 'max', 'max-password-1');
  const user = (await findUserByUsername(server.ctx, 'max'))!;
  const enrolment = startTotpEnrolment(server.ctx, user);
  const { recoveryCodes: codes } = await confirmTotp(server.ctx, user, enrolment.sealed, codeOf(enrolment.secret, -1), null);
  const wrong = String((Number(codeOf(enrolment.secret)) + 500_000) % 1_000_000).padStart(6, '0');
  for (let i = 0; i < TOTP_FAILURE_LIMIT; i++) assert.equal(await verifySecondFactor(server.ctx, user, wrong), 'wrong');
  assert.equal(await verifySecondFactor(server.ctx, user, codeOf(enrolment.secret)), 'locked', 'even the right code');
  const p = await loginPassword('max');
  const locked = await secondStep(new CookieJar(), p, codeOf(enrolment.secret, 1));
  assert.equal(locked.status, 403, 'another browser: no half-done sign-in here');
  const jar = new CookieJar();
  const mine = await loginPassword('max', jar);
  const refused = await secondStep(jar, mine, codeOf(enrolment.secret, 1));
  assert.equal(refused.status, 401);
  assert.match(refused.html, /Too many wrong codes from your authenticator app/);
  assert.equal(await verifySecondFactor(server.ctx, user, codes[0]), 'recovery code');
  assert.equal(await verifySecondFactor(server.ctx, user, codeOf(enrolment.secret, 1)), 'totp', 'the app works again');
});
