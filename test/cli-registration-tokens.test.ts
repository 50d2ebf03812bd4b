// The command line's initial access tokens of dynamic client registration: `client
// registration-token` (printed once), `client registration-tokens`, `client
// revoke-registration-token`. The real CLI (dist/cli/main.js) beside an in-process app on a
// database file: the point is the CLI's own output and exit status, and that the app accepts
// what the CLI made.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { runCli, type Json } from './helpers/server.js';

let server: InProcessApp;
before(async () => {
  server = await startApp({ file: true, config: { auth: { registration: 'token' } } });
});
after(async () => server?.cleanup());

const onTerminal = (args: string[]) =>
  runCli([...args, '--config', server.configFile, '--data-dir', server.dataDir], { env: { NODE_OPTIONS: '--import=data:text/javascript,process.stdout.isTTY=true' } });
const registerWith = (token: string) => server.json('POST', '/oauth/register', { redirect_uris: ['https://rp.example/cb'] }, { authorization: `Bearer ${token}` });

test('registration-token prints the token once; the app registers a client with it; registration-tokens lists it without the token; revoke ends it, twice is an error', async () => {
  const made = await server.cli(['client', 'registration-token', '--ttl', '3600', '--uses', '2']);
  assert.equal(made.status, 0, made.stderr);
  const token = JSON.parse(made.stdout);
  assert.deepEqual(Object.keys(token), ['id', 'created_by', 'created_at', 'expires_at', 'uses_left', 'token']);
  assert.equal(token.uses_left, 2);
  assert.equal(token.created_by, null, 'the command line');
  assert.ok(token.token.startsWith(`${token.id}.`));

  assert.equal((await registerWith(token.token)).status, 201);

  const listed = await server.cli(['client', 'registration-tokens']);
  assert.equal(listed.status, 0, listed.stderr);
  const rows = JSON.parse(listed.stdout);
  assert.deepEqual(rows.map((t: Json) => [t.id, t.uses_left]), [[token.id, 1]]);
  assert.equal(listed.stdout.includes(token.token), false);
  const table = onTerminal(['client', 'registration-tokens']);
  assert.equal(table.status, 0, table.stderr);
  assert.match(table.stdout, /^ID\s+CREATED_AT\s+EXPIRES_AT\s+USES_LEFT\n/);

  const revoked = await server.cli(['client', 'revoke-registration-token', token.id]);
  assert.equal(revoked.status, 0, revoked.stderr);
  assert.deepEqual(JSON.parse(revoked.stdout), { id: token.id, revoked: true });
  assert.equal((await registerWith(token.token)).status, 401);
  assert.equal(onTerminal(['client', 'registration-tokens']).stdout, 'no registration tokens\n');
  const again = await server.cli(['client', 'revoke-registration-token', token.id]);
  assert.equal(again.status, 1);
  assert.equal(again.stderr, `gatehouse: there is no registration token "${token.id}" (see \`gatehouse client registration-tokens\`)\n`);
});

test('registration-token defaults to one use for a day; bad --ttl or --uses is one line naming the flag, exit 1, nothing made', async () => {
  const made = await server.cli(['client', 'registration-token']);
  assert.equal(made.status, 0, made.stderr);
  const token = JSON.parse(made.stdout);
  assert.equal(token.uses_left, 1);
  assert.ok(Math.abs(Date.parse(token.expires_at) - Date.parse(token.created_at) - 86_400_000) < 1000);
  for (const [args, message] of [
    [['--ttl', '5'], /^gatehouse: --ttl: must be a whole number of seconds from 60 to 2592000 \(30 days\)\n$/],
    [['--uses', '0'], /^gatehouse: --uses: must be a whole number from 1 to 1000\n$/],
    [['--uses', 'lots'], /--uses.*must be a whole number/],
  ] as [string[], RegExp][]) {
    const r = await server.cli(['client', 'registration-token', ...args]);
    assert.equal(r.status, 1, args.join(' '));
    assert.equal(r.stdout, '');
    assert.match(r.stderr, message);
  }
  assert.equal(JSON.parse((await server.cli(['client', 'registration-tokens'])).stdout).length, 1);
});

test('client update --verified: the operator vouches for a client that registered itself; other changes leave the mark as it is', async () => {
  const made = JSON.parse((await server.cli(['client', 'registration-token'])).stdout);
  const registered = await registerWith(made.token);
  assert.equal(registered.status, 201);
  const id = registered.body.client_id;
  const verified = await server.cli(['client', 'update', id, '--verified']);
  assert.equal(verified.status, 0, verified.stderr);
  assert.equal(JSON.parse(verified.stdout).verified, true);
  const par = await server.cli(['client', 'update', id, '--require-par']);
  assert.equal(JSON.parse(par.stdout).verified, true, 'not touched by another flag');
  const unverified = await server.cli(['client', 'update', id, '--no-verified']);
  assert.equal(JSON.parse(unverified.stdout).verified, false);
});
