// gatehouse as the benchmark sees it: the real server process (dist/cli/main.js) on a fresh data
// dir with the demo deployment's collections, a client_credentials client made with the CLI, a
// bearer token from POST /oauth/token, and 10,000 zoos seeded through the bulk API.
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import Database from 'better-sqlite3';
import { Agent, fetch } from 'undici';
import pg from 'pg';
import { spawnServer, type ServerProcess } from './processes.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');
/** The gatehouse build under test; BENCH_CLI points at another build (e.g. a patched copy) to compare. */
export const CLI = path.resolve(process.env.BENCH_CLI ?? path.join(ROOT, 'dist/cli/main.js'));

export const CLIENT_ID = 'bench';
/** The bench client's browser origin (CORS). */
export const BENCH_ORIGIN = 'https://bench-app.example';
export const CLIENT_SECRET = 'bench-secret-' + randomBytes(24).toString('base64url');
/** Every scope the bench client needs; the zoos belong to its subject (the client id). */
const SCOPE = 'zoos:read zoos:write';

export interface Gatehouse {
  server: ServerProcess;
  dataDir: string;
  configFile: string;
  certFile: string;
  keyFile: string;
  agent: Agent;
  /** The bearer token used for the resource API measurements, and how it was obtained. */
  token: string;
  tokenSource: 'token-endpoint' | 'database';
  /** Whether POST /oauth/token works for the bench client (the token endpoint can be measured). */
  tokenEndpoint: boolean;
  /** The database it serves: `sqlite:<data dir>/gatehouse.db`, or the PostgreSQL URL it was started with. */
  databaseUrl: string;
}

/** The demo deployment's config, on any free port, with a quota high enough not to turn a benchmark into 429s. */
export function benchConfig(): Record<string, any> {
  const demo = parseYaml(readFileSync(path.join(ROOT, 'examples/zoo/gatehouse.yaml'), 'utf8'));
  // Without the keys that only document (api.license, a collection's description): an older
  // build beside this one (BENCH_BASELINE_CLI, BENCH_CLI) serves the same config, and refuses keys it does not know.
  const { license: _license, ...api } = demo.api;
  const collections = Object.fromEntries(Object.entries(demo.collections as Record<string, any>).map(([name, { description: _d, ...c }]) => [name, c]));
  return {
    ...demo,
    server: { ...demo.server, port: 0 },
    auth: { ...demo.auth, demo: false },
    // The limiter stays on (its cost is part of every request), its ceiling out of reach.
    api: { ...api, rateLimit: { max: 1_000_000_000, window: 60 } },
    collections,
  };
}

function cli(args: string[], configFile: string, dataDir: string, databaseUrl?: string, cliFile = CLI) {
  return spawnSync(process.execPath, [cliFile, ...args, '--config', configFile, '--data-dir', dataDir], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', DATABASE_URL: databaseUrl },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

export function basicAuth(id: string, secret: string): string {
  return 'Basic ' + Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64');
}

export const TOKEN_REQUEST_BODY = 'grant_type=client_credentials';

async function requestToken(g: Pick<Gatehouse, 'server' | 'agent'>): Promise<{ status: number; token?: string; text: string }> {
  const res = await fetch(`${g.server.url}/oauth/token`, {
    method: 'POST',
    headers: { authorization: basicAuth(CLIENT_ID, CLIENT_SECRET), 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: TOKEN_REQUEST_BODY,
    dispatcher: g.agent,
  });
  const text = await res.text();
  let token: string | undefined;
  try {
    token = JSON.parse(text).access_token;
  } catch {
    // not JSON: reported by the caller
  }
  return { status: res.status, token, text };
}

/**
 * Stand-in while the token endpoint is not available: a client, a grant and a bearer token
 * written straight into the database, in the shape src/authserver/tokens.ts stores them
 * (through src/authserver/store/grants.ts).
 */
function mintTokenInDatabase(dataDir: string): string {
  const db = new Database(path.join(dataDir, 'gatehouse.db'));
  try {
    const now = Date.now();
    const token = randomBytes(32).toString('base64url');
    const sha = (s: string) => createHash('sha256').update(s).digest('base64url');
    const grantId = `bench-grant-${now}`;
    db.prepare(
      `insert or ignore into clients (id, name, secret_hash, public, redirect_uris, grant_types, scope, token_type, created_at)
       values (?, ?, ?, 0, '[]', '["client_credentials"]', null, 'bearer', ?)`,
    ).run(CLIENT_ID, CLIENT_ID, sha(CLIENT_SECRET), now);
    db.prepare(
      `insert into grants (id, client_id, subject, scope, expires_at, revoked_at, revoked_reason, created_at) values (?, ?, ?, ?, ?, null, null, ?)`,
    ).run(grantId, CLIENT_ID, CLIENT_ID, SCOPE, now + 86_400_000, now);
    db.prepare(
      `insert into access_tokens (hash, grant_id, client_id, subject, scope, token_type, key_id, expires_at, revoked_at, created_at)
       values (?, ?, ?, ?, ?, 'bearer', null, ?, null, ?)`,
    ).run(sha(token), grantId, CLIENT_ID, CLIENT_ID, SCOPE, now + 86_400_000, now);
    return token;
  } finally {
    db.close();
  }
}

function spawnGatehouse(configFile: string, dataDir: string, workDir: string, nodeArgs: string[], name = 'gatehouse', cli = CLI, databaseUrl?: string): Promise<ServerProcess> {
  return spawnServer({
    name,
    args: [...nodeArgs, cli, 'serve', '--config', configFile, '--data-dir', dataDir, '--port', '0'],
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production', PORT: undefined, HOST: undefined, DATABASE_URL: databaseUrl, REDIS_URL: undefined },
    logDir: workDir,
    ready: /gatehouse listening on (https:\/\/\S+)/,
  });
}

/**
 * Another build (BENCH_BASELINE_CLI, e.g. the previous commit's dist/cli/main.js) serving the same
 * data dir beside the build under test, so both are measured in one run on the same data.
 */
export function startBaseline(g: Gatehouse, workDir: string, cli: string, nodeArgs: string[] = []): Promise<ServerProcess> {
  if (!existsSync(cli)) throw new Error(`BENCH_BASELINE_CLI ${cli} is missing`);
  return spawnGatehouse(g.configFile, g.dataDir, workDir, nodeArgs, 'gatehouse-baseline', path.resolve(cli), pgUrlOf(g));
}

const pgUrlOf = (g: Gatehouse) => (g.databaseUrl.startsWith('postgres') ? g.databaseUrl : undefined);

/** Stops the server and starts it again on the same data dir (e.g. under --cpu-prof once seeding is done). */
export async function restartGatehouse(g: Gatehouse, workDir: string, nodeArgs: string[]): Promise<void> {
  await g.server.stop();
  g.server = await spawnGatehouse(g.configFile, g.dataDir, workDir, nodeArgs, 'gatehouse-profiled', CLI, pgUrlOf(g));
}

/** `databaseUrl`: serve a PostgreSQL database instead of the data dir's SQLite file. */
export async function startGatehouse(
  workDir: string,
  log: (line: string) => void,
  nodeArgs: string[] = [],
  databaseUrl?: string,
  extraConfig: Record<string, unknown> = {},
  cliFile: string = CLI,
): Promise<Gatehouse> {
  if (!existsSync(cliFile)) throw new Error(`${path.relative(process.cwd(), cliFile)} is missing: run \`npm run build\` first`);
  const dataDir = path.join(workDir, 'gatehouse-data');
  const configFile = path.join(workDir, 'gatehouse.json');
  writeFileSync(configFile, JSON.stringify({ ...benchConfig(), ...extraConfig }, null, 2));

  // The database first: the CLI's other commands never create one.
  const migrated = cli(['migrate'], configFile, dataDir, databaseUrl, cliFile);
  if (migrated.status !== 0) throw new Error(`gatehouse migrate failed: ${(migrated.stderr || migrated.stdout).trim()}`);
  // A browser origin too, so that a request with Origin gets the full CORS answer (issue 13's case).
  // (A build from before --origin existed, as BENCH_CLI may name, registers it without.)
  let added = cli(['client', 'add', CLIENT_ID, '--secret', CLIENT_SECRET, '--grant', 'client_credentials', '--scope', SCOPE, '--origin', BENCH_ORIGIN], configFile, dataDir, databaseUrl, cliFile);
  if (added.status !== 0 && /--origin/.test(added.stderr))
    added = cli(['client', 'add', CLIENT_ID, '--secret', CLIENT_SECRET, '--grant', 'client_credentials', '--scope', SCOPE], configFile, dataDir, databaseUrl, cliFile);
  const clientAdded = added.status === 0;
  if (!clientAdded) log(`  \`gatehouse client add\` failed (${(added.stderr || added.stdout).trim().split('\n')[0]})`);

  const server = await spawnGatehouse(configFile, dataDir, workDir, nodeArgs, cliFile === CLI ? 'gatehouse' : 'gatehouse-baseline', cliFile, databaseUrl);
  const certFile = path.join(dataDir, 'tls', 'cert.pem');
  const keyFile = path.join(dataDir, 'tls', 'key.pem');
  const agent = new Agent({ connect: { ca: readFileSync(certFile, 'utf8') }, connections: 16 });

  let token: string;
  let tokenSource: Gatehouse['tokenSource'] = 'token-endpoint';
  const answer = clientAdded ? await requestToken({ server, agent }) : null;
  if (answer?.status === 200 && answer.token) token = answer.token;
  else {
    if (answer) log(`  POST /oauth/token answered ${answer.status}: ${answer.text.slice(0, 200)}`);
    log('  the token endpoint is not available: using a token written directly into the database');
    token = mintTokenInDatabase(dataDir);
    tokenSource = 'database';
  }
  return {
    server, dataDir, configFile, certFile, keyFile, agent, token, tokenSource,
    tokenEndpoint: tokenSource === 'token-endpoint',
    databaseUrl: databaseUrl ?? `sqlite:${path.join(dataDir, 'gatehouse.db')}`,
  };
}

export const CITIES = [
  'Amsterdam', 'Athens', 'Auckland', 'Bangkok', 'Barcelona', 'Berlin', 'Bogota', 'Boston', 'Brussels', 'Budapest',
  'Cairo', 'Chicago', 'Copenhagen', 'Dakar', 'Delhi', 'Dublin', 'Edinburgh', 'Florence', 'Geneva', 'Hamburg',
  'Helsinki', 'Istanbul', 'Jakarta', 'Kyoto', 'Lagos', 'Lima', 'Lisbon', 'London', 'Madrid', 'Manila',
  'Melbourne', 'Mexico', 'Milan', 'Montreal', 'Mumbai', 'Munich', 'Nairobi', 'Osaka', 'Oslo', 'Paris',
  'Prague', 'Quito', 'Riga', 'Rome', 'Santiago', 'Seoul', 'Sydney', 'Tokyo', 'Vienna', 'Warsaw',
];

/** The zoos every server is loaded with: deterministic, 50 cities, 200 zoos per city at 10,000. */
export function zooDocuments(count: number): { name: string; city: string; founded: number }[] {
  return Array.from({ length: count }, (_, i) => ({ name: `Zoo ${i + 1}`, city: CITIES[i % CITIES.length], founded: 1800 + ((i * 37) % 220) }));
}

async function api(g: Gatehouse, method: string, target: string, body?: unknown) {
  const res = await fetch(/^https:/.test(target) ? target : g.server.url + target, {
    method,
    headers: {
      authorization: `Bearer ${g.token}`,
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    dispatcher: g.agent,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null, text };
}

/** Seeds the zoos through the bulk API (arrays of ≤1000 → 202 jobs), polling /v1/jobs with a progress line. */
export async function seedZoos(g: Gatehouse, count: number, progress: (done: number, total: number) => void): Promise<void> {
  const docs = zooDocuments(count);
  const jobs: string[] = [];
  for (let i = 0; i < docs.length; i += 1000) {
    const r = await api(g, 'POST', '/v1/zoos', docs.slice(i, i + 1000));
    if (r.status !== 202) throw new Error(`bulk POST /v1/zoos answered ${r.status}: ${r.text.slice(0, 300)}`);
    jobs.push(r.headers.get('location')!);
  }
  const state = new Map<string, { processed: number; done: boolean }>(jobs.map((j) => [j, { processed: 0, done: false }]));
  for (;;) {
    for (const [job, s] of state) {
      if (s.done) continue;
      const r = await api(g, 'GET', job);
      if (r.status !== 200) throw new Error(`GET ${job} answered ${r.status}: ${r.text.slice(0, 300)}`);
      s.processed = r.body.processed ?? 0;
      if (r.body.status === 'done') {
        if (r.body.succeeded !== undefined && r.body.succeeded !== r.body.total)
          throw new Error(`job ${job} created ${r.body.succeeded} of ${r.body.total} zoos: ${r.text.slice(0, 300)}`);
        s.done = true;
      }
    }
    const states = [...state.values()];
    progress(states.reduce((n, s) => n + s.processed, 0), count);
    if (states.every((s) => s.done)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Every zoo as gatehouse serves it (paged at the maximum limit), to load the peers with the same records. */
export async function exportZoos(g: Gatehouse): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (let offset = 0; ; offset += 100) {
    const r = await api(g, 'GET', `/v1/zoos?limit=100&offset=${offset}`);
    if (r.status !== 200) throw new Error(`GET /v1/zoos answered ${r.status}: ${r.text.slice(0, 300)}`);
    out.push(...r.body);
    if (r.body.length < 100) return out;
  }
}

export async function fetchOnce(g: Gatehouse, target: string) {
  return api(g, 'GET', target);
}

/**
 * EXPLAIN QUERY PLAN of the statements behind GET /v1/zoos?city=X&limit=20 (the page and its
 * X-Total-Count; see listRecordRows() in src/api/store/list-plans.ts), on a read-only connection.
 */
export function filteredListQueryPlan(dataDir: string, owner: string, city: string): { sql: string; plan: string[] }[] {
  const db = new Database(path.join(dataDir, 'gatehouse.db'), { readonly: true, fileMustExist: true });
  try {
    const statements = [
      { sql: 'select "id", "owner", "parent_id", "version", "created_at", "updated_at", "doc" from "r_zoos" where "owner" = ? and "x_city" = ? order by "id" asc limit ? offset ?', params: [owner, city, 20, 0] },
      { sql: 'select count(*) as "n" from "r_zoos" where "owner" = ? and "x_city" = ?', params: [owner, city] },
    ];
    return statements.map(({ sql, params }) => ({
      sql,
      plan: (db.prepare(`explain query plan ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail),
    }));
  } finally {
    db.close();
  }
}

export interface BulkLoad {
  records: number;
  perRequest: number;
  inFlight: number;
  requests: number;
  seconds: number;
  recordsPerSecond: number;
  /** The server's CPU time over the load (every thread), and records per second of it. */
  serverCpuSeconds: number | null;
  recordsPerCpuSecond: number | null;
  /** This process's CPU time over the load (building and sending the arrays, polling the jobs). */
  loaderCpuSeconds: number;
  /** 503 answers (overload or maintenance) waited out and retried after their Retry-After, as a client should. */
  unavailable: number;
}

/**
 * Issue 11: `count` zoos loaded through the bulk API as arrays of `perRequest` (202 jobs), with
 * `inFlight` clients each POSTing an array, polling its job until it is done, then POSTing the
 * next. Timed from the first POST to the last job done; every record checked created once.
 */
export async function bulkLoad(
  g: Gatehouse,
  count: number,
  perRequest: number,
  inFlight: number,
  cpuSeconds: (pid: number) => number | null,
  progress: (done: number, total: number) => void,
  makeDoc: (i: number) => Record<string, unknown> = (i) => ({ name: `Bulk ${i + 1}`, city: CITIES[i % CITIES.length], founded: 1800 + ((i * 37) % 220) }),
): Promise<BulkLoad> {
  const docs = Array.from({ length: count }, (_, i) => makeDoc(i));
  const bodies: string[] = [];
  for (let i = 0; i < docs.length; i += perRequest) bodies.push(JSON.stringify(docs.slice(i, i + perRequest)));
  const before = await api(g, 'GET', '/v1/zoos?limit=1');
  const countBefore = Number(before.headers.get('x-total-count') ?? 0);
  let next = 0;
  let done = 0;
  const cpuBefore = cpuSeconds(g.server.pid);
  const loaderBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  let unavailable = 0;
  // A 503 (the server's overload guard, maintenance) is waited out for its Retry-After, at most a
  // second at a time; any other failure ends the load.
  const waitedOut = async (status: number, headers: { get(name: string): string | null }) => {
    if (status !== 503) return false;
    unavailable++;
    await new Promise((r) => setTimeout(r, Math.min(1000, 1000 * Number(headers.get('retry-after') ?? 1))));
    return true;
  };
  const worker = async () => {
    for (let i = next++; i < bodies.length; i = next++) {
      let res;
      let text: string;
      do {
        res = await fetch(`${g.server.url}/v1/zoos`, {
          method: 'POST',
          headers: { authorization: `Bearer ${g.token}`, accept: 'application/json', 'content-type': 'application/json' },
          body: bodies[i],
          dispatcher: g.agent,
        });
        text = await res.text();
      } while (await waitedOut(res.status, res.headers));
      if (res.status !== 202) throw new Error(`bulk POST /v1/zoos answered ${res.status}: ${text.slice(0, 300)}`);
      const location = res.headers.get('location')!;
      for (;;) {
        await new Promise((r) => setTimeout(r, 50));
        const r = await api(g, 'GET', location);
        if (await waitedOut(r.status, r.headers)) continue;
        if (r.status !== 200) throw new Error(`GET ${location} answered ${r.status}: ${r.text.slice(0, 300)}`);
        if (r.body.status !== 'done') continue;
        if (r.body.succeeded !== r.body.total) throw new Error(`job ${location} created ${r.body.succeeded} of ${r.body.total} zoos: ${r.text.slice(0, 300)}`);
        done += r.body.total;
        progress(done, count);
        break;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, bodies.length) }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpuAfter = cpuSeconds(g.server.pid);
  const loader = process.cpuUsage(loaderBefore);
  const after = await api(g, 'GET', '/v1/zoos?limit=1');
  const created = Number(after.headers.get('x-total-count') ?? 0) - countBefore;
  if (created !== count) throw new Error(`the bulk load created ${created} zoos, expected ${count}`);
  const serverCpuSeconds = cpuBefore !== null && cpuAfter !== null ? cpuAfter - cpuBefore : null;
  return {
    records: count,
    perRequest,
    inFlight,
    requests: bodies.length,
    seconds,
    recordsPerSecond: count / seconds,
    serverCpuSeconds,
    recordsPerCpuSecond: serverCpuSeconds ? count / serverCpuSeconds : null,
    loaderCpuSeconds: (loader.user + loader.system) / 1e6,
    unavailable,
  };
}

/**
 * A fresh PostgreSQL database on BENCH_PG_URL's server (default the machine's), dropped first if
 * a run before left one of that name: its URL. BENCH_SCALE_ENGINE=postgres, BENCH_MIGRATE_PG=1.
 */
export async function freshPgDatabase(name: string): Promise<string> {
  const admin = new URL(process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  const client = new pg.Client({ connectionString: admin.href });
  await client.connect();
  try {
    await client.query(`drop database if exists ${name} with (force)`);
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  admin.pathname = `/${name}`;
  return admin.href;
}
