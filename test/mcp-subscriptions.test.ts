// MCP resource subscriptions (docs/mcp.md#following-changes) against spawned servers, with the
// official SDK client: initialize answers an Mcp-Session-Id, the client opens GET /mcp with it, and
// `notifications/resources/updated` arrives for a followed record changed through /v1 or a tool, or
// deleted; unsubscribe stops it; another user's record, a forged or another caller's session id, a
// subscribe without a session are refused; a revoked token ends the stream within a second; the
// limit holds under concurrent subscribes; a stream resumed with Last-Event-ID catches up, and a
// new stream of a session replaces the previous one. Then two instances on PostgreSQL and Redis: subscribed
// through A, streamed from B, written on either.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { createPgDatabase, freePort, pgAvailable, redisAvailable, startServer, TEST_REDIS_URL, type TestServer } from './helpers/server.js';
import { addClient, addUser, basic, post, sleep, type RegisteredClient } from './helpers/oauth.js';

type Json = any;
const PROTOCOL = '2025-06-18';
let server: TestServer;
let rp: RegisteredClient;
let apiClient: RegisteredClient;

before(async () => {
  server = await startServer();
  addUser(server, 'alice', 'alice-password-1');
  addUser(server, 'bob', 'bob-password-1');
  rp = addClient(server, 'rp', ['--grant', 'password']);
  apiClient = addClient(server, 'api-client', ['--grant', 'password']);
});
after(async () => {
  await server?.cleanup();
});

async function token(s: TestServer, user: string, resource: 'mcp' | 'v1', client: RegisteredClient, publicUrl = s.url): Promise<string> {
  const scope = 'zoos:read zoos:write';
  const r = await post(s, 'token', { grant_type: 'password', username: user, password: `${user}-password-1`, scope, resource: `${publicUrl}/${resource}` }, { auth: basic(client.client_id, client.client_secret!) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.access_token;
}

/** The SDK client with a session, once its GET stream is open; `updated` collects the URIs notified. */
async function follower(tok: string, route: (method: string) => { s: TestServer; origin: string } = () => ({ s: server, origin: server.url }), publicUrl = server.url) {
  let opened!: () => void;
  const streamOpen = new Promise<void>((resolve) => (opened = resolve));
  const routed = (async (url: string | URL, init?: RequestInit) => {
    const method = init?.method ?? 'GET';
    const { s, origin } = route(method);
    const res = await s.fetch(String(url).replace(publicUrl, origin), init as object);
    if (method === 'GET' && res.ok) opened();
    return res;
  }) as typeof fetch;
  const updated: string[] = [];
  const client = new Client({ name: 'follower', version: '1' });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
  const transport = new StreamableHTTPClientTransport(new URL(`${publicUrl}/mcp`), { fetch: routed, requestInit: { headers: { authorization: `Bearer ${tok}` } } });
  await client.connect(transport);
  assert.ok(transport.sessionId, 'initialize answered a session id');
  await streamOpen;
  const until = async (uri: string, times = 1) => {
    const deadline = Date.now() + 5000;
    while (updated.filter((u) => u === uri).length < times && Date.now() < deadline) await sleep(20);
    assert.equal(updated.filter((u) => u === uri).length, times, `${uri} notified ${times}× (got ${JSON.stringify(updated)})`);
  };
  return { client, transport, updated, until };
}

async function createZoo(s: TestServer, v1Token: string, name: string): Promise<string> {
  const r = await s.json('POST', '/v1/zoos', { name }, { authorization: `Bearer ${v1Token}` });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.id;
}

async function rpc(tok: string, method: string, params: Json, headers: Record<string, string> = {}, s = server) {
  const res = await s.fetch('/mcp', {
    method: 'POST',
    headers: { authorization: `Bearer ${tok}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': PROTOCOL, ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

async function initialize(tok: string, s = server): Promise<string> {
  const r = await rpc(tok, 'initialize', { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'raw', version: '1' } }, {}, s);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.result.capabilities.resources.subscribe, true);
  const id = r.headers.get('mcp-session-id');
  assert.ok(id);
  return id;
}

test('subscribe, then a change through /v1 and through a tool is notified; unsubscribe stops it; the deletion is notified', async () => {
  const mcp = await token(server, 'alice', 'mcp', rp);
  const v1 = await token(server, 'alice', 'v1', apiClient);
  const [first, second] = [await createZoo(server, v1, 'Followed'), await createZoo(server, v1, 'Also followed')];
  const { client, updated, until } = await follower(mcp);
  const uri = `gatehouse://zoos/${first}`;
  const other = `gatehouse://zoos/${second}`;
  await client.subscribeResource({ uri });
  await client.subscribeResource({ uri: other });
  await client.subscribeResource({ uri }); // again: still one subscription, one notification per change

  const patched = await server.json('PATCH', `/v1/zoos/${first}`, { city: 'Lyon' }, { authorization: `Bearer ${v1}` });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  await until(uri, 1);
  const viaTool = (await client.callTool({ name: 'update_zoos', arguments: { id: first, city: 'Lille' } })) as Json;
  assert.equal(viaTool.isError, undefined, JSON.stringify(viaTool));
  await until(uri, 2);

  await client.unsubscribeResource({ uri });
  assert.equal((await server.json('PATCH', `/v1/zoos/${first}`, { city: 'Nantes' }, { authorization: `Bearer ${v1}` })).status, 200);
  assert.equal((await server.json('PATCH', `/v1/zoos/${second}`, { city: 'Nice' }, { authorization: `Bearer ${v1}` })).status, 200);
  // Notifications come in event order: the second record's, later, has arrived, so the first's would have.
  await until(other, 1);
  assert.equal(updated.filter((u) => u === uri).length, 2, 'no notification after unsubscribe');

  const deleted = (await client.callTool({ name: 'delete_zoos', arguments: { id: second } })) as Json;
  assert.equal(deleted.isError, undefined, JSON.stringify(deleted));
  await until(other, 2);
  // Subscribing to the deleted record is refused as reading it is.
  await assert.rejects(client.subscribeResource({ uri: other }), /-32002|deleted/);
  await client.close();
});

test("another user's record, an unknown one, a malformed URI: refused as resources/read refuses them; nothing is notified", async () => {
  const aliceV1 = await token(server, 'alice', 'v1', apiClient);
  const hers = await createZoo(server, aliceV1, 'Private');
  const bobMcp = await token(server, 'bob', 'mcp', rp);
  const { client, updated } = await follower(bobMcp);
  await assert.rejects(client.subscribeResource({ uri: `gatehouse://zoos/${hers}` }), /403|another owner/);
  await assert.rejects(client.subscribeResource({ uri: 'gatehouse://zoos/no-such-zoo' }), /-32002|404/);
  await assert.rejects(client.subscribeResource({ uri: 'https://example.com/zoos/1' }), /Not a record URI/);
  await assert.rejects(client.subscribeResource({ uri: 'gatehouse://nothing/1' }), /No collection/);
  assert.equal((await server.json('PATCH', `/v1/zoos/${hers}`, { city: 'Bern' }, { authorization: `Bearer ${aliceV1}` })).status, 200);
  await sleep(700);
  assert.deepEqual(updated, []);
  await client.close();
});

test("sessions: a forged, altered or another caller's session id is 404 on POST and GET; without one POSTs answer as before, GET is 405, subscribe needs one", async () => {
  const alice = await token(server, 'alice', 'mcp', rp);
  const bob = await token(server, 'bob', 'mcp', rp);
  const session = await initialize(alice);
  assert.equal((await rpc(alice, 'tools/list', {}, { 'mcp-session-id': session })).status, 200);

  const [payload, keyId, mac] = session.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  const forgedPayload = Buffer.from(JSON.stringify({ ...claims, s: 'user:someone-else' })).toString('base64url');
  const flipped = mac.slice(0, -2) + (mac.endsWith('AA') ? 'BB' : 'AA');
  for (const [what, id, tok] of [
    ['altered mac', `${payload}.${keyId}.${flipped}`, alice],
    ['altered payload', `${forgedPayload}.${keyId}.${mac}`, alice],
    ['unknown key', `${payload}.nokey.${mac}`, alice],
    ['garbage', 'not-a-session', alice],
    ["alice's session with bob's token", session, bob],
  ] as const) {
    const r = await rpc(tok, 'tools/list', {}, { 'mcp-session-id': id });
    assert.equal(r.status, 404, `${what}: ${JSON.stringify(r.body)}`);
    const g = await server.fetch('/mcp', { headers: { authorization: `Bearer ${tok}`, accept: 'text/event-stream', 'mcp-session-id': id } });
    assert.equal(g.status, 404, `GET, ${what}`);
    await g.body?.cancel();
  }
  // Bob cannot follow anything through alice's session either.
  assert.equal((await rpc(bob, 'resources/subscribe', { uri: 'gatehouse://zoos/x' }, { 'mcp-session-id': session })).status, 404);

  const stateless = await rpc(alice, 'tools/list', {});
  assert.equal(stateless.status, 200);
  assert.equal(stateless.headers.get('mcp-session-id'), null);
  const noSession = await rpc(alice, 'resources/subscribe', { uri: 'gatehouse://zoos/x' });
  assert.equal(noSession.status, 200);
  assert.match(noSession.body.error.message, /needs a session/);
  for (const method of ['GET', 'DELETE']) {
    const r = await server.fetch('/mcp', { method, headers: { authorization: `Bearer ${alice}`, accept: 'text/event-stream' } });
    assert.equal(r.status, 405, method);
    await r.body?.cancel();
  }
  const deleteWithSession = await server.fetch('/mcp', { method: 'DELETE', headers: { authorization: `Bearer ${alice}`, 'mcp-session-id': session } });
  assert.equal(deleteWithSession.status, 405, 'a session ends at its expiry, not on DELETE');
  await deleteWithSession.body?.cancel();
  const notAStream = await server.fetch('/mcp', { headers: { authorization: `Bearer ${alice}`, accept: 'application/json', 'mcp-session-id': session } });
  assert.equal(notAStream.status, 406);
  await notAStream.body?.cancel();
});

test('a revoked token ends the session stream within about a second', async () => {
  const tok = await token(server, 'alice', 'mcp', rp);
  const session = await initialize(tok);
  const res = await server.fetch('/mcp', { headers: { authorization: `Bearer ${tok}`, accept: 'text/event-stream', 'mcp-session-id': session } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type')!, /text\/event-stream/);
  const reader = res.body!.getReader();
  const revoked = await post(server, 'revocation', { token: tok }, { auth: basic('rp', rp.client_secret!) });
  assert.equal(revoked.status, 200);
  const t0 = Date.now();
  const ended = (async () => {
    for (;;) if ((await reader.read()).done) return Date.now() - t0;
  })();
  const took = await Promise.race([ended, sleep(3000).then(() => Infinity)]);
  assert.ok(took < 1500, `the stream ended ${took} ms after the revocation`);
});

/** A raw GET /mcp stream of a session: its frames as they come, and whether it has ended. */
async function rawStream(tok: string, session: string, lastEventId?: string, at: { s: TestServer; url: string } = { s: server, url: `${server.url}/mcp` }) {
  const res = await at.s.fetch(at.url, {
    headers: { authorization: `Bearer ${tok}`, accept: 'text/event-stream', 'mcp-session-id': session, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
  });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  const state = { text: '', ended: false };
  void (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) return void (state.ended = true);
      state.text += Buffer.from(value!).toString();
    }
  })();
  const waitFor = async (check: () => boolean, what: string) => {
    const deadline = Date.now() + 3000;
    while (!check() && Date.now() < deadline) await sleep(20);
    assert.ok(check(), what);
  };
  return { state, waitFor, cancel: () => reader.cancel().catch(() => undefined) };
}

test('a stream resumed with Last-Event-ID gets the notification of a change made while it was away; a new stream of the session replaces the previous one', async () => {
  const mcp = await token(server, 'alice', 'mcp', rp);
  const v1 = await token(server, 'alice', 'v1', apiClient);
  const zoo = await createZoo(server, v1, 'Resumed');
  const uri = `gatehouse://zoos/${zoo}`;
  const session = await initialize(mcp);
  assert.ok((await rpc(mcp, 'resources/subscribe', { uri }, { 'mcp-session-id': session })).body.result);
  const feed = await server.json('GET', '/v1/events?collections=zoos', undefined, { authorization: `Bearer ${v1}` });
  const before = feed.body[feed.body.length - 1].id as string;
  assert.equal((await server.json('PATCH', `/v1/zoos/${zoo}`, { city: 'Away' }, { authorization: `Bearer ${v1}` })).status, 200);

  const first = await rawStream(mcp, session, before);
  await first.waitFor(() => first.state.text.includes(uri), 'the missed change is notified on resuming');
  const frame = /id: (\d+)\nevent: message\ndata: (.*)\n\n/.exec(first.state.text)!;
  assert.ok(Number(frame[1]) > Number(before));
  assert.deepEqual(JSON.parse(frame[2]), { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });

  const second = await rawStream(mcp, session);
  await first.waitFor(() => first.state.ended, 'the previous stream of the session ends');
  assert.equal((await server.json('PATCH', `/v1/zoos/${zoo}`, { city: 'Back' }, { authorization: `Bearer ${v1}` })).status, 200);
  await second.waitFor(() => second.state.text.includes(uri), 'the new stream gets the next change');
  await second.cancel();
});

test('the limit of subscriptions per session holds when subscribes race each other', async () => {
  const mcp = await token(server, 'alice', 'mcp', rp);
  const v1 = await token(server, 'alice', 'v1', apiClient);
  const ids: string[] = [];
  for (let i = 0; i < 105; i += 15) ids.push(...(await Promise.all(Array.from({ length: Math.min(15, 105 - i) }, (_, j) => createZoo(server, v1, `Zoo ${i + j}`)))));
  const session = await initialize(mcp);
  const answers = await Promise.all(ids.map((id) => rpc(mcp, 'resources/subscribe', { uri: `gatehouse://zoos/${id}` }, { 'mcp-session-id': session })));
  const accepted = answers.filter((a) => a.body.result).length;
  const refused = answers.filter((a) => /follows 100 resources already/.test(a.body.error?.message ?? '')).length;
  assert.equal(accepted, 100);
  assert.equal(refused, 5);
  // One let go makes room for one.
  assert.ok((await rpc(mcp, 'resources/unsubscribe', { uri: `gatehouse://zoos/${ids[0]}` }, { 'mcp-session-id': session })).body.result);
  const refusedOne = answers.findIndex((a) => a.body.error);
  assert.ok((await rpc(mcp, 'resources/subscribe', { uri: `gatehouse://zoos/${ids[refusedOne]}` }, { 'mcp-session-id': session })).body.result);
});

const skipScaleOut = !(pgAvailable && redisAvailable) && 'needs PostgreSQL and Redis (GATEHOUSE_TEST_PG=1 GATEHOUSE_TEST_REDIS=1)';

test('two instances on PostgreSQL and Redis: subscribed through A, the stream on B, written on A and on B', { skip: skipScaleOut }, async () => {
  const database = await createPgDatabase();
  const started: TestServer[] = [];
  try {
    const [portA, portB] = [await freePort(), await freePort()];
    const publicUrl = `https://127.0.0.1:${portA}`;
    const env = { DATABASE_URL: database.url, REDIS_URL: TEST_REDIS_URL };
    const a = await startServer({ env, config: { server: { publicUrl } }, args: ['--port', String(portA)] });
    started.push(a);
    const b = await startServer({ env, config: { server: { publicUrl } }, args: ['--port', String(portB)] });
    started.push(b);
    addUser(a, 'alice', 'alice-password-1');
    const client = addClient(a, 'rp', ['--grant', 'password']);
    const mcp = await token(a, 'alice', 'mcp', client, publicUrl);
    const v1 = await token(a, 'alice', 'v1', client, publicUrl);
    const zoo = await createZoo(a, v1, 'Across');
    const uri = `gatehouse://zoos/${zoo}`;
    // POSTs to A, the GET stream to B.
    const route = (method: string) => (method === 'GET' ? { s: b, origin: `https://127.0.0.1:${portB}` } : { s: a, origin: publicUrl });
    const { client: sdk, until } = await follower(mcp, route, publicUrl);
    await sdk.subscribeResource({ uri });
    assert.equal((await a.json('PATCH', `/v1/zoos/${zoo}`, { city: 'Written on A' }, { authorization: `Bearer ${v1}` })).status, 200);
    await until(uri, 1);
    assert.equal((await b.json('PATCH', `https://127.0.0.1:${portB}/v1/zoos/${zoo}`, { city: 'Written on B' }, { authorization: `Bearer ${v1}` })).status, 200);
    await until(uri, 2);
    await sdk.close();

    // One stream per session across instances: a stream opened on A replaces the one on B, which
    // gets nothing more and ends at the session's next notification.
    const session = await initialize(mcp, a);
    assert.ok((await rpc(mcp, 'resources/subscribe', { uri }, { 'mcp-session-id': session }, a)).body.result);
    const onB = await rawStream(mcp, session, undefined, { s: b, url: `https://127.0.0.1:${portB}/mcp` });
    const onA = await rawStream(mcp, session, undefined, { s: a, url: `${publicUrl}/mcp` });
    assert.equal((await a.json('PATCH', `/v1/zoos/${zoo}`, { city: 'Once' }, { authorization: `Bearer ${v1}` })).status, 200);
    await onA.waitFor(() => onA.state.text.includes(uri), 'the newer stream is notified');
    await onB.waitFor(() => onB.state.ended, 'the replaced stream on the other instance ends');
    assert.ok(!onB.state.text.includes(uri), 'and was not notified: no message on two streams');
    await onA.cancel();
  } finally {
    await Promise.all(started.map((s) => s.cleanup()));
    await database.drop();
  }
});
