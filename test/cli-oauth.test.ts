// gatehouse user / client / keys: the CLI of docs/oauth.md#users-and-clients, checked against the database it writes.
// The real CLI as processes (runCli in test/helpers/server.ts): its output and exit status are the point.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { DEMO_CONFIG_FILE, runCli, tempDir } from './helpers/server.js';

let dataDir: string;
const cli = (args: string[], input?: string) => runCli([...args, '--config', DEMO_CONFIG_FILE, '--data-dir', dataDir], { input });
const db = () => new Database(path.join(dataDir, 'gatehouse.db'), { readonly: true });

before(() => {
  dataDir = tempDir();
  // The commands other than serve and migrate never create the database (cli-people.test.ts).
  const migrated = cli(['migrate']);
  assert.equal(migrated.status, 0, migrated.stderr);
});
after(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

test('user add: --password, --password-stdin, or a generated password printed once; stored as argon2id', () => {
  const a = cli(['user', 'add', 'ann', '--password', 'ann-password-1']);
  assert.equal(a.status, 0, a.stderr);
  const ann = JSON.parse(a.stdout);
  assert.equal(ann.username, 'ann');
  assert.equal(ann.subject, `user:${ann.id}`);
  assert.equal(ann.password, undefined);

  const b = cli(['user', 'add', 'ben', '--password-stdin'], 'ben-password-1\n');
  assert.equal(b.status, 0, b.stderr);

  const c = cli(['user', 'add', 'cat']);
  assert.equal(c.status, 0, c.stderr);
  const generated = JSON.parse(c.stdout).password;
  assert.ok(generated.length >= 20);

  const conn = db();
  const rows = conn.prepare('select username, password_hash from users order by username').all() as { username: string; password_hash: string }[];
  conn.close();
  assert.deepEqual(rows.map((r) => r.username), ['ann', 'ben', 'cat']);
  for (const r of rows) assert.match(r.password_hash, /^\$argon2id\$/);
  assert.ok(!rows.some((r) => r.password_hash.includes(generated) || r.password_hash.includes('ann-password-1')));

  const list = cli(['user', 'list']);
  assert.equal(list.status, 0);
  assert.doesNotMatch(list.stdout, /argon2|password/);
});

test('user add refuses duplicates, bad names, short passwords and two password sources', () => {
  for (const args of [
    ['user', 'add', 'ann', '--password', 'another-pass'],
    ['user', 'add', 'bad name', '--password', 'whatever-1'],
    ['user', 'add', 'dan', '--password', 'short'],
    ['user', 'add', 'eve', '--password', 'eve-password', '--password-stdin'],
  ]) {
    const r = cli(args, 'x');
    assert.equal(r.status, 1, args.join(' '));
    assert.match(r.stderr, /^gatehouse: /);
  }
});

test('client add: prints the client with a generated secret once; only its SHA-256 is stored', () => {
  const r = cli(['client', 'add', 'shop', '--redirect-uri', 'https://shop.example/cb', '--redirect-uri', 'http://127.0.0.1:9000/cb', '--grant', 'authorization_code', '--grant', 'refresh_token', '--scope', 'orders:write  orders:read', '--name', 'The Shop']);
  assert.equal(r.status, 0, r.stderr);
  const shop = JSON.parse(r.stdout);
  assert.equal(shop.client_id, 'shop');
  assert.equal(shop.name, 'The Shop');
  assert.equal(shop.type, 'confidential');
  assert.deepEqual(shop.redirect_uris, ['https://shop.example/cb', 'http://127.0.0.1:9000/cb']);
  assert.deepEqual(shop.grant_types, ['authorization_code', 'refresh_token']);
  assert.equal(shop.scope, 'orders:read orders:write');
  assert.equal(shop.token_type, 'bearer');
  assert.match(shop.client_secret, /^[A-Za-z0-9_-]{43}$/);

  const conn = db();
  const row = conn.prepare('select * from clients where id = ?').get('shop') as { secret_hash: string; public: number };
  conn.close();
  assert.equal(row.secret_hash, createHash('sha256').update(shop.client_secret).digest('base64url'));
  assert.equal(row.public, 0);

  const list = cli(['client', 'list']);
  assert.equal(list.status, 0);
  assert.equal(list.stdout.includes(shop.client_secret), false);
  assert.equal(list.stdout.includes(row.secret_hash), false);
  assert.equal(JSON.parse(list.stdout)[0].client_id, 'shop');
});

test('client add: --secret, --public, --token-type mac, and every scope when --scope is absent', () => {
  const chosen = cli(['client', 'add', 'svc', '--secret', 'a-long-chosen-secret-value-of-40-characters', '--grant', 'client_credentials', '--token-type', 'mac']);
  assert.equal(chosen.status, 0, chosen.stderr);
  const svc = JSON.parse(chosen.stdout);
  assert.equal(svc.client_secret, 'a-long-chosen-secret-value-of-40-characters');
  assert.equal(svc.token_type, 'mac');
  assert.equal(svc.scope, null);
  const pub = cli(['client', 'add', 'mobile', '--public', '--grant', 'authorization_code', '--redirect-uri', 'com.example.app:/oauth']);
  assert.equal(pub.status, 0, pub.stderr);
  const mobile = JSON.parse(pub.stdout);
  assert.equal(mobile.type, 'public');
  assert.equal(mobile.client_secret, undefined);
});

test('client add --introspect (a resource server) and --require-pkce: stored, printed, listed; a public client cannot introspect', () => {
  const made = cli(['client', 'add', 'rs', '--grant', 'client_credentials', '--introspect', '--require-pkce']);
  assert.equal(made.status, 0, made.stderr);
  const rs = JSON.parse(made.stdout);
  assert.equal(rs.introspect, true);
  assert.equal(rs.require_pkce, true);
  const listed = JSON.parse(cli(['client', 'list', '--json']).stdout) as { client_id: string; introspect: boolean; require_pkce: boolean }[];
  assert.equal(listed.find((c) => c.client_id === 'rs')!.introspect, true);
  assert.equal(listed.find((c) => c.client_id === 'shop')!.introspect, false);
  assert.equal(listed.find((c) => c.client_id === 'shop')!.require_pkce, false);
  const conn = db();
  const row = conn.prepare('select introspect, require_pkce from clients where id = ?').get('rs');
  conn.close();
  assert.deepEqual(row, { introspect: 1, require_pkce: 1 });
  const pub = cli(['client', 'add', 'rs-pub', '--public', '--grant', 'password', '--introspect']);
  assert.equal(pub.status, 1);
  assert.match(pub.stderr, /--introspect: a public client cannot introspect/);
  assert.equal(cli(['client', 'remove', 'rs']).status, 0);
});

test('client add refuses what cannot work or would be unsafe', () => {
  const cases: [string[], RegExp][] = [
    [['client', 'add', 'shop', '--grant', 'client_credentials'], /already exists/],
    [['client', 'add', 'x1', '--grant', 'authorization_code'], /redirect-uri/],
    [['client', 'add', 'x2', '--grant', 'teleport'], /--grant: teleport is not one of/],
    [['client', 'add', 'x3'], /--grant: give at least one grant/],
    [['client', 'add', 'x4', '--public', '--grant', 'client_credentials'], /public client cannot use client_credentials/],
    [['client', 'add', 'x5', '--public', '--secret', 'abcdefghijklmnopq', '--grant', 'password'], /--secret: a public client has no secret/],
    [['client', 'add', 'x12', '--secret', 'only-31-characters-long-secret!', '--grant', 'client_credentials'], /--secret: must have at least 32 characters/],
    [['client', 'add', 'x6', '--grant', 'implicit', '--redirect-uri', 'https://a.example/cb#frag'], /fragment/],
    [['client', 'add', 'x7', '--grant', 'implicit', '--redirect-uri', 'http://a.example/cb'], /plain http/],
    [['client', 'add', 'x8', '--grant', 'implicit', '--redirect-uri', 'not a uri'], /absolute/],
    [['client', 'add', 'x9', '--grant', 'implicit', '--redirect-uri', 'javascript:alert(1)'], /not allowed/],
    [['client', 'add', 'x10', '--grant', 'password', '--scope', 'penguins:read'], /unknown scope penguins:read/],
    [['client', 'add', 'x11', '--grant', 'password', '--token-type', 'jwt'], /bearer or mac/],
    [['client', 'add', 'bad id!', '--grant', 'password'], /client id/],
  ];
  for (const [args, message] of cases) {
    const r = cli(args);
    assert.equal(r.status, 1, `${args.join(' ')}: ${r.stdout}`);
    assert.match(r.stderr, message, args.join(' '));
  }
  const conn = db();
  const ids = (conn.prepare('select id from clients order by id').all() as { id: string }[]).map((r) => r.id);
  conn.close();
  assert.deepEqual(ids, ['mobile', 'shop', 'svc']);
});

test('keys rotate makes a new current key and keeps the old one for verification', () => {
  const before = cli(['keys', 'rotate']);
  assert.equal(before.status, 0, before.stderr);
  const { key_id } = JSON.parse(before.stdout);
  const conn = db();
  const keys = conn.prepare('select id, retired_at from signing_keys order by created_at').all() as { id: string; retired_at: number | null }[];
  conn.close();
  assert.ok(keys.length >= 2);
  assert.equal(keys.at(-1)!.id, key_id);
  assert.equal(keys.at(-1)!.retired_at, null);
  assert.ok(keys.slice(0, -1).every((k) => k.retired_at !== null));
});

test('client add --require-par, client update --require-par / --no-require-par, client show (RFC 9126)', () => {
  const made = cli(['client', 'add', 'par-cli', '--grant', 'authorization_code', '--redirect-uri', 'https://par.example/cb', '--require-par']);
  assert.equal(made.status, 0, made.stderr);
  assert.equal(JSON.parse(made.stdout).require_pushed_authorization_requests, true);
  const off = cli(['client', 'update', 'par-cli', '--no-require-par']);
  assert.equal(off.status, 0, off.stderr);
  assert.equal(JSON.parse(off.stdout).require_pushed_authorization_requests, false);
  const unchanged = cli(['client', 'update', 'par-cli']);
  assert.equal(JSON.parse(unchanged.stdout).require_pushed_authorization_requests, false, 'no flag: no change');
  assert.equal(JSON.parse(cli(['client', 'update', 'par-cli', '--require-par']).stdout).require_pushed_authorization_requests, true);
  const shown = cli(['client', 'show', 'par-cli']);
  assert.equal(shown.status, 0, shown.stderr);
  assert.equal(JSON.parse(shown.stdout).require_pushed_authorization_requests, true);
  assert.equal(JSON.parse(shown.stdout).client_secret, undefined);
  const listed = JSON.parse(cli(['client', 'list', '--json']).stdout) as { client_id: string; require_pushed_authorization_requests: boolean }[];
  assert.equal(listed.find((c) => c.client_id === 'par-cli')!.require_pushed_authorization_requests, true);
  const conn = db();
  assert.deepEqual(conn.prepare('select require_par from clients where id = ?').get('par-cli'), { require_par: 1 });
  conn.close();
  const missing = cli(['client', 'update', 'nobody', '--require-par']);
  assert.notEqual(missing.status, 0);
  assert.match(missing.stderr, /no client "nobody"/);
  assert.notEqual(cli(['client', 'show', 'nobody']).status, 0);
});
