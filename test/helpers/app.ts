// In-process test harness: the same application the server runs (`buildApp` of src/main/app.ts)
// on an in-memory SQLite database, answered with Fastify's `inject` — no process, no port, no TLS.
// For tests whose point is HTTP semantics (status, headers, bodies, the access and OAuth rules);
// lifecycle, TLS, connections, outages, crashes, browsers and the CLI keep the spawned server of
// ./server.ts (docs/architecture.md, "Tests"). It has the surface tests use on TestServer:
// url, authUrl, fetch(), json(), cli() (the seeding commands, by model calls) and cleanup().
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import inject, { type DispatchFunc } from 'light-my-request';
import { Headers, Request, Response, fetch as undiciFetch, type RequestInit } from 'undici';
import { resolveConfig, type Config } from '../../src/platform/config/load.js';
import { loadCertificate, type Certificate } from '../../src/platform/http/tls.js';
import type { AppContext } from '../../src/contract/context.js';
import { buildApp } from '../../src/main/app.js';
import { closeContext, openContext } from '../../src/main/context.js';
import { AlreadyExists, InvalidInput, NotApplicable } from '../../src/contract/errors.js';
import { createUser, describeUser, setUserAdmin } from '../../src/authserver/model/users.js';
import { describeClient, registerClient } from '../../src/authserver/model/clients.js';
import { DEMO_CONFIG_FILE, jsonRequest, runCli, testConfig, writeConfig, type Json, type RunResult } from './server.js';

export interface AppOptions {
  /** Merged over the demo config (with auth.demo off unless set), as startServer's `config`. */
  config?: Json;
  /** Use this config object as is instead of merging. */
  rawConfig?: Json;
  /**
   * Keep the database in a file of the temporary data dir instead of memory, so that the real CLI
   * can be spawned on it for the commands cli() does not run in-process (grant list, webhook list…).
   */
  file?: boolean;
  /** The app's log level (default warn, as a spawned server's LOG_LEVEL); output() returns the lines. */
  logLevel?: string;
  /** Another database instead (a PostgreSQL URL from createPgDatabase). */
  database?: string;
  /** More environment (e.g. GATEHOUSE_SECRET_KEY, shared by two apps on one database as by the instances of a deployment). */
  env?: Record<string, string>;
}

// Fetch's default request headers, which the tests' expectations were written against.
const FETCH_DEFAULTS: Record<string, string> = { accept: '*/*', 'accept-language': '*', 'sec-fetch-mode': 'cors', 'user-agent': 'undici', 'accept-encoding': 'gzip, deflate' };

// The event loop is the test's too (module loading, key generation, the test's own work): its
// delay says nothing about the app's load, so no overload 503s (test/outages.test.ts covers them).
const APP_ENV = { GATEHOUSE_MAX_EVENT_LOOP_DELAY: '0' };

// No port is listened on; the URL is the one the app believes it serves (links, Location, issuer).
const PUBLIC_PORT = 8443;

export class InProcessApp {
  /**
   * What the app's HTTPS server calls for each request (src/main/app.ts: the method override,
   * then Fastify), called by light-my-request — Fastify's own inject would skip the override.
   */
  private readonly dispatch: DispatchFunc;

  constructor(
    readonly app: FastifyInstance,
    /** The application's context: seed through the model with it (src/authserver/model/*). */
    readonly ctx: AppContext,
    readonly dataDir: string,
    readonly configFile: string,
    private readonly logLines: string[],
  ) {
    this.dispatch = app.server.listeners('request')[0] as DispatchFunc;
  }

  /** The app's log lines so far (JSON, one per line), as TestServer.output() gives a process's. */
  output(): string {
    return this.logLines.join('');
  }

  get url(): string {
    return this.ctx.config.publicUrl;
  }

  get authUrl(): string {
    return `${this.url}/oauth`;
  }

  /** fetch relative to the app's URL (or an absolute URL of it; any other URL goes to the network). */
  async fetch(target: string, init: RequestInit = {}): Promise<Response> {
    const url = new URL(/^https?:/.test(target) ? target : this.url + target);
    if (url.origin !== new URL(this.url).origin) return undiciFetch(target, { redirect: 'manual', ...init });
    // A Request normalises what fetch would send: the method's case, the body and its content-type.
    const request = new Request(url, { ...init, redirect: 'manual' } as RequestInit);
    const headers: Record<string, string> = { ...FETCH_DEFAULTS, host: url.host };
    for (const [k, v] of request.headers) headers[k] = v;
    const payload = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const res = await this.send(request.method, url, headers, payload);
    const out = new Headers();
    for (const [k, v] of Object.entries(res.headers)) {
      if (v === undefined) continue;
      for (const item of Array.isArray(v) ? v : [v]) out.append(k, String(item));
    }
    const empty = request.method === 'HEAD' || [204, 205, 304].includes(res.statusCode);
    return new Response(empty ? null : res.rawPayload, { status: res.statusCode, statusText: res.statusMessage, headers: out });
  }

  /** As undici's `request`: only the headers given (no fetch defaults such as Accept: *\/*). */
  async request(target: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}) {
    const url = new URL(/^https?:/.test(target) ? target : this.url + target);
    const res = await this.send(options.method ?? 'GET', url, { host: url.host, ...options.headers }, options.body);
    return { statusCode: res.statusCode, headers: res.headers, body: { arrayBuffer: async () => res.rawPayload, text: async () => res.payload } };
  }

  private send(method: string, url: URL, headers: Record<string, string>, payload?: string | Buffer) {
    return inject(this.dispatch, { method: method as 'GET', url: url.pathname + url.search, headers, payload, remoteAddress: '127.0.0.1' });
  }

  /** JSON request helper: returns status, headers and the parsed body (null when empty). */
  json(method: string, target: string, body?: unknown, headers: Record<string, string> = {}) {
    return jsonRequest((t, init) => this.fetch(t, init), method, target, body, headers);
  }

  /**
   * The CLI's seeding commands (`user add` with a password, `user admin on|off`, `client add`)
   * run as the model calls the CLI makes and print what it prints. Anything else — another
   * command, or a seeding command the model refuses, whose message is the CLI's to word — runs
   * the real CLI, which needs the database in a file (`startApp({ file: true })`); in memory a
   * refusal answers status 1 with the model's message.
   */
  async cli(args: string[], input?: string): Promise<RunResult> {
    const inMemory = this.ctx.config.storage.database === 'sqlite::memory:';
    try {
      const out = await seedCommand(this.ctx, args, input);
      if (out !== undefined) return { status: 0, stdout: JSON.stringify(out, null, 2) + '\n', stderr: '' };
    } catch (e) {
      if (!(e instanceof InvalidInput || e instanceof AlreadyExists || e instanceof NotApplicable)) throw e;
      if (inMemory) return { status: 1, stdout: '', stderr: `gatehouse: ${e.message}\n` };
    }
    if (inMemory) throw new Error(`gatehouse ${args.join(' ')}: runs only on a database file (startApp({ file: true }))`);
    return runCli([...args, '--config', this.configFile, '--data-dir', this.dataDir], { input });
  }

  async cleanup(): Promise<void> {
    await this.app.close();
    await closeContext(this.ctx);
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** Builds the app on a fresh in-memory database (or a file with `file: true`), ready for requests. */
export async function startApp(options: AppOptions = {}): Promise<InProcessApp> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-app-'));
  const raw = options.rawConfig ?? testConfig(options.config);
  const database = options.database ?? (options.file ? `sqlite:${path.join(dataDir, 'gatehouse.db')}` : 'sqlite::memory:');
  const settled = { ...raw, storage: { ...raw.storage, database } };
  const configFile = writeConfig(dataDir, settled);
  const config = resolveConfig(settled, configFile, { dataDir, port: PUBLIC_PORT, env: { ...APP_ENV, ...options.env } });
  const ctx = await openContext(config);
  try {
    const logLines: string[] = [];
    const app = await buildApp(ctx, await certificate(), { logLevel: options.logLevel ?? 'warn', logStream: { write: (line) => void logLines.push(line) } });
    await app.ready();
    return new InProcessApp(app, ctx, dataDir, configFile, logLines);
  } catch (e) {
    await closeContext(ctx);
    throw e;
  }
}

// buildApp wants a certificate for its HTTPS server (never listened on here): one per test process,
// the suite's (GATEHOUSE_TEST_TLS_DIR, made by scripts/run-tests.mjs) when there is one.
let cert: Promise<Certificate> | null = null;
function certificate(): Promise<Certificate> {
  return (cert ??= (async () => {
    const shared = process.env.GATEHOUSE_TEST_TLS_DIR;
    const dir = shared ?? mkdtempSync(path.join(tmpdir(), 'gatehouse-cert-'));
    const config = resolveConfig(testConfig(), DEMO_CONFIG_FILE, { dataDir: dir, port: PUBLIC_PORT, env: {} });
    const made = await loadCertificate(config);
    if (!shared) rmSync(dir, { recursive: true, force: true });
    return made;
  })());
}

// `gatehouse client add` flags (src/cli/client.ts) and the model field each one sets.
const CLIENT_VALUES: Record<string, string> = {
  '--secret': 'secret',
  '--scope': 'scope',
  '--token-type': 'tokenType',
  '--name': 'name',
  '--uri': 'uri',
  '--id-token-signed-response-alg': 'idTokenSignedResponseAlg',
};
const CLIENT_LISTS: Record<string, string> = { '--redirect-uri': 'redirectUris', '--grant': 'grantTypes', '--origin': 'origins', '--post-logout-redirect-uri': 'postLogoutRedirectUris' };
const CLIENT_SWITCHES: Record<string, string> = { '--public': 'public', '--verified': 'verified', '--introspect': 'introspect', '--require-pkce': 'requirePkce', '--require-par': 'requirePar', '--dpop': 'dpopBound' };

/** What the CLI prints for a seeding command, from the same model calls; undefined for other commands. */
async function seedCommand(ctx: AppContext, args: string[], input?: string): Promise<Json | undefined> {
  const [noun, verb, name, ...rest] = args;
  if (noun === 'user' && verb === 'add') {
    let password: string | undefined;
    let admin = false;
    for (let i = 0; i < rest.length; i++) {
      if (rest[i] === '--password') password = rest[++i];
      else if (rest[i] === '--password-stdin') password = (input ?? '').replace(/\r?\n$/, '');
      else if (rest[i] === '--admin') admin = true;
      else return undefined;
    }
    // Without a password the CLI generates and prints one: the real CLI's to do.
    if (password === undefined) return undefined;
    return describeUser(await createUser(ctx, name, password, { admin }));
  }
  if (noun === 'user' && verb === 'admin' && (rest[0] === 'on' || rest[0] === 'off') && rest.length === 1) {
    const changed = await setUserAdmin(ctx, name, rest[0] === 'on');
    if (!changed) throw new InvalidInput(`there is no user named "${name}"`, {});
    return describeUser(changed);
  }
  if (noun === 'client' && verb === 'add') {
    const input: Record<string, unknown> = { id: name, redirectUris: [], grantTypes: [], origins: [], postLogoutRedirectUris: [], scope: null, tokenType: 'bearer', uri: null };
    for (let i = 0; i < rest.length; i++) {
      const flag = rest[i];
      if (flag in CLIENT_VALUES) input[CLIENT_VALUES[flag]] = rest[++i];
      else if (flag in CLIENT_LISTS) (input[CLIENT_LISTS[flag]] as string[]).push(rest[++i]);
      else if (flag in CLIENT_SWITCHES) input[CLIENT_SWITCHES[flag]] = true;
      else return undefined;
    }
    const { client, secret } = await registerClient(ctx, input as unknown as Parameters<typeof registerClient>[1]);
    const out = describeClient(client);
    if (secret !== null) out.client_secret = secret;
    return out;
  }
  return undefined;
}
