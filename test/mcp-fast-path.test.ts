// The fast path of POST /mcp (src/api/mcp/fast-path.ts): a plain `tools/call` is answered without
// the SDK's server and transport. Every call here is sent twice — as is (the fast path) and with an
// empty `_meta` in its params (which the fast path leaves to the SDK) — and the two answers must be
// the same JSON-RPC response: success, tool errors, unknown tools, missing scopes, bad arguments,
// writes. And what the fast path must never take: each request of another shape is answered by
// the SDK with its own protocol error, as before.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { addClient, addUser, basic, post, type RegisteredClient } from './helpers/oauth.js';

let server: InProcessApp;
let rp: RegisteredClient;
let other: RegisteredClient;
let readWrite: string;
let readOnly: string;
const PROTOCOL = '2025-06-18';
const HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': PROTOCOL };

before(async () => {
  server = await startApp();
  await addUser(server, 'alice', 'alice-password-1');
  rp = await addClient(server, 'rp', ['--grant', 'password']);
  // A second client: a new token of the same user and client would replace the first.
  other = await addClient(server, 'other', ['--grant', 'password']);
  readWrite = await token('zoos:read zoos:write', rp);
  readOnly = await token('zoos:read', other);
});
after(async () => server?.cleanup());

async function token(scope: string, client: RegisteredClient): Promise<string> {
  const r = await post(server, 'token', { grant_type: 'password', username: 'alice', password: 'alice-password-1', scope, resource: `${server.url}/mcp` }, { auth: basic(client.client_id, client.client_secret!) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.access_token;
}

async function send(tok: string, body: unknown, headers: Record<string, string> = HEADERS) {
  const res = await server.fetch('/mcp', { method: 'POST', headers: { authorization: `Bearer ${tok}`, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type'), text, json: text ? JSON.parse(text) : null };
}

/** What differs between two records made the same way: their ids (in their links too) and times. */
function normalized(value: unknown): unknown {
  const text = JSON.stringify(value)
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>');
  return JSON.parse(text);
}

/**
 * The call answered by the fast path and by the SDK; returns the fast path's result. With `fresh`,
 * each way gets its own arguments (a write that cannot be done twice), and records are compared
 * without their ids and times.
 */
async function both(tok: string, id: string | number, name: string, args: (way: 'fast' | 'sdk') => Record<string, unknown> | undefined, fresh = false) {
  const fast = await send(tok, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args('fast') } });
  const sdk = await send(tok, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args('sdk'), _meta: {} } });
  assert.equal(fast.status, 200, fast.text);
  assert.equal(sdk.status, 200, sdk.text);
  assert.equal(fast.type, sdk.type);
  // The text content is the record's JSON: compared parsed, since it is a string inside the answer.
  const unpack = (r: typeof fast) => {
    const body = structuredClone(r.json);
    if (body.result?.content?.[0]?.text) body.result.content[0].text = JSON.parse(body.result.content[0].text);
    return fresh ? normalized(body) : body;
  };
  assert.deepEqual(unpack(fast), unpack(sdk), `${name}: fast path ${fast.text}\nSDK ${sdk.text}`);
  return fast.json;
}

test('the same answers both ways: create, get, list with filters, update, delete, and their refusals', async () => {
  let made: Record<string, { id: string }> = {};
  const created = await both(readWrite, 1, 'create_zoos', () => ({ name: 'Zoo Vincennes', city: 'Paris', founded: 1934 }), true);
  assert.equal(created.result.structuredContent.name, 'Zoo Vincennes');
  assert.equal(created.result.content[0].type, 'text');
  // Both ways made a record: find them, to update and delete one each.
  const listed = await both(readWrite, 'list-1', 'list_zoos', () => ({ city: 'Paris', sortby: 'name' }));
  assert.equal(listed.result.structuredContent.records.length, 2);
  made = { fast: listed.result.structuredContent.records[0], sdk: listed.result.structuredContent.records[1] };

  await both(readOnly, 2, 'get_zoos', () => ({ id: made.fast.id }));
  await both(readOnly, 3, 'list_zoos', () => ({ founded: { gte: 1900, lt: 2000 }, limit: 1 }));
  await both(readOnly, 4, 'list_zoos', () => ({ q: 'vincennes', order: 'desc' }));
  await both(readWrite, 5, 'update_zoos', (way) => ({ id: made[way].id, city: 'Vincennes' }), true);
  await both(readWrite, 6, 'update_zoos', (way) => ({ id: made[way].id, founded: null }), true);
  await both(readOnly, 7, 'get_zoos', () => ({ id: 'no-such-zoo' }));
  await both(readOnly, 8, 'create_zoos', () => ({ name: 'Never' }));
  await both(readWrite, 9, 'create_zoos', () => ({ founded: 'old' }));
  await both(readWrite, 10, 'get_zoos', () => ({ id: made.fast.id, colour: 'green' }));
  await both(readWrite, 11, 'list_zoos', () => ({ founded: { near: 3 } }));
  await both(readWrite, 12, 'teleport_zoos', () => ({}));
  await both(readWrite, 13, 'list_zoos', () => undefined);
  await both(readWrite, 'delete', 'delete_zoos', (way) => ({ id: made[way].id }), true);
  const gone = await both(readWrite, 14, 'get_zoos', () => ({ id: made.fast.id }));
  assert.equal(gone.result.isError, true);
  assert.equal(JSON.parse(gone.result.content[0].text).status, 410);
  const none = await send(readOnly, { jsonrpc: '2.0', id: 15, method: 'tools/call', params: { name: 'list_zoos', arguments: { city: 'Paris' } } });
  assert.deepEqual(none.json.result.structuredContent.records, [], 'nothing left of either way');
});

test('requests of any other shape are left to the SDK, which answers its protocol errors as before', async () => {
  const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_zoos', arguments: {} } };
  // Not a JSON-RPC request to the letter (the SDK's schema is strict): a parse error, not a tool answer.
  // An id past the safe integers too (2^53: JSON cannot say which integer it is): the SDK's schema refuses it.
  for (const body of [{ ...call, extra: 1 }, { ...call, jsonrpc: '1.0' }, { ...call, id: 1.5 }, { ...call, id: null }, { ...call, id: 2 ** 53 }]) {
    const r = await send(readOnly, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.json.error.code, -32700, JSON.stringify(body));
  }
  // Nor does a write with such an id run: refused before the tool, nothing created.
  const unsafe = await send(readWrite, '{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"create_zoos","arguments":{"name":"Unsafe id"}}}');
  assert.equal(unsafe.status, 400, unsafe.text);
  const unsafeList = await send(readOnly, { ...call, params: { name: 'list_zoos', arguments: { name: 'Unsafe id' } } });
  assert.deepEqual(unsafeList.json.result.structuredContent.records, []);
  // A tools/call whose params do not fit: the SDK's JSON-RPC error (its schema's complaint), no result.
  for (const params of [{ name: 'list_zoos', arguments: [] }, { name: 7 }, { arguments: {} }, { name: 'list_zoos', arguments: 'all' }, undefined]) {
    const r = await send(readOnly, { ...call, params });
    assert.equal(r.status, 200, JSON.stringify(params));
    assert.equal(r.json.result, undefined, `${JSON.stringify(params)}: ${r.text}`);
    assert.ok(r.json.error.code < 0 && /expected|Invalid/.test(r.json.error.message), `${JSON.stringify(params)}: ${r.text}`);
  }
  // Headers the transport checks: a content type Fastify parses as JSON but the SDK refuses (415), the write not done.
  const oddType = await send(readWrite, { ...call, params: { name: 'create_zoos', arguments: { name: 'Odd type' } } }, { ...HEADERS, 'content-type': 'application/json; a=b, c/d' });
  assert.equal(oddType.status, 415, oddType.text);
  const oddList = await send(readOnly, { ...call, params: { name: 'list_zoos', arguments: { name: 'Odd type' } } });
  assert.deepEqual(oddList.json.result.structuredContent.records, []);
  const noStream = await send(readOnly, call, { ...HEADERS, accept: 'application/json' });
  assert.equal(noStream.status, 406);
  const oldVersion = await send(readOnly, call, { ...HEADERS, 'mcp-protocol-version': '1999-01-01' });
  assert.equal(oldVersion.status, 400);
  assert.match(oldVersion.json.error.message, /Unsupported protocol version/);
  // A batch and a notification: the SDK's.
  const batch = await send(readOnly, [call, { ...call, id: 2 }]);
  assert.equal(batch.status, 200);
  assert.deepEqual(batch.json.map((r: { id: number }) => r.id).sort(), [1, 2]);
  const notification = await send(readOnly, { jsonrpc: '2.0', method: 'notifications/initialized' });
  assert.equal(notification.status, 202);
  // With no Mcp-Protocol-Version (a client before 2025-06-18): still answered, both ways alike.
  const bare = { accept: HEADERS.accept, 'content-type': 'application/json' };
  const fast = await send(readOnly, call, bare);
  const sdk = await send(readOnly, { ...call, params: { ...call.params, _meta: {} } }, bare);
  assert.equal(fast.status, 200);
  assert.deepEqual(fast.json, sdk.json);
});

test('a tool call without a valid token is 401 before either path, nothing created', async () => {
  const r = await send('not-a-token', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'create_zoos', arguments: { name: 'Intruder' } } });
  assert.equal(r.status, 401);
  const list = await send(readOnly, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_zoos', arguments: { name: 'Intruder' } } });
  assert.deepEqual(list.json.result.structuredContent.records, []);
});

test('a session named by Mcp-Session-Id is checked on the fast path as on the SDK path: 404 for a forged one, answered for its own', async () => {
  const res = await server.fetch('/mcp', { method: 'POST', headers: { authorization: `Bearer ${readOnly}`, ...HEADERS }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 't', version: '1' } } }) });
  assert.equal(res.status, 200);
  const session = res.headers.get('mcp-session-id')!;
  assert.ok(session, 'initialize answers a session id');
  const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_zoos', arguments: {} } };
  const own = await send(readOnly, call, { ...HEADERS, 'mcp-session-id': session });
  assert.equal(own.status, 200, own.text);
  assert.ok(Array.isArray(own.json.result.structuredContent.records));
  const forged = `${session.slice(0, -2)}${session.endsWith('AA') ? 'BB' : 'AA'}`;
  for (const [what, body] of [['fast path', call], ['SDK', { ...call, params: { ...call.params, _meta: {} } }]] as const) {
    const r = await send(readOnly, body, { ...HEADERS, 'mcp-session-id': forged });
    assert.equal(r.status, 404, `${what}: ${r.text}`);
    const another = await send(readWrite, body, { ...HEADERS, 'mcp-session-id': session });
    assert.equal(another.status, 404, `${what}, another client's token: ${another.text}`);
  }
});
