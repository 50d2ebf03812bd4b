// npm run bench — gatehouse against a bare node:https server and its peers, in one run.
//
// Every server runs in its own child process; autocannon runs here and nothing else does while
// it measures. Targets are measured in interleaved rounds, every second round in reverse order
// (A, B, C, C, B, A, ...), so that the noise of a shared machine falls on all of them alike and
// no target always runs right after the same one; the tables report medians.
//
// Settings (environment): BENCH_DURATION (measured seconds, 10), BENCH_WARMUP (seconds, 3),
// BENCH_ROUNDS (3), BENCH_CONNECTIONS (50), BENCH_PIPELINING (1), BENCH_ZOOS (10000),
// BENCH_ONLY (comma-separated target keys), BENCH_DIAGNOSE=1 (also measure a bare node:http
// server, a minimal Fastify app, and the bare server answering gatehouse's exact response bytes),
// BENCH_JSON_SERVER_PROTOCOL (https | http), BENCH_PROFILE=DIR (run gatehouse under --cpu-prof),
// BENCH_PERF=DIR (sample gatehouse's CPU time with Linux perf during each measured target: bench/lib/perf.ts),
// BENCH_KEEP=1 (keep the temp dir: data dir, config, server logs), BENCH_CLI=FILE (another gatehouse build),
// BENCH_BASELINE_CLI=FILE (a second build, e.g. the previous commit's, measured beside it in the same run),
// BENCH_BASELINE_NODE_ARGS (node options of that second process, e.g. --max-semi-space-size=8: the same build under other V8 settings),
// BENCH_BULK (records bulk-loaded into a fresh gatehouse first, 50000; 0 skips; BENCH_ONLY=bulk runs only that),
// BENCH_BULK_IN_FLIGHT (bulk requests in flight, 4), BENCH_SCALE=<n> (only the list queries at <n> zoos against 10,000:
// bench/scale.ts), BENCH_EVENTS=1 (only issue 14's events figures: bench/events.ts), BENCH_MEMORY=1 (only
// issue 15's RSS over 1,000,000 mixed requests: bench/memory.ts; BENCH_MEMORY_NODE_ARGS: that server's node options), BENCH_LOADERS (loader threads, 2).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, fetch } from 'undici';
import { cleanUp, installSignalHandlers, makeTempDir, spawnServer, type ServerProcess } from './lib/processes.js';
import { cpuSeconds, measure, type LoadSettings, type Sample, type Workload } from './lib/load.js';
import {
  CITIES,
  CLI,
  CLIENT_ID,
  CLIENT_SECRET,
  ROOT,
  TOKEN_REQUEST_BODY,
  basicAuth,
  benchConfig,
  bulkLoad,
  exportZoos,
  restartGatehouse,
  filteredListQueryPlan,
  seedZoos,
  startBaseline,
  startGatehouse,
  BENCH_ORIGIN,
  type BulkLoad,
  type Gatehouse,
} from './lib/gatehouse.js';
import { scaleBench } from './scale.js';
import { dpopProver, newDpopKey } from './lib/dpop.mjs';
import { eventsBench } from './events.js';
import { memoryBench } from './memory.js';
import { perfProblem, recordPerf, summarizePerf, writePerfSummary } from './lib/perf.js';
import { bottleneck, fmtInt, fmtMs, fmtPct, fmtRatio, markdownTables, summarize, textTables, type Check, type TargetSummary } from './lib/report.js';

const env = process.env;
const num = (name: string, def: number) => {
  const v = env[name];
  if (v === undefined || v === '') return def;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got ${JSON.stringify(v)}`);
  return n;
};

const settings: LoadSettings = {
  connections: num('BENCH_CONNECTIONS', 50),
  pipelining: num('BENCH_PIPELINING', 1),
  duration: num('BENCH_DURATION', 10),
  warmup: num('BENCH_WARMUP', 3),
  // The load from worker threads (issue 15): more than one loader core, so that the bare server
  // is not measured at the loader's ceiling. BENCH_LOADERS=1 runs it on the main thread.
  loaders: Math.max(1, Math.round(num('BENCH_LOADERS', 2))),
};
const ROUNDS = Math.max(1, Math.round(num('BENCH_ROUNDS', 3)));
const ZOOS = Math.max(1000, Math.round(num('BENCH_ZOOS', 10_000))); // ≥ 20 zoos per city for the list pages
const ONLY = env.BENCH_ONLY ? new Set(env.BENCH_ONLY.split(',').map((s) => s.trim())) : null;
const BULK = Math.round(num('BENCH_BULK', 50_000));
const BULK_IN_FLIGHT = Math.max(1, Math.round(num('BENCH_BULK_IN_FLIGHT', 4)));
/** BENCH_ONLY=bulk: the bulk load alone (no seeding, no peers, no rounds). */
/** BENCH_SCALE=<n>: only issue 11's list queries at <n> zoos against 10,000 (bench/scale.ts). */
const SCALE = Math.round(num('BENCH_SCALE', 0));
const ONLY_BULK = ONLY !== null && [...ONLY].every((k) => k === 'bulk');
const JSON_SERVER_PROTOCOL = env.BENCH_JSON_SERVER_PROTOCOL === 'http' ? 'http' : 'https';
const PROFILE_DIR = env.BENCH_PROFILE ? path.resolve(env.BENCH_PROFILE) : null;
const PERF_DIR = env.BENCH_PERF ? path.resolve(env.BENCH_PERF) : null;
const RESULTS_DIR = path.join(ROOT, 'bench/results');
const tty = process.stdout.isTTY;

const log = (line = '') => process.stdout.write(line + '\n');

/** A fixed pseudo-random sequence, so every run asks for the same records in the same order. */
function shuffled<T>(items: T[], seed = 42): T[] {
  const out = items.slice();
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

interface Target {
  key: string;
  label: string;
  server: ServerProcess;
  work: Workload;
  /** What a correct answer looks like (checked once before measuring). */
  check(status: number, body: string): string | null;
}

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

function machine() {
  const cpus = os.cpus();
  return {
    nproc: Number(execFileSync('nproc', { encoding: 'utf8' }).trim() || os.availableParallelism()),
    cpu: cpus[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
  };
}

/** A DPoP-bound token for the bench client (client_credentials with a proof). */
async function requestDpopToken(g: Gatehouse, key: ReturnType<typeof newDpopKey>): Promise<string> {
  const url = `${g.server.url}/oauth/token`;
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: basicAuth(CLIENT_ID, CLIENT_SECRET), 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', dpop: dpopProver(key)('POST', url) },
    body: TOKEN_REQUEST_BODY,
    dispatcher: g.agent,
  });
  const body = (await res.json()) as { access_token?: string; token_type?: string };
  if (res.status !== 200 || body.token_type !== 'DPoP' || !body.access_token) throw new Error(`DPoP token request answered ${res.status}: ${JSON.stringify(body)}`);
  return body.access_token;
}

/** A bearer token for the MCP server (RFC 8707 resource {publicUrl}/mcp): /v1 tokens are 401 there. */
async function requestMcpToken(g: Gatehouse): Promise<string> {
  const res = await fetch(`${g.server.url}/oauth/token`, {
    method: 'POST',
    headers: { authorization: basicAuth(CLIENT_ID, CLIENT_SECRET), 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: `${TOKEN_REQUEST_BODY}&resource=${encodeURIComponent(`${g.server.url}/mcp`)}`,
    dispatcher: g.agent,
  });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token) throw new Error(`MCP token request answered ${res.status}: ${JSON.stringify(body)}`);
  return body.access_token;
}

/** The headers of an MCP POST with this token. */
function mcpHeaders(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': '2025-06-18' };
}

/** The JSON-RPC body of `tools/call get_zoos` for one id (the MCP twin of GET /v1/zoos/{id}). */
function mcpGetBody(id: string, n: number): string {
  return JSON.stringify({ jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 'get_zoos', arguments: { id } } });
}

async function probe(agent: Agent, t: Target) {
  const dpop = t.work.dpop ? { dpop: dpopProver(t.work.dpop.key, t.work.dpop.accessToken)(t.work.method, t.work.url + t.work.paths[0]) } : {};
  const res = await fetch(t.work.url + t.work.paths[0], { method: t.work.method, headers: { ...t.work.headers, ...dpop }, body: t.work.bodies?.[0] ?? t.work.body, dispatcher: agent });
  const body = await res.text();
  let headerBytes = 0;
  for (const [name, value] of res.headers) headerBytes += name.length + value.length + 4;
  return { bytes: Buffer.byteLength(body), headerBytes, headers: Object.fromEntries(res.headers), problem: t.check(res.status, body) };
}

const expectJson =
  (test: (body: any) => boolean, what: string) =>
  (status: number, text: string): string | null => {
    if (status < 200 || status >= 300) return `answered ${status}: ${text.slice(0, 200)}`;
    try {
      return test(JSON.parse(text)) ? null : `unexpected body (${what}): ${text.slice(0, 200)}`;
    } catch {
      return `not JSON: ${text.slice(0, 200)}`;
    }
  };

async function main(): Promise<void> {
  installSignalHandlers();
  const started = new Date();
  const host = machine();
  // What is measured, taken before anything starts (others may rebuild dist/ during the run).
  const build = {
    commit: git(['rev-parse', '--short', 'HEAD']) + (git(['status', '--porcelain', '--', 'src']) !== '' ? ' (+ uncommitted changes in src/)' : ''),
    cli: path.relative(ROOT, CLI) || CLI,
    distBuiltAt: statSync(CLI).mtime.toISOString(),
  };
  const work = makeTempDir('gatehouse-bench-');
  log(`gatehouse benchmark — ${started.toISOString()}`);
  log(`machine: ${host.nproc} CPUs (${host.cpu}), ${host.memoryGiB} GiB, node ${host.node}, ${host.platform}`);
  log(
    `autocannon: ${settings.connections} connections, pipelining ${settings.pipelining}, ${settings.warmup} s warm-up + ${settings.duration} s measured, ${ROUNDS} interleaved rounds`,
  );
  log(`temp dir: ${work}`);
  log();
  if (env.BENCH_EVENTS === '1') {
    log('events (issue 14): the outbox on writes, SSE fan-out and webhook delivery (BENCH_EVENTS) ...');
    await eventsBench(work, settings, ROUNDS, log, RESULTS_DIR);
    return;
  }
  if (env.BENCH_MEMORY === '1') {
    log('memory (issue 15): server RSS over 1,000,000 mixed requests in three rounds (BENCH_MEMORY) ...');
    const checks = await memoryBench(work, settings, log, RESULTS_DIR);
    log('\n' + textTables([], checks).split('\n\n')[1]);
    return;
  }
  if (SCALE > 0) {
    log(`scale: the list queries of issue 11 at ${fmtInt(SCALE)} zoos against 10,000 (BENCH_SCALE) ...`);
    await scaleBench(work, SCALE, settings, ROUNDS, log, RESULTS_DIR);
    return;
  }

  // --- bulk load (issue 11): its own gatehouse on a fresh data dir -------------------------
  let bulk: BulkLoad | null = null;
  if (BULK > 0 && (!ONLY || ONLY.has('bulk'))) {
    const perRequest = Number(benchConfig().api?.maxBulkItems ?? 1000); // the config's api.maxBulkItems (schema default 1000)
    const bulkWork = path.join(work, 'bulk');
    mkdirSync(bulkWork, { recursive: true });
    if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
    const profileArgs = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, '--cpu-prof-name=bulk.cpuprofile'] : [];
    log(`bulk load: ${fmtInt(BULK)} zoos as arrays of ${fmtInt(perRequest)} (202 jobs), ${BULK_IN_FLIGHT} in flight, into a fresh gatehouse${PROFILE_DIR ? ' under --cpu-prof' : ''} ...`);
    const gb = await startGatehouse(bulkWork, log, profileArgs);
    let shown = -1;
    bulk = await bulkLoad(gb, BULK, perRequest, BULK_IN_FLIGHT, cpuSeconds, (done, total) => {
      if (tty) process.stdout.write(`\r  ${fmtInt(done)}/${fmtInt(total)} records ...`);
      else if (Math.floor((done / total) * 5) !== shown) {
        shown = Math.floor((done / total) * 5);
        log(`  ${fmtInt(done)}/${fmtInt(total)} records`);
      }
    });
    if (tty) process.stdout.write('\n');
    log(
      `  ${fmtInt(bulk.records)} records in ${bulk.seconds.toFixed(2)} s: ${fmtInt(bulk.recordsPerSecond)} records/s` +
        (bulk.serverCpuSeconds !== null ? `; server CPU ${bulk.serverCpuSeconds.toFixed(2)} s (${fmtInt(bulk.recordsPerCpuSecond ?? NaN)} records per CPU-second)` : '') +
        `; loader CPU ${bulk.loaderCpuSeconds.toFixed(2)} s; load average ${os.loadavg()[0].toFixed(1)}` +
        (bulk.unavailable ? `; ${fmtInt(bulk.unavailable)} answers 503 waited out` : ''),
    );
    await gb.agent.close();
    await gb.server.stop();
    if (PROFILE_DIR) log(`  profile: ${path.join(PROFILE_DIR, 'bulk.cpuprofile')}`);
    log();
  }
  const addBulkCheck = (checks: Check[]) => {
    if (!bulk) return;
    const met = bulk.recordsPerSecond >= 10_000;
    checks.push({ what: 'bulk create records/s (SQLite)', issue: 'issue 11', value: fmtInt(bulk.recordsPerSecond), cpuValue: bulk.recordsPerCpuSecond === null ? undefined : `${fmtInt(bulk.recordsPerCpuSecond)} per CPU-s`, target: '≥ 10,000', met });
  };
  if (ONLY_BULK) {
    const checks: Check[] = [];
    addBulkCheck(checks);
    log(textTables([], checks).split('\n\n')[1]);
    const command = [...Object.entries(env).filter(([k]) => k.startsWith('BENCH_')).map(([k, v]) => `${k}=${v}`), 'npm run bench'].join(' ');
    mkdirSync(RESULTS_DIR, { recursive: true });
    writeFileSync(path.join(RESULTS_DIR, 'latest.json'), JSON.stringify({ date: started.toISOString(), command, machine: host, gatehouse: build, bulk, checks }, null, 2) + '\n');
    writeFileSync(
      path.join(RESULTS_DIR, 'latest.md'),
      `Measured ${started.toISOString().slice(0, 10)} with \`${command}\` on ${host.nproc} CPUs (${host.cpu}), node ${host.node}; gatehouse ${build.commit}.\n\n${markdownTables([], checks).split('\n\n')[1]}\n`,
    );
    log(`\nwrote ${path.relative(process.cwd(), path.join(RESULTS_DIR, 'latest.json'))} and latest.md (${((Date.now() - started.getTime()) / 1000).toFixed(0)} s in all)`);
    return;
  }

  // --- gatehouse: start, token, seed -------------------------------------------------------
  log('starting gatehouse (dist/cli/main.js serve, SQLite) ...');
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  if (PERF_DIR) {
    const problem = perfProblem();
    if (problem) throw new Error(`BENCH_PERF: ${problem}`);
    mkdirSync(PERF_DIR, { recursive: true });
  }
  const g: Gatehouse = await startGatehouse(work, log);
  log(`  ${g.server.url} (pid ${g.server.pid}), bearer token from ${g.tokenSource === 'token-endpoint' ? 'POST /oauth/token (client_credentials)' : 'the database (stand-in)'}`);

  let lastShown = -1;
  const seedStart = Date.now();
  await seedZoos(g, ZOOS, (done, total) => {
    if (tty) process.stdout.write(`\r  seeding ${fmtInt(done)}/${fmtInt(total)} zoos through POST /v1/zoos (bulk jobs) ...`);
    else {
      const step = Math.floor((done / total) * 10);
      if (step !== lastShown) log(`  seeding ${fmtInt(done)}/${fmtInt(total)} zoos through POST /v1/zoos (bulk jobs)`);
      lastShown = step;
    }
  });
  if (tty) process.stdout.write('\n');
  log(`  seeded ${fmtInt(ZOOS)} zoos in ${((Date.now() - seedStart) / 1000).toFixed(1)} s`);
  const zoos = await exportZoos(g);
  if (zoos.length !== ZOOS) throw new Error(`gatehouse lists ${zoos.length} zoos, expected ${ZOOS}`);
  const owner = String(zoos[0].owner ?? '');
  if (PROFILE_DIR || PERF_DIR) {
    // Seeding is not what we want to see in the profile: restart on the seeded data dir.
    const cpuProf = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
    // perf names JIT-compiled JavaScript from the map node writes to /tmp/perf-<pid>.map.
    await restartGatehouse(g, work, [...cpuProf, ...(PERF_DIR ? ['--perf-basic-prof'] : [])]);
    if (PROFILE_DIR) log(`  restarted gatehouse under --cpu-prof (profile in ${PROFILE_DIR} when it stops): ${g.server.url} (pid ${g.server.pid})`);
    if (PERF_DIR) log(`  restarted gatehouse with --perf-basic-prof (perf recordings and summaries in ${PERF_DIR}): ${g.server.url} (pid ${g.server.pid})`);
  }

  const queryPlan = filteredListQueryPlan(g.dataDir, owner, CITIES[0]);
  log('  query plan of GET /v1/zoos?city=X&limit=20 (EXPLAIN QUERY PLAN, read-only on gatehouse.db):');
  for (const q of queryPlan) log(`    ${q.sql}\n      → ${q.plan.join('; ')}`);
  const planUsesIndex = queryPlan.every((q) => q.plan.some((p) => /USING (COVERING )?INDEX/.test(p)) && !q.plan.some((p) => /^SCAN r_zoos\b(?! USING)/.test(p)));

  // --- the other servers ------------------------------------------------------------------
  const childEnv = { ...env, NODE_ENV: 'production', BENCH_CERT: g.certFile, BENCH_KEY: g.keyFile };
  const tsx = ['--import', 'tsx'];
  const dbFile = path.join(work, 'json-server-db.json');
  writeFileSync(dbFile, JSON.stringify({ zoos }));
  const wanted = (key: string) => !ONLY || ONLY.has(key);

  log('starting the bare server, json-server 0.17 and 1.x, and oidc-provider ...');
  const diagnose = env.BENCH_DIAGNOSE === '1';
  const startPeer = (name: string, file: string, extraEnv: NodeJS.ProcessEnv = {}) =>
    spawnServer({ name, args: [...tsx, `bench/servers/${file}`], cwd: ROOT, env: { ...childEnv, ...extraEnv }, logDir: work, ready: /listening on (\S+)/ });
  const bare = await startPeer('bare-https', 'bare.ts');
  const bareHttp = diagnose ? await startPeer('bare-http', 'bare.ts', { BENCH_PROTOCOL: 'http' }) : null;
  const fastify = diagnose ? await startPeer('fastify', 'fastify.ts') : null;
  const jsonServer = await startPeer('json-server', 'json-server.ts', { BENCH_DB: dbFile, BENCH_PROTOCOL: JSON_SERVER_PROTOCOL });
  const jsonServer1 = await startPeer('json-server-1', 'json-server-1.ts', { BENCH_DB: dbFile });
  const oidc = await startPeer('oidc-provider', 'oidc-provider.ts', { BENCH_CLIENT_ID: CLIENT_ID, BENCH_CLIENT_SECRET: CLIENT_SECRET });
  const baseline = env.BENCH_BASELINE_CLI ? await startBaseline(g, work, env.BENCH_BASELINE_CLI, (env.BENCH_BASELINE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean)) : null;
  if (baseline) log(`  baseline build ${env.BENCH_BASELINE_CLI}${env.BENCH_BASELINE_NODE_ARGS ? ` (node ${env.BENCH_BASELINE_NODE_ARGS})` : ''} on the same data: ${baseline.url}`);

  // --- the workloads ----------------------------------------------------------------------
  // The same 1,000 ids and the 50 cities, in the same order, for every server; the same
  // request headers too (the bare server and json-server ignore the bearer token).
  const ids = shuffled(zoos.map((z) => String(z.id))).slice(0, 1000);
  const cities = shuffled(CITIES);
  const bearer = { authorization: `Bearer ${g.token}`, accept: 'application/json' };
  const tokenHeaders = { authorization: basicAuth(CLIENT_ID, CLIENT_SECRET), 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  const byIdPaths = ids.map((id) => `/v1/zoos/${id}`);
  const listPaths = cities.map((c) => `/v1/zoos?city=${encodeURIComponent(c)}&limit=20`);
  const isZoo = (b: any) => typeof b?.id === 'string' && typeof b?.name === 'string';
  const isPage = (b: any) => Array.isArray(b) && b.length === 20 && b.every((z: any) => cities.includes(z.city));
  const isToken = (b: any) => typeof b?.access_token === 'string';
  // A DPoP-bound token (RFC 9449) for the same GET by id with a proof per request: what DPoP costs beside bearer.
  const dpopKey = newDpopKey();
  const dpopToken = wanted('gatehouse-get-dpop') && g.tokenEndpoint ? await requestDpopToken(g, dpopKey) : null;
  // The MCP server's tools/call get_zoos (stateless, a JSON answer) on the same ids: what MCP costs beside GET.
  const mcpToken = (wanted('gatehouse-mcp-get') || wanted('baseline-mcp-get')) && g.tokenEndpoint ? await requestMcpToken(g) : null;
  const isToolZoo = (b: any) => b?.jsonrpc === '2.0' && b.result?.isError !== true && isZoo(b.result?.structuredContent);

  const all: Target[] = [
    { key: 'bare-get', label: 'bare node:https, fixed JSON (GET)', server: bare, work: { url: bare.url, method: 'GET', headers: bearer, paths: byIdPaths }, check: expectJson((b) => typeof b?.id === 'string', 'a JSON object') },
    ...(bareHttp
      ? [{ key: 'bare-http-get', label: 'bare node:http (plain), fixed JSON (GET)', server: bareHttp, work: { url: bareHttp.url, method: 'GET' as const, headers: bearer, paths: byIdPaths }, check: expectJson((b) => typeof b?.id === 'string', 'a JSON object') }]
      : []),
    ...(fastify
      ? [{ key: 'fastify-get', label: 'minimal Fastify over https, fixed JSON (GET)', server: fastify, work: { url: fastify.url, method: 'GET' as const, headers: bearer, paths: byIdPaths }, check: expectJson((b) => typeof b?.id === 'string', 'a JSON object') }]
      : []),
    { key: 'gatehouse-get', label: 'gatehouse GET /v1/zoos/{id} (bearer)', server: g.server, work: { url: g.server.url, method: 'GET', headers: bearer, paths: byIdPaths }, check: expectJson(isZoo, 'a zoo') },
    ...(dpopToken
      ? [{
          key: 'gatehouse-get-dpop',
          label: 'gatehouse GET /v1/zoos/{id} (DPoP, a new proof each)',
          server: g.server,
          work: { url: g.server.url, method: 'GET' as const, headers: { authorization: `DPoP ${dpopToken}`, accept: 'application/json' }, paths: byIdPaths, dpop: { key: dpopKey, accessToken: dpopToken } },
          check: expectJson(isZoo, 'a zoo'),
        }]
      : []),
    ...(mcpToken
      ? [{
          key: 'gatehouse-mcp-get',
          label: 'gatehouse MCP tools/call get_zoos (stateless, JSON)',
          server: g.server,
          work: {
            url: g.server.url,
            method: 'POST' as const,
            headers: mcpHeaders(mcpToken),
            paths: ['/mcp'],
            bodies: ids.map((id, n) => mcpGetBody(id, n + 1)),
          },
          check: expectJson(isToolZoo, 'a tools/call result with a zoo'),
        }]
      : []),
    // Issue 13: the same from a browser page of the client's origin (CORS headers in the answer).
    { key: 'gatehouse-get-origin', label: 'gatehouse GET /v1/zoos/{id} with Origin (CORS)', server: g.server, work: { url: g.server.url, method: 'GET', headers: { ...bearer, origin: BENCH_ORIGIN }, paths: byIdPaths }, check: expectJson(isZoo, 'a zoo') },
    {
      key: 'gatehouse-list',
      label: 'gatehouse GET /v1/zoos?city=X&limit=20 (bearer)',
      server: g.server,
      work: { url: g.server.url, method: 'GET', headers: bearer, paths: listPaths },
      check: expectJson(isPage, '20 zoos of the city'),
    },
    { key: 'json-server-get', label: `json-server GET /zoos/{id} (${JSON_SERVER_PROTOCOL}, no auth)`, server: jsonServer, work: { url: jsonServer.url, method: 'GET', headers: bearer, paths: ids.map((id) => `/zoos/${id}`) }, check: expectJson(isZoo, 'a zoo') },
    {
      key: 'json-server-list',
      label: `json-server GET /zoos?city=X&_limit=20 (${JSON_SERVER_PROTOCOL})`,
      server: jsonServer,
      work: { url: jsonServer.url, method: 'GET', headers: bearer, paths: cities.map((c) => `/zoos?city=${encodeURIComponent(c)}&_limit=20`) },
      check: expectJson(isPage, '20 zoos of the city'),
    },
    { key: 'json-server-1-get', label: 'json-server 1.x GET /zoos/{id} (https, no auth)', server: jsonServer1, work: { url: jsonServer1.url, method: 'GET', headers: bearer, paths: ids.map((id) => `/zoos/${id}`) }, check: expectJson(isZoo, 'a zoo') },
    {
      key: 'json-server-1-list',
      label: 'json-server 1.x GET /zoos?city=X&_per_page=20 (https)',
      server: jsonServer1,
      work: { url: jsonServer1.url, method: 'GET', headers: bearer, paths: cities.map((c) => `/zoos?city=${encodeURIComponent(c)}&_page=1&_per_page=20`) },
      check: expectJson((b) => isPage(b?.data), 'a page of 20 zoos of the city'),
    },
    { key: 'bare-post', label: 'bare node:https, fixed JSON (POST form)', server: bare, work: { url: bare.url, method: 'POST', headers: tokenHeaders, body: TOKEN_REQUEST_BODY, paths: ['/oauth/token'] }, check: expectJson((b) => typeof b?.id === 'string', 'a JSON object') },
    ...(g.tokenEndpoint
      ? [{ key: 'gatehouse-token', label: 'gatehouse POST /oauth/token (client_credentials)', server: g.server, work: { url: g.server.url, method: 'POST' as const, headers: tokenHeaders, body: TOKEN_REQUEST_BODY, paths: ['/oauth/token'] }, check: expectJson(isToken, 'a token response') }]
      : []),
    ...(baseline
      ? [
          { key: 'baseline-get', label: 'baseline build GET /v1/zoos/{id} (bearer)', server: baseline, work: { url: baseline.url, method: 'GET' as const, headers: bearer, paths: byIdPaths }, check: expectJson(isZoo, 'a zoo') },
          {
            key: 'baseline-list',
            label: 'baseline build GET /v1/zoos?city=X&limit=20 (bearer)',
            server: baseline,
            work: { url: baseline.url, method: 'GET' as const, headers: bearer, paths: listPaths },
            check: expectJson(isPage, '20 zoos of the city'),
          },
          { key: 'baseline-token', label: 'baseline build POST /oauth/token (client_credentials)', server: baseline, work: { url: baseline.url, method: 'POST' as const, headers: tokenHeaders, body: TOKEN_REQUEST_BODY, paths: ['/oauth/token'] }, check: expectJson(isToken, 'a token response') },
          // The same tools/call on the baseline (its token is for /mcp too: the audience is stored as a path).
          ...(mcpToken && wanted('baseline-mcp-get')
            ? [{ key: 'baseline-mcp-get', label: 'baseline build MCP tools/call get_zoos', server: baseline, work: { url: baseline.url, method: 'POST' as const, headers: mcpHeaders(mcpToken), paths: ['/mcp'], bodies: ids.map((id, n) => mcpGetBody(id, n + 1)) }, check: expectJson(isToolZoo, 'a tools/call result with a zoo') }]
            : []),
        ]
      : []),
    { key: 'oidc-token', label: 'oidc-provider POST /token (client_credentials)', server: oidc, work: { url: oidc.url, method: 'POST', headers: tokenHeaders, body: TOKEN_REQUEST_BODY, paths: ['/token'] }, check: expectJson(isToken, 'a token response') },
  ];
  if (!g.tokenEndpoint) log('  gatehouse POST /oauth/token is not available: the token endpoint comparison is skipped');

  if (diagnose) {
    // The bare server again, answering gatehouse's own responses (headers and body) to a GET by
    // id and to a filtered list: how much of each gap is just the bytes gatehouse sends.
    const agent = new Agent({ connect: { ca: readFileSync(g.certFile, 'utf8') } });
    const sameBytes = async (key: string, what: string, before: string, paths: string[], check: Target['check']) => {
      const sample = await fetch(g.server.url + paths[0], { headers: bearer, dispatcher: agent });
      const headers: Record<string, string> = {};
      for (const [k, v] of sample.headers) if (!['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'].includes(k)) headers[k] = v;
      const responseFile = path.join(work, `gatehouse-response-${key}.json`);
      writeFileSync(responseFile, JSON.stringify({ headers, body: await sample.text() }));
      const server = await startPeer(`bare-same-bytes-${key}`, 'bare.ts', { BENCH_RESPONSE_FILE: responseFile });
      all.splice(all.findIndex((t) => t.key === before), 0, {
        key: `bare-same-bytes-${key}`,
        label: `bare node:https, gatehouse's response bytes (${what})`,
        server,
        work: { url: server.url, method: 'GET', headers: bearer, paths },
        check,
      });
    };
    await sameBytes('get', 'GET', 'gatehouse-get', byIdPaths, expectJson(isZoo, 'a zoo'));
    await sameBytes('list', 'list', 'gatehouse-list', [`/v1/zoos?city=${encodeURIComponent(cities[0])}&limit=20`], expectJson(isPage, '20 zoos of the city'));
    await agent.close();
  }
  const targets = all.filter((t) => wanted(t.key));

  // One correct answer from each before measuring: a fast error is not a result.
  const probeAgent = new Agent({ connect: { ca: readFileSync(g.certFile, 'utf8') } });
  const responseBytes: Record<string, { body: number; headers: number }> = {};
  const responseHeaders: Record<string, Record<string, string>> = {};
  for (const t of targets) {
    const { bytes, headerBytes, headers, problem } = await probe(probeAgent, t);
    if (problem) throw new Error(`${t.label}: ${problem}`);
    responseBytes[t.key] = { body: bytes, headers: headerBytes };
    responseHeaders[t.key] = headers;
  }
  await probeAgent.close();
  await g.agent.close();
  log(`  response sizes in bytes (headers + body): ${targets.map((t) => `${t.key} ${responseBytes[t.key].headers}+${responseBytes[t.key].body}`).join(', ')}`);
  const perRound = targets.length * (settings.warmup + settings.duration);
  log(`\nmeasuring ${targets.length} targets × ${ROUNDS} rounds ≈ ${((perRound * ROUNDS) / 60).toFixed(1)} min (load average now ${os.loadavg().map((l) => l.toFixed(1)).join(' ')})`);
  const loadBefore = os.loadavg();

  // --- interleaved rounds -----------------------------------------------------------------
  const samples = new Map<string, Sample[]>(targets.map((t) => [t.key, []]));
  const perfFiles = new Map<string, string[]>();
  for (let round = 1; round <= ROUNDS; round++) {
    // Measured second in one round, first in the next: on this kind of machine the target measured
    // after another one was favoured by ≈ 3% (docs/benchmarks.md), too much for an A/B of builds.
    for (const t of round % 2 === 0 ? [...targets].reverse() : targets) {
      // The measured seconds only (after the warm-up), gatehouse's own targets only.
      const perfFile = PERF_DIR && t.server === g.server ? path.join(PERF_DIR, `${t.key}.round${round}.perf.data`) : null;
      const recording = perfFile ? recordPerf(t.server.pid, perfFile, settings.warmup * 1000) : null;
      const s = await measure(t.work, settings, t.server.pid);
      if (recording) {
        await recording.stop();
        perfFiles.set(t.key, [...(perfFiles.get(t.key) ?? []), perfFile!]);
      }
      samples.get(t.key)!.push(s);
      const bad = Object.values(s.non2xx).reduce((a, b) => a + b, 0) + s.errors + s.timeouts;
      log(
        `  round ${round}/${ROUNDS}  ${t.label.padEnd(52)} ${fmtInt(s.rps).padStart(7)} req/s  p99 ${fmtMs(s.p99).padStart(6)} ms  server CPU ${s.serverCpu?.toFixed(2) ?? '—'}${bad ? `  (${bad} non-2xx/errors)` : ''}`,
      );
    }
  }

  // --- summary ----------------------------------------------------------------------------
  const summaries = targets.map((t) => summarize(t.key, t.label, samples.get(t.key)!));
  for (const s of summaries) s.bottleneck = bottleneck(s, settings.loaders ?? 1, host.nproc);
  const by = new Map<string, TargetSummary>(summaries.map((s) => [s.key, s]));
  const ratio = (a: string, b: string) => (by.get(a) && by.get(b) ? by.get(a)!.rps / by.get(b)!.rps : NaN);
  // The capacity ratio if each server had a core to itself: the inverse ratio of CPU per request.
  const cpuRatio = (a: string, b: string) => {
    const x = by.get(a)?.cpuPerRequest;
    const y = by.get(b)?.cpuPerRequest;
    return x && y ? y / x : NaN;
  };
  const checks: Check[] = [];
  const add = (what: string, issue: string, value: number, fmt: (n: number) => string, target: string, met: boolean, cpuValue?: number) =>
    checks.push({ what, issue, value: fmt(value), cpuValue: cpuValue === undefined ? undefined : fmt(cpuValue), target, met: Number.isFinite(cpuValue ?? value) ? met : null });
  const getVsBare = ratio('gatehouse-get', 'bare-get');
  add('GET by id vs bare node:https', 'issue 2', getVsBare, fmtPct, '≥ 45%', getVsBare >= 0.45, cpuRatio('gatehouse-get', 'bare-get'));
  add('GET by id vs bare node:https', 'issue 4', getVsBare, fmtPct, '≥ 40%', getVsBare >= 0.4, cpuRatio('gatehouse-get', 'bare-get'));
  const p99 = by.get('gatehouse-get')?.p99 ?? NaN;
  add('GET by id p99 at 50 connections', 'issues 2, 4', p99, (n) => `${fmtMs(n)} ms`, '< 10 ms', p99 < 10);
  const listP99 = by.get('gatehouse-list')?.p99 ?? NaN;
  add('filtered list p99 at 50 connections', 'issue 2', listP99, (n) => `${fmtMs(n)} ms`, '< 10 ms', listP99 < 10);
  // Issue 15: server CPU per request is the headline (what each request costs, whichever side was
  // the bottleneck); the verdicts below are decided on it.
  const getVsBareCpu = cpuRatio('gatehouse-get', 'bare-get');
  add('GET by id vs bare node:https', 'issue 15', getVsBare, fmtPct, '≥ 50% by CPU/req', getVsBareCpu >= 0.5, getVsBareCpu);
  add('filtered list p99 at 50 connections', 'issue 15', listP99, (n) => `${fmtMs(n)} ms`, '< 10 ms', listP99 < 10);
  const listCost = (by.get('gatehouse-list')?.cpuPerRequest ?? NaN) / (by.get('gatehouse-get')?.cpuPerRequest ?? NaN);
  add('filtered list CPU/req vs GET by id', 'issue 15', NaN, fmtRatio, '≤ 3×', listCost <= 3, listCost);
  const tokVsOidcCpu = cpuRatio('gatehouse-token', 'oidc-token');
  add('client_credentials vs oidc-provider', 'issue 15', ratio('gatehouse-token', 'oidc-token'), fmtRatio, '≥ 2.5× by CPU/req', tokVsOidcCpu >= 2.5, tokVsOidcCpu);
  const getVsJson1Cpu = cpuRatio('gatehouse-get', 'json-server-1-get');
  add('GET by id vs json-server 1.x', 'issue 15', ratio('gatehouse-get', 'json-server-1-get'), fmtRatio, '≥ 2× by CPU/req', getVsJson1Cpu >= 2, getVsJson1Cpu);
  const getVsJson = ratio('gatehouse-get', 'json-server-get');
  add('GET by id vs json-server', 'issue 4', getVsJson, fmtRatio, '≥ 2×', getVsJson >= 2, cpuRatio('gatehouse-get', 'json-server-get'));
  const tokVsOidc = ratio('gatehouse-token', 'oidc-token');
  add('client_credentials tokens/s vs oidc-provider', 'issue 3', tokVsOidc, fmtRatio, '≥ 2×', tokVsOidc >= 2, cpuRatio('gatehouse-token', 'oidc-token'));
  add('filtered list query uses an index', 'issue 2', planUsesIndex ? 1 : 0, (n) => (n ? 'SEARCH … USING INDEX' : 'SCAN'), 'no full scan', planUsesIndex);
  addBulkCheck(checks);
  const corsCost = (by.get('gatehouse-get-origin')?.cpuPerRequest ?? NaN) / (by.get('gatehouse-get')?.cpuPerRequest ?? NaN);
  add('GET by id with Origin (CORS): server CPU/req vs without', 'issue 13', corsCost, fmtRatio, '≤ 1.03×', corsCost <= 1.03);
  if (by.has('gatehouse-mcp-get')) {
    const mcpCost = (by.get('gatehouse-mcp-get')?.cpuPerRequest ?? NaN) / (by.get('gatehouse-get')?.cpuPerRequest ?? NaN);
    add('MCP tools/call get_zoos: server CPU/req vs GET by id', 'issue 38', mcpCost, fmtRatio, '≤ 2×', mcpCost <= 2);
  }
  if (baseline) {
    // Server CPU per request of this build over the baseline's (1.00 = the same cost; above = more).
    const cost = (a: string, b: string) => (by.get(a)?.cpuPerRequest ?? NaN) / (by.get(b)?.cpuPerRequest ?? NaN);
    const getCost = cost('gatehouse-get', 'baseline-get');
    add('GET by id server CPU/req vs the baseline build', 'issue 10', getCost, fmtRatio, '≤ 1.05×', getCost <= 1.05);
    const listCost = cost('gatehouse-list', 'baseline-list');
    add('filtered list server CPU/req vs the baseline build', 'issue 10', listCost, fmtRatio, '≤ 1.05×', listCost <= 1.05);
    if (by.has('baseline-mcp-get')) {
      const mcpCost = cost('gatehouse-mcp-get', 'baseline-mcp-get');
      add('MCP tools/call get_zoos server CPU/req vs the baseline build', 'issue 38', mcpCost, fmtRatio, 'lower', mcpCost < 1);
    }
    const tokenCost = cost('gatehouse-token', 'baseline-token');
    add('token endpoint server CPU/req vs the baseline build', 'issue 10', tokenCost, fmtRatio, '≤ 1.05×', tokenCost <= 1.05);
  }
  const both = (a: string, b: string, fmt: (n: number) => string) => `${fmt(ratio(a, b))} (by CPU/req ${fmt(cpuRatio(a, b))})`;
  const info = {
    'filtered list vs bare node:https': both('gatehouse-list', 'bare-get', fmtPct),
    'filtered list vs json-server': both('gatehouse-list', 'json-server-list', fmtRatio),
    'filtered list vs json-server 1.x': both('gatehouse-list', 'json-server-1-list', fmtRatio),
    'token endpoint vs bare node:https POST': both('gatehouse-token', 'bare-post', fmtPct),
    ...(bareHttp ? { 'bare node:https vs bare node:http': both('bare-get', 'bare-http-get', fmtPct) } : {}),
    ...(fastify ? { 'minimal Fastify vs bare node:https': both('fastify-get', 'bare-get', fmtPct), 'GET by id vs minimal Fastify': both('gatehouse-get', 'fastify-get', fmtPct) } : {}),
    ...(diagnose
      ? {
          "bare with gatehouse's bytes vs bare": both('bare-same-bytes-get', 'bare-get', fmtPct),
          "GET by id vs bare with gatehouse's bytes": both('gatehouse-get', 'bare-same-bytes-get', fmtPct),
          "filtered list vs bare with gatehouse's list bytes": both('gatehouse-list', 'bare-same-bytes-list', fmtPct),
        }
      : {}),
  };

  log('\nresults (medians over the rounds; ratios are ratios of medians)\n');
  log(textTables(summaries, checks));
  log('\nother ratios: ' + Object.entries(info).map(([k, v]) => `${k} ${v}`).join('; '));
  const loaderBound = summaries.filter((s) => s.bottleneck === 'loader' || s.bottleneck === 'machine').map((s) => `${s.key} (${s.bottleneck})`);
  if (loaderBound.length)
    log(
      `note: the server was not at its own ceiling for ${loaderBound.join(', ')} (loader: every loader thread ≈ 1 core; machine: server and loader shared every core): ` +
        'those req/s are a floor, not the server’s ceiling; server CPU per request is the figure to compare.',
    );
  if (PERF_DIR) {
    log(`\nwhere gatehouse's CPU went (perf on CPU time, the measured seconds of every round; symbols in ${PERF_DIR}/<target>.txt):`);
    for (const [key, files] of perfFiles) {
      const summary = summarizePerf(files);
      if (summary) for (const line of writePerfSummary(PERF_DIR, key, by.get(key)!.label, summary, by.get(key)!.cpuPerRequest ?? null)) log(`  ${line}`);
      else log(`  ${key}: perf recorded no samples (is perf_event_paranoid ≤ 1, or is this root?)`);
    }
  }

  const command = [
    ...Object.entries(env)
      .filter(([k]) => k.startsWith('BENCH_'))
      .map(([k, v]) => `${k}=${v}`),
    'npm run bench',
  ].join(' ');
  const results = {
    date: started.toISOString(),
    command,
    machine: host,
    settings: { ...settings, rounds: ROUNDS },
    loadAverage: { beforeMeasuring: loadBefore, after: os.loadavg() },
    dataset: { zoos: ZOOS, cities: CITIES.length, idsRequested: ids.length },
    bulk,
    gatehouse: {
      ...build,
      tokenSource: g.tokenSource,
      rateLimit: 'on, max 1e9 per 60 s',
    },
    jsonServer: { protocol: JSON_SERVER_PROTOCOL },
    responseBytes,
    responseHeaders,
    queryPlan,
    summaries,
    checks,
    otherRatios: info,
    samples: Object.fromEntries(samples),
  };
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(path.join(RESULTS_DIR, 'latest.json'), JSON.stringify(results, null, 2) + '\n');
  const markdown = [
    `Measured ${started.toISOString().slice(0, 10)} with \`${command}\` on ${host.nproc} CPUs (${host.cpu}), node ${host.node}; gatehouse ${results.gatehouse.commit}.`,
    `${settings.connections} connections from ${settings.loaders} loader thread(s), pipelining ${settings.pipelining}, ${settings.warmup} s warm-up + ${settings.duration} s measured per target and round, ${ROUNDS} interleaved rounds; medians.`,
    '',
    markdownTables(summaries, checks),
    '',
    'Other ratios: ' + Object.entries(info).map(([k, v]) => `${k} **${v}**`).join('; ') + '.',
    `Load average (1 min) before measuring ${loadBefore[0].toFixed(1)}, after ${os.loadavg()[0].toFixed(1)}.` +
      (loaderBound.length ? ` The server was not at its own ceiling for ${loaderBound.join(', ')}: those req/s are a floor; server CPU per request is the figure to compare.` : ''),
    '',
  ].join('\n');
  writeFileSync(path.join(RESULTS_DIR, 'latest.md'), markdown);
  log(`\nwrote ${path.relative(process.cwd(), path.join(RESULTS_DIR, 'latest.json'))} and latest.md (${((Date.now() - started.getTime()) / 1000).toFixed(0)} s in all)`);
}

let failed = false;
try {
  await main();
} catch (e) {
  failed = true;
  process.stderr.write(`\nbenchmark failed: ${(e as Error)?.stack ?? e}\n`);
} finally {
  await cleanUp();
}
process.exit(failed ? 1 : 0);
