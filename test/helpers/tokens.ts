// Access tokens for tests, obtained exactly as a user would: register a client with the CLI
// (`gatehouse client add`; in process, the model calls it makes), then ask the token endpoint with
// the client_credentials grant. Each helper takes either harness (TestServer or InProcessApp).
// Every client is its own subject (`client:<id>`), so two clients are two owners.
import assert from 'node:assert/strict';
import type { RunResult, TestServer } from './server.js';
import type { InProcessApp } from './app.js';
import type { Target } from './oauth.js';

export const ALL_SCOPES = 'zoos:read zoos:write animals:read animals:write orders:read orders:write articles:read articles:write';

const registered = new WeakMap<Target, Set<string>>();

export function secretOf(clientId: string): string {
  return `secret-${clientId}-s3cret`.padEnd(40, '0');
}

/** Registers a confidential client_credentials client once per server (no --scope: it may ask for any scope). */
export function registerClient(server: TestServer, clientId: string, options?: { scope?: string; tokenType?: 'bearer' | 'mac' }): void;
export function registerClient(server: InProcessApp, clientId: string, options?: { scope?: string; tokenType?: 'bearer' | 'mac' }): Promise<void>;
export function registerClient(server: Target, clientId: string, options: { scope?: string; tokenType?: 'bearer' | 'mac' } = {}): void | Promise<void> {
  let seen = registered.get(server);
  if (!seen) registered.set(server, (seen = new Set()));
  if (seen.has(clientId)) return;
  const args = ['client', 'add', clientId, '--secret', secretOf(clientId), '--grant', 'client_credentials'];
  if (options.scope) args.push('--scope', options.scope);
  if (options.tokenType) args.push('--token-type', options.tokenType);
  const check = (r: RunResult) => {
    // A second server on the same data dir finds the client registered by the first one.
    if (r.status !== 0 && /already exists/.test(r.stderr)) {
      seen.add(clientId);
      return;
    }
    assert.equal(r.status, 0, `gatehouse client add ${clientId} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
    seen.add(clientId);
  };
  const r = server.cli(args);
  return r instanceof Promise ? r.then(check) : check(r);
}

/** POST {auth_url}/token with grant_type=client_credentials, client authenticated with HTTP Basic. */
export async function requestToken(server: Target, clientId: string, scope?: string) {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (scope !== undefined) form.set('scope', scope);
  const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secretOf(clientId))}`).toString('base64');
  const res = await server.fetch(`${server.authUrl}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization: `Basic ${basic}` },
    body: form.toString(),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

/** An access token of client `clientId` with exactly `scope` (default: every scope of the demo deployment). */
export async function clientToken(server: Target, clientId: string, scope: string = ALL_SCOPES): Promise<string> {
  await (registerClient as (s: Target, id: string) => void | Promise<void>)(server, clientId);
  const res = await requestToken(server, clientId, scope);
  assert.equal(res.status, 200, `token request for ${clientId} failed: ${JSON.stringify(res.body)}`);
  assert.equal(String(res.body.token_type).toLowerCase(), 'bearer');
  assert.equal(typeof res.body.access_token, 'string');
  if (res.body.scope !== undefined) assert.deepEqual(String(res.body.scope).split(' ').sort(), scope.split(' ').sort());
  return res.body.access_token as string;
}

/** A client of the resource API that sends one bearer token on every request. */
export interface ApiClient {
  token: string;
  json(method: string, target: string, body?: unknown, headers?: Record<string, string>): ReturnType<TestServer['json']>;
  fetch(target: string, init?: Parameters<TestServer['fetch']>[1]): ReturnType<TestServer['fetch']>;
}

export function asBearer(server: Target, token: string): ApiClient {
  return {
    token,
    json: (method, target, body, headers = {}) => server.json(method, target, body, { authorization: `Bearer ${token}`, ...headers }),
    fetch: (target, init = {}) =>
      server.fetch(target, { ...init, headers: { authorization: `Bearer ${token}`, ...((init.headers as Record<string, string>) ?? {}) } }),
  };
}

/** clientToken + asBearer in one step. */
export async function apiClient(server: Target, clientId: string, scope: string = ALL_SCOPES): Promise<ApiClient> {
  return asBearer(server, await clientToken(server, clientId, scope));
}

/** Asserts the JSON error policy: status, application/json, `{ error: string, detail: object }`, no stack. */
export function assertApiError(res: { status: number; headers: Headers | { get(name: string): string | null }; body: any; text: string }, status: number, detailKeys?: string[]): void {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(typeof res.body?.error, 'string', `error body: ${res.text}`);
  assert.ok(res.body.error.length > 0);
  assert.equal(typeof res.body.detail, 'object');
  assert.ok(res.body.detail !== null && !Array.isArray(res.body.detail));
  assert.doesNotMatch(res.text, /\n\s+at\s|node_modules|\.ts:\d+|\.js:\d+/);
  if (detailKeys) for (const k of detailKeys) assert.ok(k in res.body.detail, `detail should name ${k}: ${res.text}`);
}
