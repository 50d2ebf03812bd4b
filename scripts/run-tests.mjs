#!/usr/bin/env node
// `npm test`: builds, checks the PostgreSQL and Redis the tests use, then runs every test file
// with node's test runner (scripts/test-files.mjs). `npm test -- test/some.test.ts` runs a subset.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
process.chdir(root);

const build = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const pgUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

function reachable(url, defaultPort) {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: u.hostname, port: Number(u.port || defaultPort), timeout: 2000 });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}

const env = { ...process.env, TEST_DATABASE_URL: pgUrl, TEST_REDIS_URL: redisUrl };
const pg = await reachable(pgUrl, 5432);
const redis = await reachable(redisUrl, 6379);
env.GATEHOUSE_TEST_PG = pg ? '1' : '';
env.GATEHOUSE_TEST_REDIS = redis ? '1' : '';
for (const [name, ok, url] of [['PostgreSQL', pg, pgUrl], ['Redis', redis, redisUrl]]) {
  if (ok) continue;
  if (process.env.CI === 'true') {
    console.error(`${name} is not reachable at ${url}: under CI=true the tests that need it cannot be skipped.`);
    process.exit(1);
  }
  console.warn(`${name} is not reachable at ${url}: its tests are reported as skipped.`);
}

function collect(dir) {
  let out = [];
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (entry === 'node_modules') continue;
    if (statSync(full).isDirectory()) out = out.concat(collect(full));
    else if (entry.endsWith('.test.ts')) out.push(full);
  }
  return out;
}

// Test files run in parallel, twice as many as the machine has cores: most of a black-box test's
// time is spent waiting (a server starting, a token expiring, a browser), so two per core keep the
// CPU busy — on the 2-core CI machine, 4 files at a time took 7 minutes where 2 took 11.
// Under CI one file fewer: the suite's black-box files (two servers, a browser, an SMTP server)
// made the timing-bound tests (the fuzzer's deadline, the turn gate under load) miss at 4 on 2 cores.
const concurrency = process.env.TEST_CONCURRENCY ?? String(Math.max(2, 2 * os.availableParallelism() - (process.env.CI === 'true' ? 1 : 0)));

// The files that run longest start first: started last, one of them would run alone at the end
// while the other cores idle (the slowest files are printed after every run).
const LONGEST = [
  'test/http-fuzz.test.ts',
  'test/resource-async.test.ts',
  'test/browser-admin.test.ts',
  'test/cli-people.test.ts',
  'test/schema-migrations.test.ts',
  'test/cli-oauth.test.ts',
  'src/api/store/list-plans.test.ts',
  'test/browser-factors.test.ts',
  'test/browser-account.test.ts',
  'test/browser-users.test.ts',
  'test/users-lifecycle.test.ts',
  'test/attachments-large.test.ts',
  'test/ops-backup.test.ts',
  'test/cli-remove.test.ts',
  'test/account-deletion.test.ts',
  'test/cli-migrate.test.ts',
  'test/events-webhooks.test.ts',
  'test/oauth-remembered-consent.test.ts',
  'test/http-lifecycle.test.ts',
  'test/outages.test.ts',
  'test/crash-recovery.test.ts',
  'test/mail.test.ts',
];
const rank = (file) => {
  const i = LONGEST.indexOf(path.relative(root, path.resolve(file)));
  return i === -1 ? LONGEST.length : i;
};

// Made once for the whole run, in a directory removed at its end: the development certificate the
// servers of test/helpers/server.ts start with (made here by the server's own code: making one in
// each new data dir was a tenth of a server start's CPU time; test/server-lifecycle and
// http-lifecycle still watch a server make its own), and, on Node 22.1 and later, V8's compile
// cache for the hundreds of processes the tests start (NODE_COMPILE_CACHE; Node 20 ignores it).
const shared = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-suite-'));
process.on('exit', () => rmSync(shared, { recursive: true, force: true }));
const { loadConfig } = await import('../dist/platform/config/load.js');
const { loadCertificate } = await import('../dist/platform/http/tls.js');
await loadCertificate(loadConfig({ dataDir: shared, port: 0, env: {} }));
env.GATEHOUSE_TEST_TLS_DIR = shared;
env.NODE_COMPILE_CACHE ??= path.join(shared, 'compile-cache');

const args = process.argv.slice(2);
const files = (args.length ? args : [...collect('src'), ...collect('test')]).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
const result = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/test-files.mjs', ...files], {
  stdio: 'inherit',
  env: { ...env, TEST_CONCURRENCY: concurrency },
});
process.exit(result.status ?? 1);
