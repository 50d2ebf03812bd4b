// The operator's side of the user's lifecycle by e-mail (docs/admin.md): invitations and a new
// verification link, through the admin API (auth.signup invite) and the console (CSRF, confirmation
// before a revoke, the sign-up policy shown); refused while sign-up is closed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { addClient, addUser, basic, CookieJar, hiddenField, page, post, unescapeHtml } from './helpers/oauth.js';
import { assertApiError } from './helpers/tokens.js';
import type { Json } from './helpers/server.js';
import { listInvitations } from '../src/authserver/model/lifecycle.js';
import { createUser, findUserByUsername } from '../src/authserver/model/users.js';

let server: InProcessApp;
let adminToken: string;
let jar: CookieJar;
let csrf: string;

async function adminTokenOf(app: InProcessApp): Promise<string> {
  const bot = await addClient(app, 'ops-bot', ['--grant', 'client_credentials', '--scope', 'admin']);
  const t = await post(app, 'token', { grant_type: 'client_credentials', scope: 'admin' }, { auth: basic(bot.client_id, bot.client_secret!) });
  assert.equal(t.status, 200, JSON.stringify(t.body));
  return t.body.access_token;
}

const call = (method: string, path: string, body?: unknown, token = adminToken, app = server) =>
  app.json(method, `/admin/v1${path}`, body, token ? { authorization: `Bearer ${token}` } : {});

async function consoleSignIn(app: InProcessApp, username: string, password: string): Promise<{ jar: CookieJar; csrf: string }> {
  const j = new CookieJar();
  const front = await page(app, j, '/admin');
  const answer = await page(app, j, '/admin/signin', { csrf_token: hiddenField(front.html, 'csrf_token'), username, password });
  assert.equal(answer.status, 303, answer.html);
  return { jar: j, csrf: hiddenField((await page(app, j, '/admin/users')).html, 'csrf_token') };
}

before(async () => {
  server = await startApp({ config: { auth: { signup: 'invite' } }, logLevel: 'info' });
  adminToken = await adminTokenOf(server);
  await addUser(server, 'root', 'root-password-1');
  assert.equal((await server.cli(['user', 'admin', 'root', 'on'])).status, 0);
  ({ jar, csrf } = await consoleSignIn(server, 'root', 'root-password-1'));
});
after(async () => server?.cleanup());

test('API: invite (201, Location), list, duplicate or bad address refused with nothing changed, revoke 204 then 404', async () => {
  const made = await call('POST', '/invitations', { email: 'newcomer@example.org' });
  assert.equal(made.status, 201, made.text);
  assert.equal(made.headers.get('location'), `${server.url}/admin/v1/invitations/${made.body.id}`);
  assert.deepEqual(Object.keys(made.body), ['id', 'email', 'created_by', 'created_at', 'expires_at']);
  assert.equal(made.body.email, 'newcomer@example.org');
  assert.equal(made.body.created_by, 'client:ops-bot');
  const days = (Date.parse(made.body.expires_at) - Date.parse(made.body.created_at)) / 86_400_000;
  assert.equal(days, 7);
  assert.ok(!made.text.includes(`${made.body.id}.`), 'the link secret is never in the answer');
  assert.ok(server.output().includes('"event":"invitation.sent"'), 'an audit line');

  const list = await call('GET', '/invitations');
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.map((i: Json) => i.email), ['newcomer@example.org']);

  const before = (await listInvitations(server.ctx)).length;
  assertApiError(await call('POST', '/invitations', { email: 'not an address' }), 400, ['email']);
  assertApiError(await call('POST', '/invitations', {}), 400, ['email']);
  assertApiError(await call('POST', '/invitations', { email: 'a@example.org', role: 'admin' }), 400, ['role']);
  assertApiError(await call('POST', '/invitations', { email: 42 }), 400, ['email']);
  await createUser(server.ctx, 'taken', 'taken-password-1', { email: 'taken@example.org' });
  assertApiError(await call('POST', '/invitations', { email: 'taken@example.org' }), 409, ['email']);
  assert.equal((await listInvitations(server.ctx)).length, before, 'nothing was made');

  const gone = await call('DELETE', `/invitations/${made.body.id}`);
  assert.equal(gone.status, 204, gone.text);
  assert.ok(!(await call('GET', '/invitations')).body.some((i: Json) => i.id === made.body.id));
  assertApiError(await call('DELETE', `/invitations/${made.body.id}`), 404, ['id']);
  assertApiError(await call('DELETE', '/invitations/nothing-like-it'), 404);
  assert.ok(server.output().includes('"event":"invitation.revoked"'));

  assertApiError(await call('GET', '/invitations', undefined, ''), 401);
  const put = await call('PUT', '/invitations');
  assertApiError(put, 405);
  assert.equal(put.headers.get('allow'), 'GET, HEAD, POST');
});

test('API: a verification link for an unverified user is 202; verified 409; no address 400; unknown user 404; the sixth mail this hour 429', async () => {
  await createUser(server.ctx, 'unsure', 'unsure-password-1', { email: 'unsure@example.org' });
  const sent = await call('POST', '/users/unsure/verification');
  assert.equal(sent.status, 202, sent.text);
  assert.deepEqual(sent.body, { status: 'sent' });
  assert.ok(server.output().includes('"event":"verification.sent"'));
  const byId = await call('POST', `/users/${(await findUserByUsername(server.ctx, 'unsure'))!.id}/verification`, {});
  assert.equal(byId.status, 202, byId.text);
  assertApiError(await call('POST', '/users/unsure/verification', { force: true }), 400, ['force']);

  await createUser(server.ctx, 'sure', 'sure-password-1', { email: 'sure@example.org', emailVerified: true });
  assertApiError(await call('POST', '/users/sure/verification'), 409, ['email_verified']);
  await createUser(server.ctx, 'mute', 'mute-password-1', {});
  assertApiError(await call('POST', '/users/mute/verification'), 400, ['email']);
  assertApiError(await call('POST', '/users/nobody/verification'), 404, ['user']);

  // Two mails so far; three more fit in the hour, the sixth is refused.
  for (let i = 0; i < 3; i++) assert.equal((await call('POST', '/users/unsure/verification')).status, 202);
  assertApiError(await call('POST', '/users/unsure/verification'), 429, ['email']);
});

test('API and console: while sign-up is closed an invitation is refused with the reason; the console says so', async () => {
  const closed = await startApp({ config: { auth: { signup: 'closed' } } });
  try {
    const token = await adminTokenOf(closed);
    const refused = await call('POST', '/invitations', { email: 'someone@example.org' }, token, closed);
    assertApiError(refused, 400, ['signup']);
    assert.match(refused.body.error, /auth\.signup/);
    assert.deepEqual((await call('GET', '/invitations', undefined, token, closed)).body, []);

    await addUser(closed, 'root', 'root-password-1');
    assert.equal((await closed.cli(['user', 'admin', 'root', 'on'])).status, 0);
    const signed = await consoleSignIn(closed, 'root', 'root-password-1');
    const view = await page(closed, signed.jar, '/admin/invitations');
    assert.equal(view.status, 200);
    assert.match(unescapeHtml(view.html), /Sign-up is closed/);
    assert.match(view.html, /auth\.signup: invite/);
    const post = await page(closed, signed.jar, '/admin/invitations', { csrf_token: signed.csrf, email: 'someone@example.org' });
    assert.equal(post.status, 400);
    assert.match(post.html, /sign-up is closed/i);
    assert.deepEqual(await listInvitations(closed.ctx), []);
  } finally {
    await closed.cleanup();
  }
});

test('console: invite, see it listed (address, invited by, expires), revoke after a confirmation page; errors by the field', async () => {
  const list = await page(server, jar, '/admin/invitations');
  assert.equal(list.status, 200);
  assert.match(list.html, /aria-current="page">Invitations</);
  assert.match(unescapeHtml(list.html), /Sign-up is by invitation/);

  const bad = await page(server, jar, '/admin/invitations', { csrf_token: csrf, email: 'nope' });
  assert.equal(bad.status, 400);
  assert.match(bad.html, /id="f-email-error"/);
  assert.match(bad.html, /value="nope"/, 'the input is kept');

  const made = await page(server, jar, '/admin/invitations', { csrf_token: csrf, email: 'guest@example.org' });
  assert.equal(made.status, 303, made.html);
  assert.equal(made.location, '/admin/invitations?done=invited');
  const after = await page(server, jar, made.location!);
  assert.match(after.html, /Invitation sent: the link in the mail works once, for 7 days./);
  assert.match(after.html, /guest@example\.org/);
  assert.match(after.html, />root</, 'invited by the signed-in admin');
  const id = (await listInvitations(server.ctx)).find((i) => i.email === 'guest@example.org')!.id;
  assert.match(after.html, new RegExp(`href="/admin/invitations/${id}/revoke"`));

  const dup = await page(server, jar, '/admin/invitations', { csrf_token: csrf, email: 'taken@example.org' });
  assert.equal(dup.status, 409);

  const confirm = await page(server, jar, `/admin/invitations/${id}/revoke`);
  assert.equal(confirm.status, 200);
  assert.match(confirm.html, /Revoke the invitation/);
  assert.match(confirm.html, /guest@example\.org/);
  const revoked = await page(server, jar, `/admin/invitations/${id}/revoke`, { csrf_token: hiddenField(confirm.html, 'csrf_token') });
  assert.equal(revoked.status, 303);
  assert.ok(!(await listInvitations(server.ctx)).some((i) => i.id === id));
  const again = await page(server, jar, `/admin/invitations/${id}/revoke`, { csrf_token: csrf });
  assert.equal(again.status, 404);
});

test('console: a POST without the form token is 403 and changes nothing (invite, revoke, resend)', async () => {
  const invite = await page(server, jar, '/admin/invitations', { email: 'sneaky@example.org' });
  assert.equal(invite.status, 403);
  const open = await call('POST', '/invitations', { email: 'kept@example.org' });
  assert.equal((await page(server, jar, `/admin/invitations/${open.body.id}/revoke`, { csrf_token: 'forged' })).status, 403);
  assert.ok((await listInvitations(server.ctx)).some((i) => i.id === open.body.id));
  assert.ok(!(await listInvitations(server.ctx)).some((i) => i.email === 'sneaky@example.org'));
  const u = await createUser(server.ctx, 'waiting', 'waiting-password-1', { email: 'waiting@example.org' });
  assert.equal((await page(server, jar, `/admin/users/${u.id}/verification`, {})).status, 403);
});

test("console: an unverified user's page offers a new verification link; the list and the page show the address and its mark", async () => {
  const u = await createUser(server.ctx, 'pending', 'pending-password-1', { email: 'pending@example.org' });
  const users = await page(server, jar, '/admin/users');
  assert.match(users.html, /pending@example\.org/);
  assert.match(users.html, /unverified/);
  const view = await page(server, jar, `/admin/users/${u.id}`);
  assert.match(view.html, /Resend verification link/);
  const sent = await page(server, jar, `/admin/users/${u.id}/verification`, { csrf_token: csrf });
  assert.equal(sent.status, 303);
  const after = await page(server, jar, sent.location!);
  assert.match(unescapeHtml(after.html), /A new verification link was sent to pending@example\.org/);

  const v = await createUser(server.ctx, 'verified', 'verified-password-1', { email: 'v@example.org', emailVerified: true });
  assert.doesNotMatch((await page(server, jar, `/admin/users/${v.id}`)).html, /Resend verification link/);
  const refused = await page(server, jar, `/admin/users/${v.id}/verification`, { csrf_token: csrf });
  assert.equal(refused.status, 409);
  const n = await createUser(server.ctx, 'nomail', 'nomail-password-1', {});
  assert.doesNotMatch((await page(server, jar, `/admin/users/${n.id}`)).html, /Resend verification link/);
});

test('the OpenAPI document lists the new operations', async () => {
  const doc = (await server.json('GET', '/v1/openapi.json')).body;
  assert.ok(doc.paths['/admin/v1/invitations'].post);
  assert.ok(doc.paths['/admin/v1/invitations'].get);
  assert.ok(doc.paths['/admin/v1/invitations/{id}'].delete);
  assert.ok(doc.paths['/admin/v1/users/{user}/verification'].post['responses']['202']);
});

test('API and console: the mail queue, each mail with its status, attempts and last error, never its content', async () => {
  const made = await call('POST', '/invitations', { email: 'mailwatch@example.org' });
  assert.equal(made.status, 201, made.text);
  // A dispatcher whose SMTP server refuses connections: the mail's first attempt fails and waits for its retry.
  const { MailDispatcher } = await import('../src/platform/mail/dispatcher.js');
  const dispatcher = new MailDispatcher({ store: server.ctx.store, settings: { smtp: 'smtp://127.0.0.1:1', from: 'gatehouse <no-reply@localhost>', dataDir: server.dataDir }, sealer: server.ctx.sealer, info: () => {}, warn: () => {} });
  dispatcher.start();
  try {
    let mail: Json | undefined;
    for (let i = 0; i < 100 && !mail?.last_error; i++) {
      const listed = await call('GET', '/mail?status=pending&limit=50');
      assert.equal(listed.status, 200, listed.text);
      mail = listed.body.find((m: Json) => m.recipient === 'mailwatch@example.org');
      if (!mail?.last_error) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(mail?.last_error, 'the failed attempt is recorded');
    assert.deepEqual(Object.keys(mail), ['id', 'kind', 'recipient', 'subject', 'status', 'attempts', 'created_at', 'next_at', 'sent_at', 'last_error']);
    assert.equal(mail.kind, 'invite');
    assert.equal(mail.attempts, 1);
    assert.ok(Date.parse(mail.next_at) > Date.now(), 'retried later');
    assert.ok(!JSON.stringify(mail).includes('signup?invite='), 'no link in the listing');
    assert.deepEqual((await call('GET', '/mail?status=sent')).body.filter((m: Json) => m.recipient === 'mailwatch@example.org'), []);
    const dashboard = await page(server, jar, '/admin');
    assert.match(unescapeHtml(dashboard.html), /Mail not delivered/);
    assert.match(unescapeHtml(dashboard.html), /Retrying at .*invite to mailwatch@example\.org, 1 attempt/);
  } finally {
    await dispatcher.stop();
  }
  assertApiError(await call('GET', '/mail?status=lost'), 400);
  assertApiError(await call('GET', '/mail?colour=red'), 400);
  assertApiError(await call('GET', '/mail', undefined, ''), 401);
});
