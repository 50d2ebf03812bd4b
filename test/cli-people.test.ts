// The command line for people: --version, usage errors in two lines, tables on a terminal and JSON
// otherwise, `grant list` / `grant revoke` and `user passwd` against a running server.
// Spawned server (test/helpers/server.ts), not in process: the CLI's own output and exit status, beside a running server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { CLI, DEMO_CONFIG_FILE, ROOT, createPgDatabase, pgAvailable, runCli, startServer, tempDir, type Json, type TestServer } from './helpers/server.js';
import pg from 'pg';
import { addClient, addUser, basic, post, sleep, type RegisteredClient } from './helpers/oauth.js';
import { asBearer } from './helpers/tokens.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

/** Runs a command as if stdout were a terminal (process.stdout.isTTY set before the CLI loads). */
function onTerminal(args: string[]) {
  return runCli([...args, '--config', server.configFile, '--data-dir', server.dataDir], {
    env: { ...server.env, NODE_OPTIONS: '--import=data:text/javascript,process.stdout.isTTY=true' },
  });
}

/** Polls until `check` holds, for at most `ms`. */
async function within(ms: number, what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: still not the case after ${ms} ms`);
    await sleep(50);
  }
}

function passwordLogin(client: RegisteredClient, username: string, password: string) {
  return post(server, 'token', { grant_type: 'password', username, password, scope: 'zoos:read zoos:write' }, { auth: basic(client.client_id, client.client_secret!) });
}

const GRANT_FIELDS = ['id', 'subject', 'client_id', 'scope', 'created_at', 'expires_at', 'last_used_at'];

test('--version prints the version of package.json', () => {
  const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  for (const flag of ['--version', '-V']) {
    const r = runCli([flag]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${version}\n`);
  }
});

test('a usage error prints the problem and the usage line of that command, exit 1; --help prints the whole help', () => {
  const cases: [string[], RegExp, string][] = [
    [['user', 'list', '--bogus'], /^gatehouse: unknown option '--bogus'$/, 'usage: gatehouse user list [options]'],
    [['user', 'add', 'x', '--pasword', 'y'], /^gatehouse: unknown option '--pasword' \(did you mean --password\?\)$/, 'usage: gatehouse user add [options] <username>'],
    [['user', 'passwd'], /^gatehouse: missing required argument 'username'$/, 'usage: gatehouse user passwd [options] <username>'],
    [['grant', 'revoke'], /^gatehouse: missing required argument 'grant_id'$/, 'usage: gatehouse grant revoke [options] <grant_id>'],
    [['frobnicate'], /^gatehouse: unknown command 'frobnicate'$/, 'usage: gatehouse [options] [command]'],
    [['grant', 'lst'], /^gatehouse: unknown command 'lst' \(did you mean list\?\)$/, 'usage: gatehouse grant [options] [command]'],
    [['serve', '--port', 'abc'], /^gatehouse: option '--port <n>' argument 'abc' is invalid\. must be a port number/, 'usage: gatehouse serve [options]'],
  ];
  for (const [args, problem, usage] of cases) {
    const r = runCli(args);
    assert.equal(r.status, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 2, `two lines for ${args.join(' ')}:\n${r.stderr}`);
    assert.match(lines[0], problem);
    assert.equal(lines[1], usage);
  }
  const help = runCli(['grant', 'list', '--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^Usage: gatehouse grant list \[options\]/);
  assert.match(help.stdout, /--user <username>/);
  assert.match(help.stdout, /--json/);
});

test('list commands: a table on a terminal, JSON when piped or with --json', () => {
  addUser(server, 'tabby', 'tabby-password-1');
  addClient(server, 'table-app', ['--grant', 'client_credentials']);

  const users = onTerminal(['user', 'list']);
  assert.equal(users.status, 0, users.stderr);
  const [header, ...rows] = users.stdout.trimEnd().split('\n');
  assert.match(header, /^ID +USERNAME +ADMIN +EMAIL +EMAIL_VERIFIED +CREATED_AT$/);
  assert.ok(rows.some((r) => /^\S+ +tabby +false +- +false +\d{4}-/.test(r)), users.stdout);

  const clients = onTerminal(['client', 'list']);
  assert.equal(clients.status, 0, clients.stderr);
  assert.match(clients.stdout, /^CLIENT_ID +NAME +TYPE +GRANT_TYPES +SCOPE +TOKEN_TYPE +CREATED_AT\n/);
  assert.match(clients.stdout, /\ntable-app +table-app +confidential +client_credentials +\(every scope\) +bearer +\d{4}-/);

  const grants = onTerminal(['grant', 'list']);
  assert.equal(grants.status, 0, grants.stderr);
  assert.ok(/^ID +SUBJECT +CLIENT_ID +SCOPE +CREATED_AT +EXPIRES_AT +LAST_USED_AT\n/.test(grants.stdout) || grants.stdout === 'no live grants\n', grants.stdout);

  for (const args of [['user', 'list'], ['client', 'list'], ['grant', 'list']]) {
    const piped = server.cli(args);
    assert.equal(piped.status, 0, piped.stderr);
    assert.ok(Array.isArray(JSON.parse(piped.stdout)), `${args.join(' ')} piped is JSON`);
    const forced = onTerminal([...args, '--json']);
    assert.equal(forced.status, 0, forced.stderr);
    assert.deepEqual(JSON.parse(forced.stdout), JSON.parse(piped.stdout), `${args.join(' ')} --json on a terminal`);
  }
});

test('grant list: the live grants with the fields the admin API shows (GRANT_FIELDS), by user and by client; unknown ones are errors', async () => {
  const gina = addUser(server, 'gina', 'gina-password-1');
  const hank = addUser(server, 'hank', 'hank-password-1');
  const app = addClient(server, 'grant-app', ['--grant', 'password', '--grant', 'refresh_token']);
  const other = addClient(server, 'grant-other', ['--grant', 'password']);
  for (const [client, user, pw] of [[app, 'gina', 'gina-password-1'], [app, 'hank', 'hank-password-1'], [other, 'gina', 'gina-password-1']] as const)
    assert.equal((await passwordLogin(client, user, pw)).status, 200);

  const list = (args: string[]): Json[] => {
    const r = server.cli(['grant', 'list', ...args]);
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  const byGina = list(['--user', 'gina']);
  assert.equal(byGina.length, 2);
  for (const g of byGina) {
    assert.deepEqual(Object.keys(g), GRANT_FIELDS);
    assert.equal(g.subject, `user:${gina.id}`);
    assert.equal(g.scope, 'zoos:read zoos:write');
    assert.ok(Date.parse(g.expires_at) > Date.parse(g.created_at));
    assert.ok(g.last_used_at !== null, 'a token was issued from it');
  }
  assert.deepEqual(byGina.map((g) => g.client_id).sort(), ['grant-app', 'grant-other']);
  assert.deepEqual(list(['--client', 'grant-app']).map((g) => g.subject).sort(), [`user:${gina.id}`, `user:${hank.id}`].sort());
  const both = list(['--user', 'gina', '--client', 'grant-other']);
  assert.equal(both.length, 1);
  assert.equal(both[0].client_id, 'grant-other');
  assert.ok(list([]).length >= 3);

  const noUser = server.cli(['grant', 'list', '--user', 'nobody']);
  assert.equal(noUser.status, 1);
  assert.equal(noUser.stderr, 'gatehouse: --user: there is no user named "nobody"\n');
  const noClient = server.cli(['grant', 'list', '--client', 'nothing']);
  assert.equal(noClient.status, 1);
  assert.equal(noClient.stderr, 'gatehouse: --client: there is no client "nothing"\n');
  assert.equal(noClient.stdout, '');
});

test('grant revoke: the grant’s tokens get 401 within a second, its refresh token is refused; twice or unknown is an error', async () => {
  addUser(server, 'rita', 'rita-password-1');
  addUser(server, 'sam', 'sam-password-1');
  const app = addClient(server, 'revoke-app', ['--grant', 'password', '--grant', 'refresh_token']);
  const rita = await passwordLogin(app, 'rita', 'rita-password-1');
  const sam = await passwordLogin(app, 'sam', 'sam-password-1');
  const ritaApi = asBearer(server, rita.body.access_token);
  const samApi = asBearer(server, sam.body.access_token);
  assert.equal((await ritaApi.json('GET', '/v1/zoos')).status, 200, 'the token works (and is cached by the server)');

  const [grant] = JSON.parse(server.cli(['grant', 'list', '--user', 'rita']).stdout);
  const r = server.cli(['grant', 'revoke', grant.id]);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { id: grant.id, subject: grant.subject, client_id: 'revoke-app', revoked: true });

  await within(1500, 'the revoked grant’s token is refused', async () => (await ritaApi.json('GET', '/v1/zoos')).status === 401);
  const refreshed = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: rita.body.refresh_token }, { auth: basic(app.client_id, app.client_secret!) });
  assert.equal(refreshed.status, 400);
  assert.equal(refreshed.body.error, 'invalid_grant');
  assert.equal((await samApi.json('GET', '/v1/zoos')).status, 200, 'other grants are untouched');
  assert.deepEqual(JSON.parse(server.cli(['grant', 'list', '--user', 'rita']).stdout), []);

  const twice = server.cli(['grant', 'revoke', grant.id]);
  assert.equal(twice.status, 1);
  assert.equal(twice.stderr, `gatehouse: grant "${grant.id}" is already revoked\n`);
  const unknown = server.cli(['grant', 'revoke', 'no-such-grant']);
  assert.equal(unknown.status, 1);
  assert.equal(unknown.stderr, 'gatehouse: there is no grant "no-such-grant"\n');
  assert.equal(unknown.stdout, '');
});

test('user passwd: the old password is refused at the token endpoint, the new one works; same rules as user add', async () => {
  const pat = addUser(server, 'pat', 'pat-password-old');
  const app = addClient(server, 'passwd-app', ['--grant', 'password']);
  const before = await passwordLogin(app, 'pat', 'pat-password-old');
  assert.equal(before.status, 200);

  const changed = server.cli(['user', 'passwd', 'pat', '--password', 'pat-password-new']);
  assert.equal(changed.status, 0, changed.stderr);
  const out = JSON.parse(changed.stdout);
  assert.equal(out.id, pat.id);
  assert.equal(out.password_changed, true);
  assert.doesNotMatch(changed.stdout, /pat-password-new|argon2/);
  const old = await passwordLogin(app, 'pat', 'pat-password-old');
  assert.equal(old.status, 400);
  assert.equal(old.body.error, 'invalid_grant');
  assert.equal((await passwordLogin(app, 'pat', 'pat-password-new')).status, 200);
  assert.equal((await asBearer(server, before.body.access_token).json('GET', '/v1/zoos')).status, 200, 'the grants the user gave stay');

  // --password-stdin, and standard input when piped without an option.
  assert.equal(server.cli(['user', 'passwd', 'pat', '--password-stdin'], 'pat-password-stdin\n').status, 0);
  assert.equal((await passwordLogin(app, 'pat', 'pat-password-stdin')).status, 200);
  assert.equal(server.cli(['user', 'passwd', 'pat'], 'pat-password-piped\n').status, 0);
  assert.equal((await passwordLogin(app, 'pat', 'pat-password-piped')).status, 200);
  assert.equal((await passwordLogin(app, 'pat', 'pat-password-stdin')).status, 400);

  const refusals: [string[], string | undefined, string][] = [
    [['user', 'passwd', 'pat', '--password', 'short'], undefined, 'gatehouse: the password must have at least 8 characters\n'],
    [['user', 'passwd', 'pat'], '', 'gatehouse: the password must have at least 8 characters\n'],
    [['user', 'passwd', 'nobody', '--password', 'long-enough-1'], undefined, 'gatehouse: there is no user named "nobody"\n'],
    [['user', 'passwd', 'pat', '--password', 'long-enough-1', '--password-stdin'], 'x', 'gatehouse: use --password or --password-stdin, not both\n'],
  ];
  for (const [args, input, stderr] of refusals) {
    const r = server.cli(args, input);
    assert.equal(r.status, 1, args.join(' '));
    assert.equal(r.stderr, stderr, args.join(' '));
  }
  assert.equal((await passwordLogin(app, 'pat', 'pat-password-piped')).status, 200, 'unchanged by the refusals');
});

const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Runs `user passwd` on a pseudo-terminal (script(1)), typing each answer once its prompt is shown. */
function passwdOnTerminal(username: string, answers: string[]): Promise<{ status: number | null; output: string }> {
  const command = [process.execPath, CLI, 'user', 'passwd', username, '--config', server.configFile, '--data-dir', server.dataDir].map(quote).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env: server.env as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  let answered = 0;
  const onData = (d: Buffer) => {
    output += d.toString();
    const prompts = output.match(/New password( again)?: /g)?.length ?? 0;
    while (answered < prompts && answered < answers.length) child.stdin.write(`${answers[answered++]}\r`);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (status) => {
      clearTimeout(timer);
      child.stdin.end();
      resolve({ status, output });
    });
  });
}

test('user passwd on a terminal asks twice without echo; two different answers change nothing', { skip: !hasScript && 'script(1) is not installed' }, async () => {
  addUser(server, 'tess', 'tess-password-old');
  const app = addClient(server, 'tty-app', ['--grant', 'password']);

  const differ = await passwdOnTerminal('tess', ['tess-password-one', 'tess-password-two']);
  assert.equal(differ.status, 1, differ.output);
  assert.match(differ.output, /the two passwords differ; nothing was changed/);
  assert.equal((await passwordLogin(app, 'tess', 'tess-password-old')).status, 200);

  const typed = await passwdOnTerminal('tess', ['tess-password-typed', 'tess-password-typed']);
  assert.equal(typed.status, 0, typed.output);
  assert.match(typed.output, /New password: \r?\nNew password again: /);
  assert.match(typed.output, /"password_changed": true/);
  assert.doesNotMatch(typed.output, /tess-password-typed/, 'not echoed');
  assert.equal((await passwordLogin(app, 'tess', 'tess-password-typed')).status, 200);
  assert.equal((await passwordLogin(app, 'tess', 'tess-password-old')).status, 400);
});

test('without a database where it points, a command other than serve and migrate exits 2 naming the path, and creates nothing', async () => {
  const empty = tempDir();
  try {
    for (const args of [['user', 'list'], ['user', 'add', 'nobody', '--password', 'nobody-password-1'], ['client', 'list'], ['grant', 'list'], ['keys', 'rotate'], ['maintenance', 'on']]) {
      const r = runCli([...args, '--config', DEMO_CONFIG_FILE, '--data-dir', path.join(empty, 'data')]);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      const where = path.join(empty, 'data', 'gatehouse.db');
      assert.ok(r.stderr.startsWith(`gatehouse: no gatehouse database at SQLite ${where}: nothing was done, and no database was created.\n`), r.stderr);
      assert.match(r.stderr, /--data-dir DIR or --config FILE/);
      assert.match(r.stderr, /`gatehouse migrate` \(or `gatehouse serve`\) creates a new database/);
    }
    assert.deepEqual(readdirSync(empty), [], 'not even the data folder');
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});

test('on PostgreSQL, a database gatehouse has not made is left as it was', { skip: !pgAvailable && 'PostgreSQL is not available' }, async () => {
  const db = await createPgDatabase();
  try {
    const r = runCli(['user', 'list', '--config', DEMO_CONFIG_FILE], { env: { DATABASE_URL: db.url } });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^gatehouse: no gatehouse database at PostgreSQL postgres:\/\/\S+: nothing was done/);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const tables = await client.query("select table_name from information_schema.tables where table_schema = 'public'");
    await client.end();
    assert.deepEqual(tables.rows, [], 'no table created');
  } finally {
    await db.drop();
  }
});

test('on a terminal, a command names the database it used on stderr; piped, it does not', () => {
  const args = ['user', 'list', '--json', '--config', server.configFile, '--data-dir', server.dataDir];
  const tty = runCli(args, { env: { ...server.env, NODE_OPTIONS: '--import=data:text/javascript,process.stderr.isTTY=true' } });
  assert.equal(tty.status, 0, tty.stderr);
  assert.equal(tty.stderr, `gatehouse: database SQLite ${path.join(server.dataDir, 'gatehouse.db')}\n`);
  const piped = runCli(args, { env: server.env });
  assert.equal(piped.stderr, '');
  assert.deepEqual(JSON.parse(piped.stdout), JSON.parse(tty.stdout));
});
