// A schema migration at scale (docs/benchmarks.md, "A rename migration over a million records"):
// BENCH_MIGRATE_RECORDS zoos (default 1,000,000) loaded through the bulk API of the bench's
// gatehouse (startGatehouse, bulkLoad), then the config renames `city` to `town` (renamedFrom;
// `town` filtered, searched and indexed as `city` was) and `gatehouse migrate` runs under
// /usr/bin/time: its wall time, records per second and peak RSS. BENCH_MIGRATE_PG=1 runs it on a
// fresh PostgreSQL database (BENCH_PG_URL's server) instead. BENCH_MIGRATE_SEED_ONLY=1 stops
// before the migration (with BENCH_KEEP=1 the data dir stays, for profiling `migrate` by hand).
// The temp dir goes at exit (bench/lib/processes.ts), as the other benches'.
//   npm run bench:migrate
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { CLI, ROOT, benchConfig, bulkLoad, freshPgDatabase, startGatehouse } from './lib/gatehouse.js';
import { cpuSeconds } from './lib/load.js';
import { cleanUp, makeTempDir } from './lib/processes.js';

const RECORDS = Number(process.env.BENCH_MIGRATE_RECORDS ?? 1_000_000);
const BULK = 10_000;
const onPg = process.env.BENCH_MIGRATE_PG === '1';
const seedOnly = process.env.BENCH_MIGRATE_SEED_ONLY === '1';

const workDir = makeTempDir('gatehouse-bench-migrate-');
try {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const api = { ...benchConfig().api, maxBulkItems: BULK };
  const g = await startGatehouse(workDir, log, [], onPg ? await freshPgDatabase('gatehouse_bench_migrate') : undefined, { api });
  try {
    let shown = -1;
    const loaded = await bulkLoad(g, RECORDS, BULK, 2, cpuSeconds, (done, total) => {
      const step = Math.floor((done / total) * 10);
      if (step !== shown) log(`seeded ${done} of ${total}`);
      shown = step;
    });
    log(`seeded in ${loaded.seconds.toFixed(0)} s`);
  } finally {
    await g.agent.close();
    await g.server.stop();
  }

  // The rename.
  const config = JSON.parse(readFileSync(g.configFile, 'utf8'));
  const zoos = config.collections.zoos;
  const { city: _city, ...rest } = zoos.schema.properties;
  zoos.schema.properties = { ...rest, town: { type: 'string', renamedFrom: 'city' } };
  const renamed = (f: string) => (f === 'city' ? 'town' : f);
  zoos.filters = zoos.filters.map(renamed);
  zoos.search = zoos.search.map(renamed);
  zoos.indexes = zoos.indexes.map((ix: string[]) => ix.map(renamed));
  writeFileSync(g.configFile, JSON.stringify(config, null, 2));
  if (seedOnly) {
    log(`seeded, not migrated: gatehouse migrate --config ${g.configFile} --data-dir ${g.dataDir}`);
  } else {
    const started = process.hrtime.bigint();
    const timed = spawnSync('/usr/bin/time', ['-f', '%M %e %U %S', process.execPath, CLI, 'migrate', '--config', g.configFile, '--data-dir', g.dataDir], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, LOG_LEVEL: 'warn', DATABASE_URL: onPg ? g.databaseUrl : undefined },
      maxBuffer: 64 * 1024 * 1024,
    });
    const wall = Number(process.hrtime.bigint() - started) / 1e9;
    if (timed.status !== 0) throw new Error(`migrate failed (${timed.status}):\n${timed.stdout}\n${timed.stderr}`);
    const out = JSON.parse(timed.stdout) as { records_migrated: number; columns_added: string[]; search_indexed: string[] };
    const lines = timed.stderr.trim().split('\n');
    const [rssKb, , user, sys] = lines.pop()!.split(' ').map(Number);
    // What migrate printed (its progress lines).
    for (const line of lines) log(`  migrate: ${line}`);
    console.log(
      JSON.stringify(
        {
          engine: onPg ? 'postgresql' : 'sqlite',
          records: out.records_migrated,
          seconds: Number(wall.toFixed(1)),
          records_per_second: Math.round(out.records_migrated / wall),
          peak_rss_mib: Math.round(rssKb / 1024),
          cpu_seconds: Number((user + sys).toFixed(1)),
          columns_added: out.columns_added,
          search_indexed: out.search_indexed,
        },
        null,
        2,
      ),
    );
    if (out.records_migrated !== RECORDS) throw new Error(`expected ${RECORDS} records migrated, not ${out.records_migrated}`);
  }
} finally {
  await cleanUp();
}
