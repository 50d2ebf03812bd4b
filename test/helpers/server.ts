// Black-box test harness: starts the real gatehouse process (dist/cli/main.js) over HTTPS on a
// free port with a temporary data dir, and talks to it with undici trusting its certificate.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { Agent, fetch, type RequestInit, type Response } from 'undici';
import pg from 'pg';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = path.join(ROOT, 'dist/cli/main.js');
export const DEMO_CONFIG_FILE = path.join(ROOT, 'examples/zoo/gatehouse.yaml');

export type Json = any;

export function demoConfig(): Json {
  return parseYaml(readFileSync(DEMO_CONFIG_FILE, 'utf8'));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep merge for config overrides: objects merge, everything else replaces (null removes nothing). */
export function merge(base: Json, over: Json): Json {
  if (!isObject(base) || !isObject(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = merge(base[k], v);
  return out;
}

export interface StartOptions {
  /** Merged over the demo config (with auth.demo off unless set). */
  config?: Json;
  /** Use this config object as is instead of merging. */
  rawConfig?: Json;
  env?: Record<string, string | undefined>;
  args?: string[];
  dataDir?: string;
  /** Start a second process on an existing data dir / config. */
  configFile?: string;
  /** The server makes its development certificate itself, as on a first start, instead of the suite's (see shareCertificate). */
  ownCertificate?: boolean;
}

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export class TestServer {
  readonly agent: Agent;
  constructor(
    readonly child: ChildProcess,
    readonly url: string,
    readonly dataDir: string,
    readonly configFile: string,
    readonly ca: string,
    private readonly outputChunks: string[],
    private readonly ownsDataDir: boolean,
    readonly env: Record<string, string | undefined>,
  ) {
    this.agent = new Agent({ connect: { ca, rejectUnauthorized: true }, keepAliveTimeout: 1000 });
  }

  get authUrl(): string {
    return `${this.url}/oauth`;
  }

  output(): string {
    return this.outputChunks.join('');
  }

  /** fetch relative to the server's URL (or an absolute URL), trusting the server's certificate. */
  fetch(target: string, init: RequestInit = {}): Promise<Response> {
    const url = /^https:/.test(target) ? target : this.url + target;
    return fetch(url, { redirect: 'manual', ...init, dispatcher: this.agent });
  }

  /** JSON request helper: returns status, headers and the parsed body (null when empty). */
  json(method: string, target: string, body?: unknown, headers: Record<string, string> = {}) {
    return jsonRequest((t, init) => this.fetch(t, init), method, target, body, headers);
  }

  /** Runs a gatehouse CLI command against this server's config and data dir. */
  cli(args: string[], input?: string): RunResult {
    return runCli([...args, '--config', this.configFile, '--data-dir', this.dataDir], { env: this.env, input });
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    await this.agent.close().catch(() => undefined);
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.child.exitCode;
    const exited = new Promise<number | null>((resolve) => this.child.once('exit', (code) => resolve(code)));
    this.child.kill(signal);
    const code = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
    if (code === null && this.child.exitCode === null) this.child.kill('SIGKILL');
    return code;
  }

  async cleanup(): Promise<void> {
    await this.stop();
    if (this.ownsDataDir) rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** A JSON request through `fetch` (TestServer's or the in-process app's): status, headers, the parsed body (null when empty) and the text. */
export async function jsonRequest(
  fetchFn: (target: string, init: RequestInit) => Promise<Response>,
  method: string,
  target: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetchFn(target, {
    method,
    headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: Json = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = { __text: text };
    }
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

export function tempDir(prefix = 'gatehouse-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

export function writeConfig(dir: string, config: Json): string {
  const file = path.join(dir, 'gatehouse.json');
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

export function testConfig(over: Json = {}): Json {
  return merge(merge(demoConfig(), { auth: { demo: false }, server: { port: 0 } }), over);
}

export function runCli(args: string[], options: { env?: Record<string, string | undefined>; input?: string } = {}): RunResult {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...options.env },
    input: options.input,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const START_TIMEOUT_MS = 90_000;

/** The names the suite's development certificate holds: those of a server on a loopback address. */
const CERTIFICATE_NAMES = new Set(['localhost', '127.0.0.1', '::1', '[::1]', '0.0.0.0', '::']);

/**
 * Puts the suite's development certificate (made once by scripts/run-tests.mjs in
 * GATEHOUSE_TEST_TLS_DIR, by the server's own code) in a new data dir, where the server finds it
 * as on any later start: making one loads an X.509 toolkit of some 300 modules and was a tenth of
 * every server start's CPU time. Only for a server whose names it holds; http-lifecycle and
 * server-lifecycle watch a server make its own.
 */
function shareCertificate(dataDir: string, config: Json, args: string[]): void {
  const shared = process.env.GATEHOUSE_TEST_TLS_DIR;
  if (!shared || !existsSync(path.join(shared, 'tls', 'key.pem')) || args.includes('--host')) return;
  const names = [config?.server?.host, config?.server?.publicUrl, config?.auth?.url].filter((n) => n !== undefined && n !== null);
  if (!names.every((n) => CERTIFICATE_NAMES.has(/^https:/.test(n) ? new URL(n).hostname : n))) return;
  mkdirSync(path.join(dataDir, 'tls'), { mode: 0o700 });
  copyFileSync(path.join(shared, 'tls', 'key.pem'), path.join(dataDir, 'tls', 'key.pem'));
  copyFileSync(path.join(shared, 'tls', 'cert.pem'), path.join(dataDir, 'tls', 'cert.pem'));
}

export async function startServer(options: StartOptions = {}): Promise<TestServer> {
  const ownsDataDir = !options.dataDir;
  const dataDir = options.dataDir ?? tempDir();
  const config = options.rawConfig ?? testConfig(options.config);
  const configFile = options.configFile ?? writeConfig(dataDir, config);
  if (ownsDataDir && !options.configFile && !options.ownCertificate) shareCertificate(dataDir, config, options.args ?? []);
  // No overload 503s unless a test asks for them (http-failures, turns-under-load set their own
  // limit): with several test files at once on two cores, a server's event-loop delay measures the
  // machine's load, not its own, and a 503 in a test about something else is a false failure
  // (as the in-process harness, test/helpers/app.ts).
  const env = { ...process.env, LOG_LEVEL: 'warn', PORT: undefined, HOST: undefined, DATABASE_URL: undefined, REDIS_URL: undefined, GATEHOUSE_MAX_EVENT_LOOP_DELAY: '0', ...options.env };
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--config', configFile, '--data-dir', dataDir, '--port', '0', ...(options.args ?? [])],
    { cwd: ROOT, env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const chunks: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    // A server that did not start is killed: left running, it would keep the test file's process
    // alive after its tests (the runner then waits for that file forever). The wait is long
    // because a loaded machine (six test runs on two cores) has taken over 30 s to start one.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start in ${START_TIMEOUT_MS / 1000} s:\n${chunks.join('')}`));
    }, START_TIMEOUT_MS);
    const onData = (d: Buffer) => {
      chunks.push(d.toString());
      const m = /gatehouse listening on (https:\/\/\S+)/.exec(chunks.join(''));
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => chunks.push(d.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${chunks.join('')}`));
    });
  });
  const ca = readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8');
  return new TestServer(child, url, dataDir, configFile, ca, chunks, ownsDataDir, env);
}

/** A loopback port nobody listens on now (for a server or a port option the test must know in advance). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export const pgAvailable = process.env.GATEHOUSE_TEST_PG === '1';
export const redisAvailable = process.env.GATEHOUSE_TEST_REDIS === '1';
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A fresh PostgreSQL database for one test; drop() removes it. */
export async function createPgDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `gatehouse_t_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 7)}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(TEST_DATABASE_URL);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}
