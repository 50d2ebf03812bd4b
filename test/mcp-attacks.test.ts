// Attacks on the MCP sessions and streams (docs/mcp.md#following-changes), on an in-process app
// listening on a real port: a client can leave at any moment, and what the app still holds
// afterwards is counted; a stream is read as it arrives. A narrower token of the same user and
// client reusing a session hears nothing of what it cannot read.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { startApp, type InProcessApp } from './helpers/app.js';
import { addClient, addUser, basic, post, sleep, type RegisteredClient } from './helpers/oauth.js';
import { createPgDatabase, pgAvailable } from './helpers/server.js';
import { sessionStreams } from '../src/api/mcp/stream.js';
import { eventBus } from '../src/contract/event-bus.js';

type Json = any;
const PROTOCOL = '2025-06-18';
let server: InProcessApp;
let rp: RegisteredClient;
let apiClient: RegisteredClient;
let port: number;

before(async () => {
  server = await startApp();
  await addUser(server, 'alice', 'alice-password-1');
  rp = await addClient(server, 'rp', ['--grant', 'password']);
  // /v1 tokens from another client: a password grant replaces the user's grant to its client, and its tokens.
  apiClient = await addClient(server, 'api-client', ['--grant', 'password']);
  await server.app.listen({ port: 0, host: '127.0.0.1' });
  port = (server.app.server.address() as AddressInfo).port;
});
after(async () => server?.cleanup());

async function token(resource: 'mcp' | 'v1', scope = 'zoos:read zoos:write'): Promise<string> {
  const client = resource === 'mcp' ? rp : apiClient;
  const r = await post(server, 'token', { grant_type: 'password', username: 'alice', password: 'alice-password-1', scope, resource: `${server.url}/${resource}` }, { auth: basic(client.client_id, client.client_secret!) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.access_token;
}

async function rpc(tok: string, method: string, params: Json, session?: string) {
  const res = await server.fetch('/mcp', {
    method: 'POST',
    headers: { authorization: `Bearer ${tok}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': PROTOCOL, ...(session && { 'mcp-session-id': session }) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return { status: res.status, session: res.headers.get('mcp-session-id'), body: (await res.json()) as Json };
}

async function initialize(tok: string): Promise<string> {
  const r = await rpc(tok, 'initialize', { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
  assert.equal(r.status, 200);
  return r.session!;
}

/** GET /mcp over a real connection, kept open: the notified URIs as they arrive. */
async function openStream(tok: string, session: string) {
  const uris: string[] = [];
  const req = https.request({
    host: '127.0.0.1', port, path: '/mcp', method: 'GET', rejectUnauthorized: false,
    headers: { host: new URL(server.url).host, accept: 'text/event-stream', authorization: `Bearer ${tok}`, 'mcp-session-id': session },
  });
  const status = await new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const data = buffer.slice(0, end).split('\n').find((l) => l.startsWith('data: '));
          buffer = buffer.slice(end + 2);
          if (data) uris.push(JSON.parse(data.slice(6)).params.uri);
        }
      });
      res.on('error', () => undefined);
      resolve(res.statusCode!);
    });
    req.on('error', reject);
    req.end();
  });
  assert.equal(status, 200);
  return { uris, close: () => req.destroy() };
}

/** A GET over a real connection that the client drops `ms` after the TLS handshake (before the stream is open, for small ones). */
function getAndLeave(path: string, headers: Record<string, string>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const req = https.request({ host: '127.0.0.1', port, path, method: 'GET', headers: { host: new URL(server.url).host, ...headers }, rejectUnauthorized: false });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.on('socket', (socket) => socket.once('secureConnect', () => setTimeout(() => req.destroy(), ms)));
    req.end();
  });
}

const held = () => (sessionStreams(server.ctx) as unknown as { streams: Map<string, unknown> }).streams.size;
const listeners = () => (eventBus(server.ctx) as unknown as { subscribers: Set<unknown> }).subscribers.size;

test('a client that leaves while its stream is being opened leaves nothing held: no stream, no bus listener', async () => {
  const tok = await token('mcp');
  const v1 = await token('v1');
  const stream = { accept: 'text/event-stream' };
  for (let i = 0; i < 40; i++) {
    const ms = i % 10;
    await getAndLeave('/mcp', { ...stream, authorization: `Bearer ${tok}`, 'mcp-session-id': await initialize(tok) }, ms);
    await getAndLeave('/v1/events', { ...stream, authorization: `Bearer ${v1}` }, ms);
  }
  // What is counted: a stream the client keeps is held until it leaves.
  const kept = getAndLeave('/mcp', { ...stream, authorization: `Bearer ${tok}`, 'mcp-session-id': await initialize(tok) }, 300);
  await sleep(200);
  assert.deepEqual([held(), listeners()], [1, 1], 'an open stream is held, with one bus listener');
  await kept;
  const deadline = Date.now() + 3000;
  while ((held() > 0 || listeners() > 0) && Date.now() < deadline) await sleep(50);
  assert.equal(held(), 0, 'MCP streams still held');
  assert.equal(listeners(), 0, 'event bus listeners still there');
});

test('a narrower token of the same user and client reusing a session hears nothing of a collection it cannot read', async () => {
  const v1 = await token('v1', 'zoos:read zoos:write orders:read orders:write');
  const zoo = (await server.json('POST', '/v1/zoos', { name: 'Followed' }, { authorization: `Bearer ${v1}` })).body.id;
  const order = (await server.json('POST', '/v1/orders', { item: 'hay', quantity: 1 }, { authorization: `Bearer ${v1}` })).body.id;
  const wide = await token('mcp', 'zoos:read zoos:write orders:read');
  const session = await initialize(wide);
  for (const uri of [`gatehouse://zoos/${zoo}`, `gatehouse://orders/${order}`]) assert.deepEqual((await rpc(wide, 'resources/subscribe', { uri }, session)).body.result, {}, uri);
  // Then the client's next token is narrower (its new grant replaces the wide token's).
  const narrow = await token('mcp', 'orders:read');
  // The narrow token may use the session (same user, same client), and subscribe to nothing it cannot read.
  const refused = await rpc(narrow, 'resources/subscribe', { uri: `gatehouse://zoos/${zoo}` }, session);
  assert.ok(refused.body.error, JSON.stringify(refused.body));
  const stream = await openStream(narrow, session);
  try {
    assert.equal((await server.json('PATCH', `/v1/zoos/${zoo}`, { city: 'Lyon' }, { authorization: `Bearer ${v1}` })).status, 200);
    assert.equal((await server.json('PATCH', `/v1/orders/${order}`, { quantity: 2 }, { authorization: `Bearer ${v1}` })).status, 200);
    const deadline = Date.now() + 3000;
    while (stream.uris.length === 0 && Date.now() < deadline) await sleep(20);
    await sleep(200);
    // In event order: the order's change came after the zoo's, so the zoo's would have arrived first.
    assert.deepEqual(stream.uris, [`gatehouse://orders/${order}`]);
  } finally {
    stream.close();
  }
});

test('session ids of odd shapes are 404 JSON, and odd subscribe URIs JSON-RPC errors: never a 5xx', async () => {
  const tok = await token('mcp');
  const session = await initialize(tok);
  const [payload, keyId, mac] = session.split('.');
  const odd = [
    '', '.', '..', '...', 'a.b', 'a.b.c.d', `${payload}.${keyId}`, `${payload}.${keyId}.${mac}.`, `${payload}..${mac}`,
    `${payload}.no-such-key.${mac}`, `${payload}.${keyId}.${mac.slice(1)}`, `${payload}.${keyId}.${mac}x`, `x${payload}.${keyId}.${mac}`,
    `${payload}.${keyId}.${'A'.repeat(2000)}`, `${payload}.__proto__.${mac}`, `${payload}.constructor.${mac}`, `${payload} .${keyId}.${mac}`,
    `${session}, ${session}`, `${Buffer.from('null').toString('base64url')}.${keyId}.${mac}`,
  ];
  for (const header of odd) {
    const res = await server.fetch('/mcp', {
      method: 'POST',
      headers: { authorization: `Bearer ${tok}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': PROTOCOL, 'mcp-session-id': header },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(res.status, 404, JSON.stringify(header));
    const body = (await res.json()) as Json;
    assert.match(JSON.stringify(body), /Unknown MCP session/, JSON.stringify(header));
  }
  const uris = ['gatehouse://zoos/%', 'gatehouse://zoos/%E0%A4%A', 'gatehouse://zoos/%00', 'gatehouse://zoos/a%2Fb', `gatehouse://zoos/${'x'.repeat(100_000)}`,
    `gatehouse://${'z'.repeat(100_000)}/1`, 'gatehouse://zoos/', 'gatehouse://zoos/1/2', 'gatehouse://zoos/1?x', 'GATEHOUSE://zoos/1', ''];
  for (const uri of uris) {
    // Subscribing is refused; unsubscribing answers {} for a record URI the session did not follow, an error for anything else.
    for (const method of ['resources/subscribe', 'resources/unsubscribe']) {
      const r = await rpc(tok, method, { uri }, session);
      const what = `${method} ${uri.slice(0, 40)}: ${JSON.stringify(r.body).slice(0, 300)}`;
      assert.equal(r.status, 200, what);
      if (method === 'resources/subscribe' || r.body.error) assert.ok(r.body.error && r.body.error.code !== -32603, what);
      else assert.deepEqual(r.body.result, {}, what);
    }
  }
});

test('PostgreSQL: a resource URI the database cannot take (a NUL) is the API\'s 400, without the database\'s message, on every resource method', { skip: !pgAvailable && 'PostgreSQL not available' }, async () => {
  const database = await createPgDatabase();
  const pg = await startApp({ database: database.url });
  try {
    await addUser(pg, 'alice', 'alice-password-1');
    const client = await addClient(pg, 'rp', ['--grant', 'password']);
    const t = await post(pg, 'token', { grant_type: 'password', username: 'alice', password: 'alice-password-1', scope: 'zoos:read', resource: `${pg.url}/mcp` }, { auth: basic(client.client_id, client.client_secret!) });
    const headers = { authorization: `Bearer ${t.body.access_token}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': PROTOCOL };
    const send = async (method: string, params: Json, session?: string) => {
      const res = await pg.fetch('/mcp', { method: 'POST', headers: { ...headers, ...(session && { 'mcp-session-id': session }) }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
      return { status: res.status, session: res.headers.get('mcp-session-id'), text: await res.text() };
    };
    const session = (await send('initialize', { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'raw', version: '1' } })).session!;
    for (const method of ['resources/read', 'resources/subscribe', 'resources/unsubscribe']) {
      const r = await send(method, { uri: 'gatehouse://zoos/a%00b' }, session);
      assert.equal(r.status, 200, r.text);
      const error = JSON.parse(r.text).error;
      assert.ok(error, `${method}: ${r.text}`);
      assert.doesNotMatch(error.message, /UTF8|byte sequence|0x00|encoding/, `${method} tells the database's error: ${r.text}`);
      assert.match(error.message, /400.*cannot store/, `${method}: the API's refusal (http-nul-text.test.ts): ${r.text}`);
    }
    assert.doesNotMatch(pg.output(), /unexpected failure/, 'bad input, not a failure of the program');
  } finally {
    await pg.cleanup();
    await database.drop();
  }
});
