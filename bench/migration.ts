// A schema migration at scale (docs/benchmarks.md, "A rename migration over a million records"):
// BENCH_MIGRATE_RECORDS zoos (default 1,000,000) seeded through the bulk API of the real server,
// then the config renames `city` to `town` (renamedFrom; `town` filtered, searched and indexed as
// `city` was) and `gatehouse migrate` runs under /usr/bin/time: its wall time, records per second
// and peak RSS. BENCH_MIGRATE_PG=1 runs it on PostgreSQL (TEST_DATABASE_URL's server) instead.
//   npm run bench:migrate
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Agent, fetch } from 'undici';
import { CLI, ROOT, benchConfig } from './lib/gatehouse.js';
import { spawnServer } from './lib/processes.js';

const RECORDS = Number(process.env.BENCH_MIGRATE_RECORDS ?? 1_000_000);
const BULK = 10_000;
const onPg = process.env.BENCH_MIGRATE_PG === '1';

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-bench-migrate-'));
  let dropPg: (() => Promise<void>) | null = null;
  try {
    const config = benchConfig();
    config.api.maxBulkItems = BULK;
    if (onPg) {
      const admin = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
      const name = `gatehouse_bench_migrate_${Date.now().toString(36)}`;
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`create database ${name}`);
      await c.end();
      const url = new URL(admin);
      url.pathname = `/${name}`;
      config.storage = { ...config.storage, database: url.toString() };
      dropPg = async () => {
        const d = new pg.Client({ connectionString: admin });
        await d.connect();
        await d.query(`drop database if exists ${name} with (force)`);
        await d.end();
      };
    }
    const configFile = path.join(dataDir, 'gatehouse.json');
    writeFileSync(configFile, JSON.stringify(config));
    const cli = (args: string[]) => spawnSync(process.execPath, [CLI, ...args, '--config', configFile, '--data-dir', dataDir], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'warn' } });
    const check = (r: ReturnType<typeof cli>, what: string) => {
      if (r.status !== 0) throw new Error(`${what} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
      return r;
    };
    check(cli(['migrate']), 'migrate');
    check(cli(['client', 'add', 'bench', '--secret', 'bench-migrate-secret-0123456789abcdef', '--grant', 'client_credentials']), 'client add');

    // Seed through the bulk API.
    const server = await spawnServer({
      name: 'gatehouse-migrate',
      args: [CLI, 'serve', '--config', configFile, '--data-dir', dataDir],
      env: { ...process.env, LOG_LEVEL: 'warn' },
      cwd: ROOT,
      logDir: dataDir,
      ready: /gatehouse listening on (https:\/\/\S+)/,
    });
    const agent = new Agent({ connect: { ca: readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8') } });
    const started = Date.now();
    try {
      const tokenRes = await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from('bench:bench-migrate-secret-0123456789abcdef').toString('base64')}` },
        body: 'grant_type=client_credentials&scope=zoos:read%20zoos:write',
      });
      const token = ((await tokenRes.json()) as { access_token: string }).access_token;
      const cities = ['Berlin', 'Vienna', 'Prague', 'Zurich', 'Leipzig', 'Munich', 'Hamburg', 'Basel'];
      for (let i = 0; i < RECORDS; i += BULK) {
        const items = Array.from({ length: Math.min(BULK, RECORDS - i) }, (_, j) => ({ name: `Zoo ${i + j}`, city: cities[(i + j) % cities.length], founded: 1700 + ((i + j) % 320) }));
        const res = await fetch(`${server.url}/v1/zoos`, { method: 'POST', dispatcher: agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(items) });
        if (res.status !== 202) throw new Error(`bulk POST: ${res.status} ${await res.text()}`);
        const job = res.headers.get('location')!;
        await res.text();
        for (;;) {
          const j = (await (await fetch(job, { dispatcher: agent, headers: { authorization: `Bearer ${token}`, accept: 'application/json' } })).json()) as { status: string };
          if (j.status === 'done') break;
          if (j.status === 'failed') throw new Error('bulk job failed');
          await new Promise((r) => setTimeout(r, 100));
        }
        process.stderr.write(`\rseeded ${Math.min(i + BULK, RECORDS)} of ${RECORDS}`);
      }
      process.stderr.write(` in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
    } finally {
      await agent.close();
      await server.stop();
    }

    // The rename.
    const zoos = config.collections.zoos;
    const { city: _city, ...rest } = zoos.schema.properties;
    zoos.schema.properties = { ...rest, town: { type: 'string', renamedFrom: 'city' } };
    zoos.filters = zoos.filters.map((f: string) => (f === 'city' ? 'town' : f));
    zoos.search = zoos.search.map((f: string) => (f === 'city' ? 'town' : f));
    zoos.indexes = zoos.indexes.map((ix: string[]) => ix.map((f) => (f === 'city' ? 'town' : f)));
    writeFileSync(configFile, JSON.stringify(config));
    if (process.env.BENCH_MIGRATE_SEED_ONLY === '1') {
      // For profiling: the seeded data dir with the renamed config, not migrated, kept.
      process.stderr.write(`seeded, not migrated: ${dataDir}\n`);
      return;
    }
    const t0 = process.hrtime.bigint();
    const timed = spawnSync('/usr/bin/time', ['-f', '%M %e %U %S', process.execPath, CLI, 'migrate', '--config', configFile, '--data-dir', dataDir], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, LOG_LEVEL: 'warn' },
      maxBuffer: 64 * 1024 * 1024,
    });
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    if (timed.status !== 0) throw new Error(`migrate failed (${timed.status}):\n${timed.stdout}\n${timed.stderr}`);
    const out = JSON.parse(timed.stdout) as { records_migrated: number; columns_added: string[]; search_indexed: string[] };
    const lines = timed.stderr.trim().split('\n');
    const [rssKb, , user, sys] = lines.pop()!.split(' ').map(Number);
    // What migrate printed (its progress lines).
    for (const line of lines) process.stderr.write(`  migrate: ${line}\n`);
    const result = {
      engine: onPg ? 'postgresql' : 'sqlite',
      records: out.records_migrated,
      seconds: Number(wall.toFixed(1)),
      records_per_second: Math.round(out.records_migrated / wall),
      peak_rss_mib: Math.round(rssKb / 1024),
      cpu_seconds: Number((user + sys).toFixed(1)),
      columns_added: out.columns_added,
      search_indexed: out.search_indexed,
    };
    console.log(JSON.stringify(result, null, 2));
    if (out.records_migrated !== RECORDS) throw new Error(`expected ${RECORDS} records migrated`);
  } finally {
    if (process.env.BENCH_MIGRATE_KEEP === '1' || process.env.BENCH_MIGRATE_SEED_ONLY === '1') process.stderr.write(`kept ${dataDir}\n`);
    else {
      await dropPg?.();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
}

await main();
