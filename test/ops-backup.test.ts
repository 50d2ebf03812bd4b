// gatehouse backup / restore: an online SQLite snapshot while a server keeps writing, restored into
// another data dir; what restore refuses; and the PostgreSQL answers (pg_dump / pg_restore).
// Spawned server (test/helpers/server.ts), not in process: the CLI backs up while a server keeps writing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { CLI, ROOT, TEST_DATABASE_URL, createPgDatabase, pgAvailable, runCli, startServer, tempDir, testConfig, writeConfig, type RunResult } from './helpers/server.js';
import { apiClient } from './helpers/tokens.js';

/** Runs a CLI command without blocking this process (the writes go on meanwhile). */
function runCliAsync(args: string[], env: Record<string, string | undefined> = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn', ...env } as NodeJS.ProcessEnv });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.once('error', reject);
    child.once('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

function countRows(file: string, table: string): number {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

test('backup while a server writes; restored elsewhere, a server there has every record acknowledged before the backup began', async () => {
  const server = await startServer({ config: { api: { rateLimit: null } } });
  const elsewhere = tempDir('gatehouse-restored-');
  let restored: Awaited<ReturnType<typeof startServer>> | null = null;
  try {
    const api = await apiClient(server, 'backup-writer', 'zoos:read zoos:write');
    const acked: string[] = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const res = await api.json('POST', '/v1/zoos', { name: `Zoo ${i}` });
        assert.equal(res.status, 201);
        acked.push(res.body.id);
      }
    })();
    while (acked.length < 50) await new Promise((r) => setTimeout(r, 10));

    const ackedBefore = acked.slice();
    const file = path.join(server.dataDir, 'snapshot.db');
    const backup = await runCliAsync(['backup', file, '--config', server.configFile, '--data-dir', server.dataDir]);
    const ackedDuring = acked.length - ackedBefore.length;
    writing = false;
    await writer;
    assert.equal(backup.status, 0, backup.stderr);
    const report = JSON.parse(backup.stdout);
    assert.equal(report.file, file);
    assert.ok(report.bytes > 0);
    assert.ok(report.tables.r_zoos >= ackedBefore.length, JSON.stringify(report.tables));
    assert.equal(report.tables.clients, 1);
    assert.ok(ackedDuring > 0, 'the server kept acknowledging writes during the backup');
    assert.deepEqual(readdirSync(server.dataDir).filter((f) => f.startsWith('snapshot.db')), ['snapshot.db'], 'no temporary file is left');

    const restore = runCli(['restore', file, '--config', server.configFile, '--data-dir', elsewhere]);
    assert.equal(restore.status, 0, restore.stderr);
    const result = JSON.parse(restore.stdout);
    assert.equal(result.database, path.join(elsewhere, 'gatehouse.db'));
    assert.equal(result.previous, null);
    assert.deepEqual(result.tables, report.tables);

    restored = await startServer({ dataDir: elsewhere, configFile: server.configFile });
    const there = { json: (method: string, target: string) => restored!.json(method, target, undefined, { authorization: `Bearer ${api.token}` }) };
    for (const id of ackedBefore) assert.equal((await there.json('GET', `/v1/zoos/${id}`)).status, 200, `zoo ${id}`);
    const listed = await there.json('GET', '/v1/zoos?limit=1');
    assert.equal(Number(listed.headers.get('x-total-count')), report.tables.r_zoos);
  } finally {
    await restored?.stop();
    await server.cleanup();
    rmSync(elsewhere, { recursive: true, force: true });
  }
});

test('restore keeps the database it replaces as <db>.before-restore-<time>', async () => {
  const server = await startServer();
  const backupFile = path.join(server.dataDir, 'one-zoo.db');
  try {
    const api = await apiClient(server, 'keeper', 'zoos:read zoos:write');
    assert.equal((await api.json('POST', '/v1/zoos', { name: 'Before' })).status, 201);
    assert.equal(server.cli(['backup', backupFile]).status, 0);
    assert.equal((await api.json('POST', '/v1/zoos', { name: 'After' })).status, 201);
    assert.equal(await server.stop(), 0);

    const r = server.cli(['restore', backupFile]);
    assert.equal(r.status, 0, r.stderr);
    const { database, previous } = JSON.parse(r.stdout);
    assert.match(path.basename(previous), /^gatehouse\.db\.before-restore-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/);
    assert.equal(countRows(previous, 'r_zoos'), 2);
    assert.equal(countRows(database, 'r_zoos'), 1);
  } finally {
    await server.cleanup();
  }
});

test('restore refuses a file that is not a gatehouse backup, and a database a server is using', async () => {
  const server = await startServer();
  try {
    const text = path.join(server.dataDir, 'notes.txt');
    writeFileSync(text, 'not a database\n'.repeat(10));
    let r = server.cli(['restore', text]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /notes\.txt is not a gatehouse backup: it is not an SQLite database/);

    const other = path.join(server.dataDir, 'other.db');
    const db = new Database(other);
    db.exec('create table things (id integer primary key)');
    db.close();
    r = server.cli(['restore', other]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /other\.db is not a gatehouse backup: it has no gatehouse_migrations, settings, .* tables/);

    const good = path.join(server.dataDir, 'good.db');
    assert.equal(server.cli(['backup', good]).status, 0);
    r = server.cli(['restore', good]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, new RegExp(`a server is using .*gatehouse\\.db \\(pid ${server.child.pid} on .*\\): stop it first`));
    assert.ok(!readdirSync(server.dataDir).some((f) => f.includes('before-restore') || f.includes('.restore-')), 'nothing was replaced');
    assert.equal((await server.json('GET', '/health')).status, 200);
  } finally {
    await server.cleanup();
  }
});

test('restore refuses a database that another process has open, even without a server mark', async () => {
  const dir = tempDir();
  try {
    const configFile = writeConfig(dir, testConfig());
    assert.equal(runCli(['migrate', '--config', configFile, '--data-dir', dir]).status, 0);
    const good = path.join(dir, 'good.db');
    assert.equal(runCli(['backup', good, '--config', configFile, '--data-dir', dir]).status, 0);
    const holder = new Database(path.join(dir, 'gatehouse.db'));
    holder.pragma('journal_mode = WAL');
    holder.prepare('select count(*) from users').get();
    try {
      const r = runCli(['restore', good, '--config', configFile, '--data-dir', dir]);
      assert.equal(r.status, 1);
      assert.match(r.stderr, /is in use by another process/);
    } finally {
      holder.close();
    }
    assert.equal(runCli(['restore', good, '--config', configFile, '--data-dir', dir]).status, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a large database: progress on stderr, then the JSON report', () => {
  const dir = tempDir();
  try {
    const file = path.join(dir, 'large.db');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec('create table blobs (id integer primary key, data blob)');
    const insert = db.prepare('insert into blobs (data) values (?)');
    const chunk = Buffer.alloc(64 * 1024, 7);
    db.transaction(() => {
      for (let i = 0; i < 600; i++) insert.run(chunk); // ≈ 40 MB
    })();
    db.close();
    const configFile = writeConfig(dir, testConfig({ storage: { database: `sqlite:${file}` } }));
    const r = runCli(['backup', path.join(dir, 'copy.db'), '--config', configFile]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /^backup: \d+% \(\d+ of \d+ pages\)$/m);
    const report = JSON.parse(r.stdout);
    assert.equal(report.tables.blobs, 600);
    assert.ok(report.bytes > 39_000_000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('PostgreSQL: backup and restore explain pg_dump and pg_restore, the password hidden', () => {
  const env = { DATABASE_URL: 'postgres://gatehouse:s3cret-pw@db.internal:5432/gatehouse' };
  let r = runCli(['backup', '/backups/gatehouse.dump'], { env });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /PostgreSQL: gatehouse backup copies SQLite databases only/);
  assert.match(r.stderr, /^ {2}pg_dump --format=custom --file=\/backups\/gatehouse\.dump 'postgres:\/\/gatehouse:\*\*\*@db\.internal:5432\/gatehouse'$/m);
  assert.doesNotMatch(r.stderr, /s3cret-pw/);
  r = runCli(['restore', '/backups/gatehouse.dump'], { env });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^ {2}pg_restore --clean --if-exists --no-owner --dbname='postgres:\/\/gatehouse:\*\*\*@db\.internal:5432\/gatehouse' \/backups\/gatehouse\.dump$/m);
  assert.doesNotMatch(r.stderr, /s3cret-pw/);
});

const pgTools = spawnSync('pg_dump', ['--version']).status === 0 && spawnSync('pg_restore', ['--version']).status === 0;
test(
  'PostgreSQL: the pg_dump and pg_restore commands given work',
  { skip: !pgAvailable ? 'PostgreSQL is not reachable (TEST_DATABASE_URL)' : !pgTools ? 'pg_dump / pg_restore are not installed' : false },
  async () => {
    const [source, target] = [await createPgDatabase(), await createPgDatabase()];
    const dir = tempDir();
    try {
      assert.equal(runCli(['migrate'], { env: { DATABASE_URL: source.url } }).status, 0);
      assert.equal(runCli(['user', 'add', 'pat', '--password-stdin'], { env: { DATABASE_URL: source.url }, input: 'pat-password-1' }).status, 0);
      const dump = path.join(dir, 'gatehouse.dump');
      const commandOf = (stderr: string, tool: string) => stderr.split('\n').find((l) => l.startsWith(`  ${tool} `))!.trim();
      const backup = runCli(['backup', dump], { env: { DATABASE_URL: source.url } });
      const sh = (command: string) => spawnSync('sh', ['-c', command], { encoding: 'utf8' });
      let r = sh(commandOf(backup.stderr, 'pg_dump').replace(/:\*\*\*@/, `:${new URL(TEST_DATABASE_URL).password}@`));
      assert.equal(r.status, 0, r.stderr);
      const restore = runCli(['restore', dump], { env: { DATABASE_URL: target.url } });
      r = sh(commandOf(restore.stderr, 'pg_restore').replace(/:\*\*\*@/, `:${new URL(TEST_DATABASE_URL).password}@`));
      assert.equal(r.status, 0, r.stderr);
      const users = runCli(['user', 'list'], { env: { DATABASE_URL: target.url } });
      assert.equal(users.status, 0, users.stderr);
      assert.match(users.stdout, /"pat"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await source.drop();
      await target.drop();
    }
  },
);
