// MCP across instances (docs/mcp.md, Stateless): two processes on one PostgreSQL and Redis behind
// one publicUrl, the official SDK client's requests sent to each in turn (as a load balancer
// without sticky sessions would) — initialize on one, tools/list, create, list and get on the
// others — and a token revoked through one is refused by the other within a second.
// Spawned servers (test/helpers/server.ts): needs GATEHOUSE_TEST_PG=1 and GATEHOUSE_TEST_REDIS=1.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createPgDatabase, freePort, pgAvailable, redisAvailable, startServer, TEST_REDIS_URL, type TestServer } from './helpers/server.js';
import { addClient, addUser, basic, post, sleep } from './helpers/oauth.js';

const skip = !(pgAvailable && redisAvailable) && 'needs PostgreSQL and Redis (GATEHOUSE_TEST_PG=1 GATEHOUSE_TEST_REDIS=1)';
const started: TestServer[] = [];
let drop: (() => Promise<void>) | undefined;
after(async () => {
  await Promise.all(started.map((s) => s.cleanup()));
  await drop?.();
});

test('the SDK client over two instances in turn: every request answered wherever it lands; revocation through one holds at the other', { skip }, async () => {
  const database = await createPgDatabase();
  drop = () => database.drop();
  const [portA, portB] = [await freePort(), await freePort()];
  const publicUrl = `https://127.0.0.1:${portA}`;
  const env = { DATABASE_URL: database.url, REDIS_URL: TEST_REDIS_URL };
  const a = await startServer({ env, config: { server: { publicUrl } }, args: ['--port', String(portA)] });
  started.push(a);
  const b = await startServer({ env, config: { server: { publicUrl } }, args: ['--port', String(portB)] });
  started.push(b);
  addUser(a, 'alice', 'alice-password-1');
  const rp = addClient(a, 'rp', ['--grant', 'password']);
  const issued = await post(a, 'token', { grant_type: 'password', username: 'alice', password: 'alice-password-1', scope: 'zoos:read zoos:write', resource: `${publicUrl}/mcp` }, { auth: basic('rp', rp.client_secret!) });
  assert.equal(issued.status, 200, JSON.stringify(issued.body));
  const token = issued.body.access_token as string;

  // A load balancer without affinity: each request to the next instance (each trusts its own certificate).
  const seen: string[] = [];
  let turn = 0;
  const balanced = ((url: string | URL, init?: RequestInit) => {
    const instance = [a, b][turn++ % 2];
    const origin = instance === a ? `https://127.0.0.1:${portA}` : `https://127.0.0.1:${portB}`;
    seen.push(origin);
    return instance.fetch(String(url).replace(publicUrl, origin), init as object) as unknown as Promise<Response>;
  }) as typeof fetch;
  const client = new Client({ name: 'balanced', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${publicUrl}/mcp`), { fetch: balanced, requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ['list_zoos', 'get_zoos', 'create_zoos', 'update_zoos', 'delete_zoos']);
  const zoo = (await client.callTool({ name: 'create_zoos', arguments: { name: 'Everywhere' } })) as any;
  assert.equal(zoo.structuredContent.name, 'Everywhere');
  for (let i = 0; i < 2; i++) {
    const got = (await client.callTool({ name: 'get_zoos', arguments: { id: zoo.structuredContent.id } })) as any;
    assert.equal(got.structuredContent.id, zoo.structuredContent.id);
  }
  assert.ok(new Set(seen).size === 2, `both instances answered: ${seen.join(', ')}`);

  const revoked = await post(a, 'revocation', { token }, { auth: basic('rp', rp.client_secret!) });
  assert.equal(revoked.status, 200);
  const send = () =>
    b.fetch(`https://127.0.0.1:${portB}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
  const deadline = Date.now() + 1000;
  let status = 200;
  while (status !== 401 && Date.now() < deadline) {
    status = (await send()).status;
    if (status !== 401) await sleep(50);
  }
  assert.equal(status, 401, 'refused by the other instance within a second');
  await client.close();
});
