// An MCP host in a web page (docs/mcp.md, "A host in a web page"): a page on its own loopback origin,
// never registered, does the whole MCP authorization journey with fetch in headless Chromium —
// POST /mcp → 401 whose WWW-Authenticate it reads → RFC 9728 and RFC 8414 documents → registration
// with a redirect URI on its own origin → the user's sign-in and consent (driven in the browser)
// with PKCE and resource={publicUrl}/mcp → the code exchanged from the page → initialize and
// tools/call with the token, answers read. Then the attacks: a page of another origin sending the
// same token cannot read the answer; nothing, preflight or answer, ever allows credentials.
// Spawned server (test/helpers/server.ts), not in process: Chromium enforces CORS between two real origins.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { startServer, type Json, type TestServer } from './helpers/server.js';
import { addUser } from './helpers/oauth.js';

const PROTOCOL = '2025-06-18';
let server: TestServer;
let browser: Browser;
let context: BrowserContext;
const pages: http.Server[] = [];
/** Every answer of gatehouse the browser received, with its headers (preflights are checked apart: Playwright does not report them). */
const answers: { url: string; status: number; headers: Record<string, string> }[] = [];

/** A host's page on `host` (a loopback origin of its own): an empty document its scripts run in. */
async function servePage(host: '127.0.0.1' | 'localhost'): Promise<string> {
  const s = http.createServer((_req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end('<!doctype html><html lang="en"><title>Web IDE</title><p>An MCP host</p>');
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  pages.push(s);
  return `http://${host}:${(s.address() as AddressInfo).port}`;
}

before(async () => {
  server = await startServer({ config: { auth: { registration: 'open' } } });
  addUser(server, 'ida', 'ida-password-1');
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  // The test server's certificate is self-signed; the pages' own origins are plain http on loopback.
  context = await browser.newContext({ ignoreHTTPSErrors: true });
  context.on('response', (response) => {
    if (response.url().startsWith(server.url)) answers.push({ url: response.url(), status: response.status(), headers: response.headers() });
  });
});
after(async () => {
  await context?.close();
  await browser?.close();
  await server?.cleanup();
  for (const s of pages) await new Promise((r) => s.close(r));
});

// The pages' scripts are strings, not functions: the test runner's TypeScript transform would add
// helpers the page lacks. `gatehouse` is the server's URL; `mcp` its MCP endpoint.
const prelude = () => `
  const gatehouse = ${JSON.stringify(server.url)};
  const mcp = gatehouse + '/mcp';
  const b64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  const rpc = (id, method, params, token) => fetch(mcp, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '${PROTOCOL}', ...(token ? { authorization: 'Bearer ' + token } : {}) },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
  });
  const tryRead = async (make) => { try { const res = await make(); return { read: res.status, body: await res.text() }; } catch (e) { return { blocked: e.name }; } };
`;

let accessToken = '';

test('a never-registered host in a page: 401 → metadata → registration → PKCE sign-in with resource → token → initialize and tools/call, all read by the page', async () => {
  const host = await servePage('127.0.0.1');
  const page = await context.newPage();
  await page.goto(`${host}/`);

  // 1-3: the 401 and its challenge, the two metadata documents, the registration; the authorization URL.
  const start = (await page.evaluate(`(async () => {
    ${prelude()}
    const first = await rpc(1, 'initialize', { protocolVersion: '${PROTOCOL}', capabilities: {}, clientInfo: { name: 'web-ide', version: '1' } });
    const challenge = first.headers.get('www-authenticate');
    const refusal = await first.json();
    const prmUrl = /resource_metadata="([^"]+)"/.exec(challenge)[1];
    const prm = await (await fetch(prmUrl)).json();
    const issuer = new URL(prm.authorization_servers[0]);
    // RFC 8414 §3.1: the well-known segment between the issuer's host and its path.
    const asUrl = issuer.origin + '/.well-known/oauth-authorization-server' + (issuer.pathname === '/' ? '' : issuer.pathname);
    const as = await (await fetch(asUrl)).json();
    const redirectUri = location.origin + '/callback';
    const registration = await fetch(as.registration_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Web IDE', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'] }),
    });
    const client = await registration.json();
    const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
    const codeChallenge = b64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
    const state = b64url(crypto.getRandomValues(new Uint8Array(16)));
    sessionStorage.setItem('host', JSON.stringify({ verifier, state, clientId: client.client_id, tokenEndpoint: as.token_endpoint, resource: prm.resource, redirectUri }));
    const authorize = new URL(as.authorization_endpoint);
    authorize.search = new URLSearchParams({
      response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri, scope: prm.scopes_supported.join(' '),
      state, code_challenge: codeChallenge, code_challenge_method: 'S256', resource: prm.resource, prompt: 'consent',
    }).toString();
    return { status: first.status, challenge, refusal, prmUrl, prm, asUrl, issuer: as.issuer, registered: registration.status, client, authorize: authorize.href };
  })()`)) as Json;
  assert.equal(start.status, 401);
  assert.match(start.challenge, /^Bearer /);
  assert.equal(start.prmUrl, `${server.url}/.well-known/oauth-protected-resource/mcp`);
  assert.equal(start.refusal.error, 'Authentication required');
  assert.equal(start.prm.resource, `${server.url}/mcp`);
  assert.ok(start.prm.scopes_supported.includes('zoos:write'));
  assert.equal(start.issuer, start.prm.authorization_servers[0]);
  assert.equal(start.registered, 201, JSON.stringify(start.client));
  assert.equal(start.client.token_endpoint_auth_method, 'none');
  assert.deepEqual(start.client.redirect_uris, [`${host}/callback`]);

  // 4: the user signs in and allows, in the same browser; gatehouse sends it back to the page.
  await page.goto(start.authorize);
  await page.getByLabel('Username').fill('ida');
  await page.getByLabel('Password').fill('ida-password-1');
  await page.keyboard.press('Enter');
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.waitForURL(new RegExp(`^${host}/callback\\?`));

  // 5: the code exchanged from the page, then MCP with the token.
  const done = (await page.evaluate(`(async () => {
    ${prelude()}
    const saved = JSON.parse(sessionStorage.getItem('host'));
    const back = new URLSearchParams(location.search);
    if (back.get('state') !== saved.state) return { error: 'state mismatch' };
    const exchange = await fetch(saved.tokenEndpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: back.get('code'), redirect_uri: saved.redirectUri, client_id: saved.clientId, code_verifier: saved.verifier, resource: saved.resource }),
    });
    const tokens = await exchange.json();
    const answer = async (res) => ({ status: res.status, body: await res.json() });
    const initialize = await answer(await rpc(1, 'initialize', { protocolVersion: '${PROTOCOL}', capabilities: {}, clientInfo: { name: 'web-ide', version: '1' } }, tokens.access_token));
    const tools = await answer(await rpc(2, 'tools/list', {}, tokens.access_token));
    const created = await answer(await rpc(3, 'tools/call', { name: 'create_zoos', arguments: { name: 'Web IDE Zoo', founded: 1999 } }, tokens.access_token));
    const listed = await answer(await rpc(4, 'tools/call', { name: 'list_zoos', arguments: { founded: { gte: 1990 } } }, tokens.access_token));
    return { exchanged: exchange.status, tokens, initialize, tools, created, listed };
  })()`)) as Json;
  assert.equal(done.exchanged, 200, JSON.stringify(done.tokens));
  assert.equal(done.tokens.token_type.toLowerCase(), 'bearer');
  accessToken = done.tokens.access_token;
  assert.equal(done.initialize.status, 200);
  assert.equal(done.initialize.body.result.protocolVersion, PROTOCOL);
  assert.ok(done.initialize.body.result.serverInfo.name);
  assert.ok(done.tools.body.result.tools.some((t: Json) => t.name === 'list_zoos'));
  assert.equal(done.created.body.result.isError, undefined, JSON.stringify(done.created.body));
  const listed = JSON.parse(done.listed.body.result.content[0].text);
  assert.deepEqual(listed.records.map((z: Json) => z.name), ['Web IDE Zoo']);
  await page.close();

  // The browser read every answer above; none allowed credentials, and the one 401 to any origin.
  const fromGatehouse = answers.filter((a) => a.url.startsWith(server.url));
  assert.ok(fromGatehouse.length >= 8, `answers seen: ${fromGatehouse.length}`);
  for (const a of fromGatehouse) assert.equal(a.headers['access-control-allow-credentials'], undefined, a.url);
  const mcpAnswers = fromGatehouse.filter((a) => a.url === `${server.url}/mcp`);
  assert.deepEqual(mcpAnswers.map((a) => [a.status, a.headers['access-control-allow-origin']]), [[401, '*'], [200, host], [200, host], [200, host], [200, host]]);
});

test('attacks: a page of another origin sending the same token cannot read the answer; credentials mode is never allowed', async () => {
  assert.ok(accessToken, 'the journey above ran');
  const stranger = await servePage('localhost'); // another origin than 127.0.0.1: no client lists it
  const page = await context.newPage();
  await page.goto(`${stranger}/`);
  const outcome = (await page.evaluate(`(async () => {
    ${prelude()}
    const token = ${JSON.stringify(accessToken)};
    return {
      // Its preflight is allowed (any origin may begin), and the 401 without a token is readable...
      refusal: await tryRead(() => rpc(1, 'tools/list', {})),
      // ...but an answer to the host's token carries no CORS headers for this origin.
      stolen: await tryRead(() => rpc(2, 'tools/call', { name: 'list_zoos', arguments: {} }, token)),
      // Cookies or not: credentials mode is never allowed, for a refusal or for data.
      withCredentials: await tryRead(() => fetch(mcp, { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: '{}' })),
      v1WithCredentials: await tryRead(() => fetch(gatehouse + '/v1/zoos', { credentials: 'include' })),
    };
  })()`)) as Json;
  assert.equal(outcome.refusal.read, 401);
  assert.match(outcome.refusal.body, /Authentication required/);
  assert.deepEqual(outcome.stolen, { blocked: 'TypeError' });
  assert.deepEqual(outcome.withCredentials, { blocked: 'TypeError' });
  assert.deepEqual(outcome.v1WithCredentials, { blocked: 'TypeError' });
  await page.close();

  // What the browser kept from the page (Playwright does not report a response CORS blocked): the
  // same request by HTTP is answered, 200 with the records, and without CORS headers for that origin.
  const stolen = await server.fetch('/mcp', {
    method: 'POST',
    headers: { origin: stranger, authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': PROTOCOL },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_zoos', arguments: {} } }),
  });
  assert.equal(stolen.status, 200);
  assert.match(await stolen.text(), /Web IDE Zoo/);
  assert.equal(stolen.headers.get('access-control-allow-origin'), null);

  // Preflights, which Playwright does not report: none allows credentials, from either origin.
  for (const origin of [stranger, stranger.replace('localhost', '127.0.0.1')]) {
    for (const [path, method] of [['/mcp', 'POST'], ['/v1/zoos', 'GET'], ['/oauth/token', 'POST'], ['/oauth/register', 'POST'], ['/.well-known/oauth-protected-resource/mcp', 'GET']]) {
      const res = await server.fetch(path, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type' } });
      assert.equal(res.headers.get('access-control-allow-credentials'), null, `${path} from ${origin}`);
    }
  }
});
