// The command line's side of the user's lifecycle by e-mail: `user invite`, `user invitations`,
// `user revoke-invitation`, `user resend-verification`, and the e-mail address in `user list` and
// `user show`. The real CLI (dist/cli/main.js) beside an in-process app on a database file: the
// point is the CLI's own output and exit status.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { runCli, type Json } from './helpers/server.js';
import { createUser } from '../src/authserver/model/users.js';
import { listInvitations } from '../src/authserver/model/lifecycle.js';

let server: InProcessApp;
before(async () => {
  server = await startApp({ file: true, config: { auth: { signup: 'invite' } } });
});
after(async () => server?.cleanup());

/** Runs a command as if stdout were a terminal (a table, not JSON). */
const onTerminal = (app: InProcessApp, args: string[]) =>
  runCli([...args, '--config', app.configFile, '--data-dir', app.dataDir], { env: { NODE_OPTIONS: '--import=data:text/javascript,process.stdout.isTTY=true' } });

test('user invite prints the invitation; user invitations lists it (JSON piped, a table on a terminal); revoke-invitation ends it, twice is an error', async () => {
  const made = await server.cli(['user', 'invite', 'friend@example.org']);
  assert.equal(made.status, 0, made.stderr);
  const invitation = JSON.parse(made.stdout);
  assert.deepEqual(Object.keys(invitation), ['id', 'email', 'created_by', 'created_at', 'expires_at']);
  assert.equal(invitation.email, 'friend@example.org');
  assert.equal(invitation.created_by, null, 'the command line');
  assert.deepEqual((await listInvitations(server.ctx)).map((i) => i.id), [invitation.id], 'the app sees what the CLI wrote');

  const listed = await server.cli(['user', 'invitations']);
  assert.equal(listed.status, 0, listed.stderr);
  assert.deepEqual(JSON.parse(listed.stdout).map((i: Json) => i.id), [invitation.id]);
  const table = onTerminal(server, ['user', 'invitations']);
  assert.equal(table.status, 0, table.stderr);
  assert.match(table.stdout, /^ID\s+EMAIL\s+CREATED_BY\s+EXPIRES_AT\n/);
  assert.match(table.stdout, new RegExp(`${invitation.id}\\s+friend@example\\.org\\s+-\\s+\\d{4}-`));

  const revoked = await server.cli(['user', 'revoke-invitation', invitation.id]);
  assert.equal(revoked.status, 0, revoked.stderr);
  assert.deepEqual(JSON.parse(revoked.stdout), { id: invitation.id, revoked: true });
  assert.deepEqual(JSON.parse((await server.cli(['user', 'invitations'])).stdout), []);
  assert.equal(onTerminal(server, ['user', 'invitations']).stdout, 'no open invitations\n');
  const again = await server.cli(['user', 'revoke-invitation', invitation.id]);
  assert.equal(again.status, 1);
  assert.equal(again.stderr, `gatehouse: there is no open invitation "${invitation.id}" (see \`gatehouse user invitations\`)\n`);
});

test('user invite refuses a bad address and an address that is a user\'s, in one line, exit 1', async () => {
  const bad = await server.cli(['user', 'invite', 'not-an-address']);
  assert.equal(bad.status, 1);
  assert.equal(bad.stdout, '');
  assert.equal(bad.stderr, 'gatehouse: an e-mail address is name@domain, at most 254 characters\n');
  await createUser(server.ctx, 'owner', 'owner-password-1', { email: 'owner@example.org' });
  const taken = await server.cli(['user', 'invite', 'owner@example.org']);
  assert.equal(taken.status, 1);
  assert.equal(taken.stderr, 'gatehouse: a user with the address owner@example.org exists already\n');
});

test('user invite while sign-up is closed: one line naming auth.signup, exit 1, nothing made', async () => {
  const closed = await startApp({ file: true });
  try {
    const r = await closed.cli(['user', 'invite', 'friend@example.org']);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^gatehouse: sign-up is closed \(auth\.signup: closed\): set auth\.signup to invite or open to send invitations\n$/);
    assert.deepEqual(await listInvitations(closed.ctx), []);
  } finally {
    await closed.cleanup();
  }
});

test('user resend-verification: sent for an unverified address; an error for a verified one, none, an unknown user, and past the hourly quota', async () => {
  await createUser(server.ctx, 'newbie', 'newbie-password-1', { email: 'newbie@example.org' });
  const sent = await server.cli(['user', 'resend-verification', 'newbie']);
  assert.equal(sent.status, 0, sent.stderr);
  assert.deepEqual(JSON.parse(sent.stdout), { username: 'newbie', email: 'newbie@example.org', status: 'sent' });
  for (let i = 0; i < 4; i++) assert.equal((await server.cli(['user', 'resend-verification', 'newbie'])).status, 0);
  const over = await server.cli(['user', 'resend-verification', 'newbie']);
  assert.equal(over.status, 1);
  assert.equal(over.stderr, 'gatehouse: newbie@example.org has been sent 5 mails this hour; try again later\n');

  await createUser(server.ctx, 'checked', 'checked-password-1', { email: 'checked@example.org', emailVerified: true });
  const verified = await server.cli(['user', 'resend-verification', 'checked']);
  assert.equal(verified.status, 1);
  assert.equal(verified.stderr, 'gatehouse: the address of checked (checked@example.org) is verified already: nothing was sent\n');
  await createUser(server.ctx, 'silent', 'silent-password-1', {});
  const none = await server.cli(['user', 'resend-verification', 'silent']);
  assert.equal(none.status, 1);
  assert.match(none.stderr, /^gatehouse: silent has no e-mail address: set one with `gatehouse user update silent --email ADDRESS`\n$/);
  const unknown = await server.cli(['user', 'resend-verification', 'ghost']);
  assert.equal(unknown.status, 1);
  assert.equal(unknown.stderr, 'gatehouse: there is no user named "ghost"\n');
});

test('user list and user show carry email and email_verified', async () => {
  await createUser(server.ctx, 'shown', 'shown-password-1', { email: 'shown@example.org', emailVerified: true, name: 'Shown Person' });
  const show = await server.cli(['user', 'show', 'shown']);
  assert.equal(show.status, 0, show.stderr);
  const one = JSON.parse(show.stdout);
  assert.equal(one.email, 'shown@example.org');
  assert.equal(one.email_verified, true);
  assert.equal(one.name, 'Shown Person');
  assert.equal((await server.cli(['user', 'show', 'ghost'])).status, 1);
  const listed = JSON.parse((await server.cli(['user', 'list'])).stdout).find((u: Json) => u.username === 'shown');
  assert.equal(listed.email, 'shown@example.org');
  assert.equal(listed.email_verified, true);
  const table = onTerminal(server, ['user', 'list']);
  assert.match(table.stdout, /^ID\s+USERNAME\s+ADMIN\s+EMAIL\s+EMAIL_VERIFIED\s+CREATED_AT\n/);
  assert.match(table.stdout, /shown\s+false\s+shown@example\.org\s+true\s+\d{4}-/);
});
