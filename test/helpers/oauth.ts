// Helpers for the authorization server's tests: register users and clients with the CLI (in
// process, by the model calls it makes: ./app.ts), walk the login/consent pages with a cookie jar,
// and call the token endpoints. Each takes either harness (a spawned TestServer or an InProcessApp).
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { TestServer, Json, RunResult } from './server.js';
import type { InProcessApp } from './app.js';

/** Either harness: the spawned server or the in-process app. */
export type Target = TestServer | InProcessApp;

export interface RegisteredClient {
  client_id: string;
  client_secret?: string;
  [k: string]: unknown;
}

/** The CLI's answer: at once from a spawned server's CLI, a promise from the in-process app's. */
function onResult<T>(r: RunResult | Promise<RunResult>, read: (r: RunResult) => T): T | Promise<T> {
  return r instanceof Promise ? r.then(read) : read(r);
}

export function addUser(server: Target, username: string, password: string): Json;
export function addUser(server: InProcessApp, username: string, password: string): Promise<Json>;
export function addUser(server: Target, username: string, password: string): Json | Promise<Json> {
  return onResult(server.cli(['user', 'add', username, '--password-stdin'], password), (r) => {
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout);
  });
}

export function addClient(server: Target, id: string, args: string[]): RegisteredClient;
export function addClient(server: InProcessApp, id: string, args: string[]): Promise<RegisteredClient>;
export function addClient(server: Target, id: string, args: string[]): RegisteredClient | Promise<RegisteredClient> {
  return onResult(server.cli(['client', 'add', id, ...args]), (r) => {
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as RegisteredClient;
  });
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function basic(id: string, secret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return 'Basic ' + Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64');
}

export function unescapeHtml(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

export function hiddenField(html: string, name: string): string {
  const m = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html);
  assert.ok(m, `hidden field ${name} not found in:\n${html.slice(0, 2000)}`);
  return unescapeHtml(m[1]);
}

/** A browser's cookies for the tests that walk the pages with fetch. */
export class CookieJar {
  readonly cookies = new Map<string, string>();
  readonly raw: string[] = [];
  store(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      this.raw.push(line);
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

export interface Page {
  status: number;
  headers: Headers;
  html: string;
  location: string | null;
}

export async function page(server: Target, jar: CookieJar, target: string, form?: Record<string, string | string[]>): Promise<Page> {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(form ?? {})) for (const item of Array.isArray(v) ? v : [v]) body.append(k, item);
  const res = await server.fetch(target, {
    method: form ? 'POST' : 'GET',
    headers: {
      accept: 'text/html',
      cookie: jar.header(),
      ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    body: form ? body.toString() : undefined,
  });
  jar.store(res.headers as unknown as Headers);
  return { status: res.status, headers: res.headers as unknown as Headers, html: await res.text(), location: res.headers.get('location') };
}

export function authorizeUrl(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
  return `/oauth/authorize?${q}`;
}

/** Opens the authorization URL, signs in if asked, and returns the consent page. */
export async function signIn(server: Target, jar: CookieJar, target: string, username: string, password: string): Promise<Page> {
  // The page is wanted every time, even where an earlier grant would be remembered
  // (test/oauth-remembered-consent.test.ts covers skipping it).
  if (/\/authorize\?/.test(target) && !/[?&]prompt=/.test(target)) target += '&prompt=consent';
  let p = await page(server, jar, target);
  if (p.status === 200 && p.html.includes('name="password"')) {
    const posted = await page(server, jar, '/oauth/authorize', {
      request: hiddenField(p.html, 'request'),
      csrf_token: hiddenField(p.html, 'csrf_token'),
      step: 'login',
      username,
      password,
    });
    assert.equal(posted.status, 303, posted.html);
    p = await page(server, jar, posted.location!);
  }
  assert.equal(p.status, 200, p.html);
  assert.match(p.html, /name="decision" value="allow"/);
  return p;
}

export interface Decision {
  decision?: 'allow' | 'deny' | 'allow_read';
  scope?: string[];
  ttl?: number | string;
}

/** Submits the consent form of `path` (all offered scopes and the first validity unless told otherwise). */
export async function decide(server: Target, jar: CookieJar, consent: Page, d: Decision = {}, path = '/oauth/authorize'): Promise<Page> {
  const offered = [...consent.html.matchAll(/name="scope" value="([^"]+)"/g)].map((m) => unescapeHtml(m[1]));
  const ttl = d.ttl ?? /name="ttl" value="(\d+)" checked/.exec(consent.html)?.[1] ?? '3600';
  return page(server, jar, path, {
    request: hiddenField(consent.html, 'request'),
    csrf_token: hiddenField(consent.html, 'csrf_token'),
    step: 'consent',
    decision: d.decision ?? 'allow',
    scope: d.scope ?? offered,
    ttl: String(ttl),
  });
}

/** The query (code grant) or fragment (implicit) parameters of a redirect to the client. */
export function redirectParams(location: string, from: 'query' | 'fragment' = 'query'): URLSearchParams {
  const url = new URL(location);
  return new URLSearchParams(from === 'query' ? url.search : url.hash.slice(1));
}

/** Runs the whole code flow up to the code. */
export async function obtainCode(
  server: Target,
  opts: { clientId: string; redirectUri?: string; username: string; password: string; scope?: string; challenge?: string; state?: string; decision?: Decision; jar?: CookieJar },
): Promise<{ code: string; params: URLSearchParams; jar: CookieJar }> {
  const jar = opts.jar ?? new CookieJar();
  const consent = await signIn(
    server,
    jar,
    authorizeUrl({
      response_type: 'code',
      client_id: opts.clientId,
      redirect_uri: opts.redirectUri,
      scope: opts.scope,
      state: opts.state ?? 'st-' + randomBytes(4).toString('hex'),
      code_challenge: opts.challenge,
      code_challenge_method: opts.challenge ? 'S256' : undefined,
    }),
    opts.username,
    opts.password,
  );
  const done = await decide(server, jar, consent, opts.decision);
  assert.equal(done.status, 302, done.html);
  const params = redirectParams(done.location!);
  assert.ok(params.get('code'), `no code in ${done.location}`);
  return { code: params.get('code')!, params, jar };
}

/** POST to a token-style endpoint, form-encoded by default. */
export async function post(
  server: Target,
  endpoint: string,
  params: Record<string, string>,
  opts: { json?: boolean; auth?: string; raw?: string; contentType?: string } = {},
) {
  const body = opts.raw ?? (opts.json ? JSON.stringify(params) : new URLSearchParams(params).toString());
  const res = await server.fetch(`/oauth/${endpoint}`, {
    method: 'POST',
    headers: {
      accept: 'application/json',
      'content-type': opts.contentType ?? (opts.json ? 'application/json' : 'application/x-www-form-urlencoded'),
      ...(opts.auth ? { authorization: opts.auth } : {}),
    },
    body,
  });
  const text = await res.text();
  let json: Json = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = { __text: text };
  }
  return { status: res.status, headers: res.headers, body: json };
}

export async function introspect(server: Target, token: string, client: RegisteredClient) {
  const r = await post(server, 'introspection', { token }, { auth: basic(client.client_id, client.client_secret!) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
