// BENCH_SCALE=<n> npm run bench: issue 11's list queries at scale. Two gatehouse servers, one
// with 10,000 zoos and one with <n> (1,000,000 for the issue), both seeded through the bulk API
// (1,000 cities, founded 1800–2025, a search word per zoo), then measured in interleaved rounds:
// a filtered list with a range, the first page and a cursor page 500 pages deep, and q=<word>.
import os from 'node:os';
import path from 'node:path';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fetch } from 'undici';
import { bulkLoad, freshPgDatabase, startGatehouse, type Gatehouse } from './lib/gatehouse.js';
import { cpuSeconds, measure, type LoadSettings, type Sample } from './lib/load.js';
import { fmtInt, fmtMs, fmtRatio, median } from './lib/report.js';
import { listPlans, type QueryPlan } from './lib/plans.js';
import pg from 'pg';

const CITIES = 1000;
const zoo = (i: number) => ({ name: `Zoo ${i + 1} w${(i * 7919) % 1000}`, city: `City ${i % CITIES}`, founded: 1800 + ((i * 37) % 226) });

async function get(g: Gatehouse, target: string): Promise<{ status: number; link: string; body: unknown[] }> {
  const res = await fetch(g.server.url + target, { headers: { authorization: `Bearer ${g.token}`, accept: 'application/json' }, dispatcher: g.agent });
  const body = (await res.json()) as unknown[];
  if (res.status !== 200) throw new Error(`GET ${target} answered ${res.status}`);
  return { status: res.status, link: res.headers.get('link') ?? '', body };
}

/** The cursor of the page `depth` pages into the unfiltered list (walked by next links). */
async function deepCursor(g: Gatehouse, depth: number): Promise<string> {
  let target = '/v1/zoos?limit=20&count=none';
  for (let i = 0; i < depth; i++) {
    const next = /<([^>]+)>; rel="next"/.exec((await get(g, target)).link);
    if (!next) throw new Error(`the list ended after ${i} pages`);
    target = next[1].slice(g.server.url.length);
  }
  return target;
}

export async function scaleBench(work: string, large: number, settings: LoadSettings, rounds: number, log: (line?: string) => void, resultsDir: string): Promise<void> {
  const small = 10_000;
  const engine = process.env.BENCH_SCALE_ENGINE === 'postgres' ? 'postgres' : 'sqlite';
  log(`  engine: ${engine === 'postgres' ? 'PostgreSQL (BENCH_SCALE_ENGINE=postgres)' : 'SQLite'}`);
  const servers: Record<string, Gatehouse> = {};
  for (const [name, count] of [['small', small], ['large', large]] as const) {
    const dir = path.join(work, name);
    mkdirSync(dir, { recursive: true });
    const g = await startGatehouse(dir, log, [], engine === 'postgres' ? await freshPgDatabase(`gatehouse_scale_${name}`) : undefined);
    const started = Date.now();
    let shown = -1;
    const loaded = await bulkLoad(g, count, 1000, 4, cpuSeconds, (done, total) => {
      const step = Math.floor((done / total) * 10);
      if (step !== shown) log(`  ${name}: ${fmtInt(done)}/${fmtInt(total)} zoos`);
      shown = step;
    }, zoo);
    const waits = loaded.unavailable ? ` (${fmtInt(loaded.unavailable)} answers 503, waited out)` : '';
    log(`  ${name}: ${fmtInt(count)} zoos in ${((Date.now() - started) / 1000).toFixed(0)} s${waits}`);
    servers[name] = g;
  }
  if (engine === 'postgres') {
    // As a DBA would after a bulk load (autovacuum gets there within minutes): fresh planner
    // statistics, or PostgreSQL plans the first minutes with the empty table's.
    for (const g of Object.values(servers)) {
      const client = new pg.Client({ connectionString: g.databaseUrl });
      await client.connect();
      await client.query('vacuum analyze r_zoos').finally(() => client.end());
    }
    log('  PostgreSQL: vacuum analyze r_zoos after the load');
  }
  const cities = Array.from({ length: 50 }, (_, k) => `/v1/zoos?city=City%20${(k * 19) % CITIES}&founded%5Bgte%5D=1900&limit=20`);
  const words = Array.from({ length: 50 }, (_, k) => `/v1/zoos?q=w${(k * 13) % 1000}&limit=20`);
  const deep = await deepCursor(servers.large, 500);
  log(`  cursor 500 pages deep: ${deep.length} characters`);
  const targets: { key: string; label: string; g: Gatehouse; paths: string[] }[] = [
    { key: 'small-filter', label: `${fmtInt(small)} zoos: city=X&founded[gte]=1900&limit=20`, g: servers.small, paths: cities },
    { key: 'large-filter', label: `${fmtInt(large)} zoos: city=X&founded[gte]=1900&limit=20`, g: servers.large, paths: cities },
    { key: 'large-first', label: `${fmtInt(large)} zoos: first page (limit=20)`, g: servers.large, paths: ['/v1/zoos?limit=20&count=none'] },
    { key: 'large-deep', label: `${fmtInt(large)} zoos: the page 500 pages deep (after=)`, g: servers.large, paths: [deep] },
    { key: 'large-search', label: `${fmtInt(large)} zoos: q=<word>&limit=20`, g: servers.large, paths: words },
  ];
  // What each query shape runs, and how the engine plans it at the large size (no full scan).
  const plans: QueryPlan[] = await listPlans(servers.large.configFile, servers.large.databaseUrl, 'client:bench', [
    { label: 'city=X&founded[gte]=1900&limit=20', target: cities[0] },
    { label: 'first page', target: '/v1/zoos?limit=20&count=none' },
    { label: '500 pages deep', target: deep },
    { label: 'q=<word>&limit=20', target: words[0] },
  ]);
  log(`\nquery plans at ${fmtInt(large)} zoos (${engine}):`);
  for (const p of plans) log(`  ${p.label}\n    ${p.sql}\n      ${p.plan.join('\n      ')}`);
  const samples = new Map<string, Sample[]>(targets.map((t) => [t.key, []]));
  const cpu = (s: Sample) => (s.serverCpuPerRequest === null ? '—' : fmtInt(s.serverCpuPerRequest));
  for (let round = 1; round <= rounds; round++)
    for (const t of targets) {
      const s = await measure({ url: t.g.server.url, method: 'GET', headers: { authorization: `Bearer ${t.g.token}`, accept: 'application/json' }, paths: t.paths }, settings, t.g.server.pid);
      samples.get(t.key)!.push(s);
      log(`  round ${round}/${rounds}  ${t.label.padEnd(60)} ${fmtInt(s.rps).padStart(7)} req/s  p99 ${fmtMs(s.p99).padStart(6)} ms  server CPU ${cpu(s).padStart(6)} µs/req  non-2xx ${Object.values(s.non2xx).reduce((a, b) => a + b, 0)}`);
    }
  const p99 = (k: string) => median(samples.get(k)!.map((s) => s.p99));
  const cpuPerRequest = (k: string) => median(samples.get(k)!.map((s) => s.serverCpuPerRequest ?? NaN));
  const checks = [
    { what: `filtered list p99 at ${fmtInt(large)} zoos`, value: `${fmtMs(p99('large-filter'))} ms`, target: '< 15 ms', met: p99('large-filter') < 15 },
    { what: `the same list, p99 at ${fmtInt(large)} / at ${fmtInt(small)}`, value: fmtRatio(p99('large-filter') / p99('small-filter')), target: '≤ 1.5×', met: p99('large-filter') / p99('small-filter') <= 1.5 },
    { what: `the same list, server CPU/req at ${fmtInt(large)} / at ${fmtInt(small)}`, value: fmtRatio(cpuPerRequest('large-filter') / cpuPerRequest('small-filter')), target: '(info)', met: true },
    // Not a target: at 10,000 zoos a city has 10 zoos, so that page holds ~5 rows and needs no
    // count; at 1,000,000 it holds 20 and a count. The first page at the same size holds 20 too.
    { what: `filtered list p99 / first page p99, both at ${fmtInt(large)} (20 rows each)`, value: fmtRatio(p99('large-filter') / p99('large-first')), target: '(info)', met: true },
    { what: 'cursor page 500 deep, p99 / first page p99', value: fmtRatio(p99('large-deep') / p99('large-first')), target: '≤ 1.5×', met: p99('large-deep') / p99('large-first') <= 1.5 },
    { what: `q=<word> p99 at ${fmtInt(large)} zoos`, value: `${fmtMs(p99('large-search'))} ms`, target: '< 25 ms', met: p99('large-search') < 25 },
  ];
  log('\nmedians over the rounds (server CPU per request: the honest figure on a shared machine, issue 15):');
  for (const t of targets) {
    const perRequest = samples.get(t.key)!.map((s) => s.serverCpuPerRequest).filter((v): v is number => v !== null);
    log(`  ${t.label.padEnd(60)} p99 ${fmtMs(p99(t.key)).padStart(6)} ms  ${fmtInt(median(samples.get(t.key)!.map((s) => s.rps))).padStart(7)} req/s  ${perRequest.length ? fmtInt(median(perRequest)) : '—'} µs/req`);
  }
  log(`\nchecks (issue 11, ${engine}):`);
  for (const c of checks) log(`  ${c.what.padEnd(52)} ${c.value.padStart(9)}  target ${c.target.padEnd(8)} ${c.target === '(info)' ? '' : c.met ? 'met' : 'MISSED'}`);
  log(`load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(path.join(resultsDir, `scale-${engine}.json`), JSON.stringify({ date: new Date().toISOString(), engine, large, small, settings, rounds, checks, plans, samples: Object.fromEntries(samples) }, null, 2) + '\n');
}
