// The lifecycle model's races and rules, in process (the mail parts are read back from the outbox
// with the deployment's sealer, as the dispatcher reads them): a link used by two requests at the
// same moment works once; an invitation signs up one account; a reset for a user made by an
// operator; a sign-up's verification link is no good for another address.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { sqlOf } from '../src/platform/store/sql.js';
import { inviteUser, listInvitations, openInvitation, removeStaleSignUps, requestPasswordReset, resetPassword, revokeInvitation, signUp, verifyEmailLink } from '../src/authserver/model/lifecycle.js';
import { createUser, findUserByUsername } from '../src/authserver/model/users.js';
import { signIn } from '../src/authserver/login-throttle.js';

let app: InProcessApp;
before(async () => {
  app = await startApp({ config: { auth: { signup: 'invite' } } });
});
after(async () => app?.cleanup());

/** The token of the newest queued mail to `to` of `kind`, read as the dispatcher reads it. */
async function tokenMailed(to: string, kind: string): Promise<string> {
  const row = await sqlOf(app.ctx.store).selectFrom('mail_outbox').selectAll().where('recipient', '=', to).where('kind', '=', kind).orderBy('created_at', 'desc').limit(1).executeTakeFirstOrThrow();
  const { link } = JSON.parse(app.ctx.sealer.open(row.body!, `mail:${row.id}`)) as { link: string };
  return new URL(link).searchParams.get('token') ?? new URL(link).searchParams.get('invite')!;
}

const log = { warn() {}, info() {}, error() {}, debug() {}, trace() {}, fatal() {}, child() { return log; }, level: 'warn', silent() {} } as never;

test('a reset link used twice at the same moment sets one password', async () => {
  await createUser(app.ctx, 'race', 'race-password-1', { email: 'race@example.com', emailVerified: true });
  await requestPasswordReset(app.ctx, 'race');
  const token = await tokenMailed('race@example.com', 'reset');
  const outcomes = await Promise.all([resetPassword(app.ctx, token, 'first-password-1'), resetPassword(app.ctx, token, 'second-password-2')]);
  assert.equal(outcomes.filter((u) => u !== null).length, 1);
  const winner = outcomes[0] ? 'first-password-1' : 'second-password-2';
  const loser = outcomes[0] ? 'second-password-2' : 'first-password-1';
  assert.ok('user' in (await signIn(app.ctx, log, { username: 'race', password: winner, ip: '10.0.0.1', clientId: null, via: 'account page' })));
  assert.ok('failed' in (await signIn(app.ctx, log, { username: 'race', password: loser, ip: '10.0.0.2', clientId: null, via: 'account page' })));
});

test('an invitation signs up one account, verified, even when two sign-ups race; revoked, it is no longer open', async () => {
  await inviteUser(app.ctx, 'guest@example.com', 'user:admin');
  const token = await tokenMailed('guest@example.com', 'invite');
  assert.equal((await openInvitation(app.ctx, token))?.email, 'guest@example.com');
  const tries = await Promise.allSettled([
    signUp(app.ctx, { username: 'guest1', email: 'ignored@example.com', password: 'guest-password-1', invite: token }),
    signUp(app.ctx, { username: 'guest2', email: 'ignored@example.com', password: 'guest-password-2', invite: token }),
  ]);
  assert.equal(tries.filter((t) => t.status === 'fulfilled').length, 1, JSON.stringify(tries.map((t) => (t.status === 'rejected' ? String(t.reason) : 'ok'))));
  const made = (tries.find((t) => t.status === 'fulfilled') as PromiseFulfilledResult<Awaited<ReturnType<typeof signUp>>>).value.user!;
  assert.equal(made.email, 'guest@example.com', 'the invited address, not the typed one');
  assert.equal(made.emailVerified, true);
  assert.equal(await openInvitation(app.ctx, token), null);

  const other = await inviteUser(app.ctx, 'later@example.com', null);
  assert.ok((await listInvitations(app.ctx)).some((i) => i.id === other.id));
  assert.equal(await revokeInvitation(app.ctx, other.id), true);
  assert.equal(await revokeInvitation(app.ctx, other.id), false);
  assert.ok(!(await listInvitations(app.ctx)).some((i) => i.id === other.id));
  await assert.rejects(inviteUser(app.ctx, 'guest@example.com', null), /exists already/);
  await assert.rejects(inviteUser(app.ctx, 'not an address', null), /e-mail address/);
});

test('without an invitation, invite-only sign-up is refused and makes nothing', async () => {
  await assert.rejects(signUp(app.ctx, { username: 'walkin', email: 'walkin@example.com', password: 'walkin-password-1' }), /sign-up is closed/);
  assert.equal(await findUserByUsername(app.ctx, 'walkin'), null);
  await assert.rejects(signUp(app.ctx, { username: 'walkin', email: 'walkin@example.com', password: 'walkin-password-1', invite: 'abc.def' }), /invitation is not valid/);
});

test('a verification link is for the address it was mailed to: after a change of address it verifies nothing', async () => {
  const open = await startApp({ config: { auth: { signup: 'open' } } });
  try {
    const { user } = await signUp(open.ctx, { username: 'vic', email: 'vic@example.com', password: 'vic-password-1' });
    assert.ok(user);
    const row = await sqlOf(open.ctx.store).selectFrom('mail_outbox').selectAll().where('recipient', '=', 'vic@example.com').executeTakeFirstOrThrow();
    const token = new URL((JSON.parse(open.ctx.sealer.open(row.body!, `mail:${row.id}`)) as { link: string }).link).searchParams.get('token')!;
    assert.ok('unverified' in (await signIn(open.ctx, log, { username: 'vic', password: 'vic-password-1', ip: '10.0.0.3', clientId: null, via: 'account page' })));
    await sqlOf(open.ctx.store).updateTable('users').set({ email: 'other@example.com' }).where('id', '=', user.id).execute();
    assert.equal(await verifyEmailLink(open.ctx, token), null);
    await sqlOf(open.ctx.store).updateTable('users').set({ email: 'vic@example.com' }).where('id', '=', user.id).execute();
    assert.equal((await verifyEmailLink(open.ctx, token))?.outcome, 'verified');
    assert.equal(await verifyEmailLink(open.ctx, token), null, 'once');
    assert.ok('user' in (await signIn(open.ctx, log, { username: 'vic', password: 'vic-password-1', ip: '10.0.0.3', clientId: null, via: 'account page' })));
  } finally {
    await open.cleanup();
  }
});

test('a sign-up never verified is removed after 7 days, with its event; a verified one stays', async () => {
  const open = await startApp({ config: { auth: { signup: 'open' } } });
  try {
    await signUp(open.ctx, { username: 'ghost', email: 'ghost@example.com', password: 'ghost-password-1' });
    await signUp(open.ctx, { username: 'kept', email: 'kept@example.com', password: 'kept-password-1' });
    const row = await sqlOf(open.ctx.store).selectFrom('mail_outbox').selectAll().where('recipient', '=', 'kept@example.com').executeTakeFirstOrThrow();
    const token = new URL((JSON.parse(open.ctx.sealer.open(row.body!, `mail:${row.id}`)) as { link: string }).link).searchParams.get('token')!;
    assert.equal((await verifyEmailLink(open.ctx, token))?.outcome, 'verified');
    assert.equal(await removeStaleSignUps(open.ctx, Date.now() + 6 * 86_400_000), 0, 'not yet');
    assert.equal(await removeStaleSignUps(open.ctx, Date.now() + 8 * 86_400_000), 1);
    assert.equal(await findUserByUsername(open.ctx, 'ghost'), null);
    assert.ok(await findUserByUsername(open.ctx, 'kept'));
    const events = await sqlOf(open.ctx.store).selectFrom('events').select(['type', 'actor']).where('type', '=', 'user.removed').execute();
    assert.equal(events.length, 1);
  } finally {
    await open.cleanup();
  }
});

test('the public forms are throttled: 20 reset requests an hour from one IP, 5 sign-ups an hour for one address; the 429 changes nothing', async () => {
  const { CookieJar, hiddenField, page } = await import('./helpers/oauth.js');
  const open = await startApp({ config: { auth: { signup: 'open' } } });
  try {
    const jar = new CookieJar();
    const csrf = hiddenField((await page(open, jar, '/oauth/reset')).html, 'csrf_token');
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) statuses.push((await page(open, jar, '/oauth/reset', { csrf_token: csrf, login: `someone-${i}` })).status);
    assert.deepEqual(statuses, [...Array(20).fill(200), 429]);

    const signups: number[] = [];
    for (let i = 0; i < 6; i++) {
      const p = await page(open, jar, '/oauth/signup', { csrf_token: csrf, username: `flood${i}`, email: 'Flooded@Example.com', password: 'flood-password-1' });
      signups.push(p.status);
      if (p.status === 429) assert.ok(p.headers.get('retry-after'));
    }
    assert.deepEqual(signups, [200, 200, 200, 200, 200, 429]);
    assert.equal(await findUserByUsername(open.ctx, 'flood5'), null, 'the refused sign-up made nothing');
    // Sign-up made the first account and its event; the others found the address taken.
    const created = await sqlOf(open.ctx.store).selectFrom('events').select(['type', 'actor', 'record_id']).where('type', '=', 'user.created').execute();
    assert.equal(created.length, 1);
    assert.equal(created[0].actor, `user:${created[0].record_id}`);
  } finally {
    await open.cleanup();
  }
});

test('verification is a user.updated event with the address verified', async () => {
  const open = await startApp({ config: { auth: { signup: 'open' } } });
  try {
    const { user } = await signUp(open.ctx, { username: 'evie', email: 'evie@example.com', password: 'evie-password-1' });
    const row = await sqlOf(open.ctx.store).selectFrom('mail_outbox').selectAll().where('recipient', '=', 'evie@example.com').executeTakeFirstOrThrow();
    const token = new URL((JSON.parse(open.ctx.sealer.open(row.body!, `mail:${row.id}`)) as { link: string }).link).searchParams.get('token')!;
    await verifyEmailLink(open.ctx, token);
    const updated = await sqlOf(open.ctx.store).selectFrom('events').select(['data']).where('type', '=', 'user.updated').where('record_id', '=', user!.id).execute();
    assert.equal(updated.length, 1);
    assert.equal(JSON.parse(updated[0].data!).email_verified, true);
  } finally {
    await open.cleanup();
  }
});
