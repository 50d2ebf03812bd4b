// Attacks on the MCP sessions and streams (docs/mcp.md#following-changes) that need the app's
// insides to observe: an in-process app listening on a real port, so that a client can leave at
// any moment, and what the app still holds afterwards is counted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { startApp, type InProcessApp } from './helpers/app.js';
import { addClient, addUser, basic, post, sleep, type RegisteredClient } from './helpers/oauth.js';
import { sessionStreams } from '../src/api/mcp/stream.js';
import { eventBus } from '../src/contract/event-bus.js';

type Json = any;
const PROTOCOL = '2025-06-18';
let server: InProcessApp;
let rp: RegisteredClient;
let port: number;

before(async () => {
  server = await startApp();
  await addUser(server, 'alice', 'alice-password-1');
  rp = await addClient(server, 'rp', ['--grant', 'password']);
  await server.app.listen({ port: 0, host: '127.0.0.1' });
  port = (server.app.server.address() as AddressInfo).port;
});
after(async () => server?.cleanup());

async function token(resource: 'mcp' | 'v1'): Promise<string> {
  const r = await post(server, 'token', { grant_type: 'password', username: 'alice', password: 'alice-password-1', scope: 'zoos:read zoos:write', resource: `${server.url}/${resource}` }, { auth: basic(rp.client_id, rp.client_secret!) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.access_token;
}

async function initialize(tok: string): Promise<string> {
  const res = await server.fetch('/mcp', {
    method: 'POST',
    headers: { authorization: `Bearer ${tok}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': PROTOCOL },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
  });
  assert.equal(res.status, 200);
  return res.headers.get('mcp-session-id')!;
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
