// The MCP server's access layer (docs/mcp.md), as JSON-RPC over HTTP against the in-process app:
// the 401s and their challenge, audiences (/v1 and /mcp tokens are not interchangeable), tools per
// scope, refusals as tool errors naming the scope or the reason with nothing changed, the same
// records and events as /v1, a revoked and an expired token, malformed bodies never a 5xx.
// (test/mcp-sdk.test.ts runs the official SDK client's whole OAuth flow against a spawned server.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID, createHash } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { startApp, type InProcessApp } from './helpers/app.js';
import { addClient, addUser, basic, post, sleep, type RegisteredClient } from './helpers/oauth.js';

let server: InProcessApp;
let expiring: InProcessApp;
let rp: RegisteredClient;
/** Tokens for /v1 come from another client: a new token of the same user and client replaces the grant's tokens. */
let apiClient: RegisteredClient;
let web: RegisteredClient;
let rpExpiring: RegisteredClient;
const PROTOCOL = '2025-06-18';

before(async () => {
  [server, expiring] = await Promise.all([startApp(), startApp({ config: { auth: { accessTokenTtl: 1 }, api: { rateLimit: { max: 5, window: 60 } } } })]);
  for (const s of [server, expiring]) {
    await addUser(s, 'alice', 'alice-password-1');
    await addUser(s, 'bob', 'bob-password-1');
  }
  rp = await addClient(server, 'rp', ['--grant', 'password']);
  apiClient = await addClient(server, 'api-client', ['--grant', 'password']);
  web = await addClient(server, 'web-agent', ['--grant', 'password', '--origin', 'https://agent.example']);
  rpExpiring = await addClient(expiring, 'rp', ['--grant', 'password']);
});
after(async () => {
  await server?.cleanup();
  await expiring?.cleanup();
});

async function token(user: string, scope: string, resource: 'mcp' | 'v1', s = server, client = resource === 'v1' ? apiClient : rp): Promise<string> {
  const r = await post(s, 'token', { grant_type: 'password', username: user, password: `${user}-password-1`, scope, resource: `${s.url}/${resource}` }, { auth: basic(client.client_id, client.client_secret!) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.access_token;
}

let ids = 0;
async function rpc(tok: string | null, method: string, params: Record<string, unknown> = {}, s = server) {
  const res = await s.fetch('/mcp', {
    method: 'POST',
    headers: {
      ...(tok ? { authorization: `Bearer ${tok}` } : {}),
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-protocol-version': PROTOCOL,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++ids, method, params }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

/** A tools/call's result (a tool error included), asserting the HTTP and JSON-RPC layers succeeded. */
async function call(tok: string, name: string, args: Record<string, unknown> = {}) {
  const r = await rpc(tok, 'tools/call', { name, arguments: args });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.ok(r.body.result, JSON.stringify(r.body));
  const result = r.body.result;
  return { ...result, json: JSON.parse(result.content[0].text) };
}

const v1 = (tok: string, path: string) => server.json('GET', `/v1${path}`, undefined, { authorization: `Bearer ${tok}` });

test('no token: 401 whose challenge names the /mcp resource metadata, which names the resource and the authorization server', async () => {
  const r = await rpc(null, 'tools/list');
  assert.equal(r.status, 401);
  const challenge = r.headers.get('www-authenticate')!;
  assert.match(challenge, new RegExp(`^Bearer .*resource_metadata="${server.url}/\\.well-known/oauth-protected-resource/mcp"`));
  const meta = await server.json('GET', '/.well-known/oauth-protected-resource/mcp');
  assert.equal(meta.status, 200);
  assert.equal(meta.body.resource, `${server.url}/mcp`);
  assert.deepEqual(meta.body.authorization_servers, [server.url]);
  assert.ok(meta.body.scopes_supported.includes('zoos:write'));
  const bad = await rpc('not-a-token', 'tools/list');
  assert.equal(bad.status, 401);
  assert.match(bad.headers.get('www-authenticate')!, /error="invalid_token"/);
});

test('audiences: a /v1 token is 401 at /mcp and an /mcp token is 401 at /v1, nothing created', async () => {
  const forApi = await token('alice', 'zoos:read zoos:write', 'v1');
  const forMcp = await token('alice', 'zoos:read zoos:write', 'mcp');
  const r = await rpc(forApi, 'tools/call', { name: 'create_zoos', arguments: { name: 'Wrong door' } });
  assert.equal(r.status, 401);
  assert.match(r.headers.get('www-authenticate')!, /another resource/);
  assert.equal((await v1(forMcp, '/zoos')).status, 401);
  assert.equal((await v1(forApi, '/zoos?name=Wrong%20door')).body.length, 0);
});

test('tools per scope: a read-only token sees list_ and get_ only; write adds create_, update_, delete_; descriptions and schemas from the config', async () => {
  const ro = await rpc(await token('alice', 'zoos:read', 'mcp'), 'tools/list');
  assert.deepEqual(ro.body.result.tools.map((t: { name: string }) => t.name), ['list_zoos', 'get_zoos']);
  const rw = await rpc(await token('alice', 'zoos:read zoos:write animals:read', 'mcp'), 'tools/list');
  const tools = rw.body.result.tools as { name: string; description: string; inputSchema: any }[];
  assert.deepEqual(tools.map((t) => t.name), ['list_zoos', 'get_zoos', 'create_zoos', 'update_zoos', 'delete_zoos', 'list_animals', 'get_animals']);
  const create = tools.find((t) => t.name === 'create_zoos')!;
  assert.match(create.description, /Zoos, each owned by whoever created it/);
  assert.deepEqual(create.inputSchema.required, ['name']);
  assert.deepEqual(create.inputSchema.properties.founded, { type: 'integer' });
  const list = tools.find((t) => t.name === 'list_zoos')!.inputSchema;
  for (const k of ['name', 'city', 'founded', 'q', 'sortby', 'order', 'limit', 'after']) assert.ok(list.properties[k], k);
  assert.ok(list.properties.founded.anyOf[1].properties.gte, 'the operators of an integer field');
  assert.ok(list.properties.name.anyOf[1].properties.prefix, 'the operators of a string field');
  const animals = tools.find((t) => t.name === 'list_animals')!.inputSchema;
  assert.ok(animals.properties.zoo_id, 'a nested collection takes its parent id');
});

test('create, list with filters and paging, get, update, delete — the same records, owner and events as /v1', async () => {
  const tok = await token('alice', 'zoos:read zoos:write animals:read animals:write', 'mcp');
  const api = await token('alice', 'zoos:read', 'v1');
  const made = [];
  for (const [name, founded] of [['Vincennes', 1934], ['Berlin', 1844], ['Basel', 1874]] as const) {
    const r = await call(tok, 'create_zoos', { name, city: name === 'Vincennes' ? 'Paris' : 'Elsewhere', founded });
    assert.equal(r.isError, undefined, JSON.stringify(r.json));
    assert.equal(r.structuredContent.name, name);
    made.push(r.json);
  }
  const alice = made[0].owner as string;
  assert.match(alice, /^user:/);
  const seen = await v1(api, `/zoos/${made[0].id}`);
  assert.equal(seen.status, 200);
  assert.equal(seen.body.owner, alice);
  assert.equal(seen.body.name, 'Vincennes');

  const older = await call(tok, 'list_zoos', { founded: { lt: 1900 }, sortby: 'founded', limit: 1 });
  assert.deepEqual(older.json.records.map((z: { name: string }) => z.name), ['Berlin']);
  assert.ok(older.json.next, 'a next cursor');
  const page2 = await call(tok, 'list_zoos', { founded: { lt: 1900 }, sortby: 'founded', limit: 1, after: older.json.next });
  assert.deepEqual(page2.json.records.map((z: { name: string }) => z.name), ['Basel']);
  assert.deepEqual((await call(tok, 'list_zoos', { city: 'Paris' })).json.records.map((z: { id: string }) => z.id), [made[0].id]);
  assert.deepEqual((await call(tok, 'list_zoos', { name: { in: ['Basel', 'Berlin'] }, sortby: 'name', order: 'desc' })).json.records.map((z: { name: string }) => z.name), ['Berlin', 'Basel']);
  assert.deepEqual((await call(tok, 'list_zoos', { q: 'vincennes' })).json.records.map((z: { id: string }) => z.id), [made[0].id]);

  const animal = await call(tok, 'create_animals', { zoo_id: made[0].id, name: 'Rita', species: 'giraffe' });
  assert.equal(animal.json.zoo_id, made[0].id);
  assert.equal((await call(tok, 'list_animals', { zoo_id: made[0].id })).json.records.length, 1);

  const got = await call(tok, 'get_zoos', { id: made[1].id });
  assert.equal(got.json.name, 'Berlin');
  const updated = await call(tok, 'update_zoos', { id: made[1].id, city: 'Berlin' });
  assert.equal(updated.json.city, 'Berlin');
  assert.equal(updated.json.founded, 1844, 'partial: the other fields stay');
  assert.equal('founded' in (await call(tok, 'update_zoos', { id: made[2].id, founded: null })).json, false, 'null removes an optional field');
  assert.equal((await v1(api, `/zoos/${made[1].id}`)).body.city, 'Berlin');
  const deleted = await call(tok, 'delete_zoos', { id: made[2].id });
  assert.deepEqual(deleted.json, { id: made[2].id, deleted: true });
  assert.equal((await v1(api, `/zoos/${made[2].id}`)).status, 410);
  const gone = await call(tok, 'get_zoos', { id: made[2].id });
  assert.equal(gone.isError, true);
  assert.equal(gone.json.status, 410);

  const events = await server.ctx.store.db.selectFrom('events').selectAll().where('record_id', '=', made[0].id).execute();
  assert.deepEqual(events.map((e: any) => [e.type, e.actor]), [['record.created', alice]]);

  const read = await rpc(tok, 'resources/read', { uri: `gatehouse://zoos/${made[0].id}` });
  assert.equal(JSON.parse(read.body.result.contents[0].text).name, 'Vincennes');
  const listed = await rpc(tok, 'resources/list');
  assert.ok(listed.body.result.resources.some((r: { uri: string }) => r.uri === `gatehouse://zoos/${made[0].id}`));
  const foreign = await rpc(tok, 'resources/read', { uri: 'gatehouse://orders/x' });
  assert.match(foreign.body.error.message, /orders/, 'a collection the token cannot read: a JSON-RPC error naming it');
  const templates = await rpc(tok, 'resources/templates/list');
  assert.ok(templates.body.result.resourceTemplates.some((t: { uriTemplate: string }) => t.uriTemplate === 'gatehouse://zoos/{id}'));
});

test('refusals are tool errors naming the scope or the reason, nothing changed', async () => {
  const ro = await token('alice', 'zoos:read', 'mcp');
  const denied = await call(ro, 'create_zoos', { name: 'Not allowed' });
  assert.equal(denied.isError, true);
  assert.equal(denied.json.status, 403);
  assert.match(denied.json.detail.scope, /zoos:write/);
  const noScope = await call(ro, 'list_orders');
  assert.equal(noScope.isError, true);
  assert.match(noScope.json.detail.scope, /orders:read/);
  assert.equal((await call(ro, 'list_zoos', { name: 'Not allowed' })).json.records.length, 0);
  const unknown = await call(ro, 'drop_everything');
  assert.equal(unknown.isError, true);
  assert.equal(unknown.json.status, 404);
});

test("another user's record: 403 as a tool error on get, update and delete, the record unchanged", async () => {
  const bob = await token('bob', 'zoos:read zoos:write', 'mcp');
  const alice = await token('alice', 'zoos:read zoos:write', 'mcp');
  const zoo = (await call(bob, 'create_zoos', { name: "Bob's zoo" })).json;
  for (const [name, args] of [['get_zoos', { id: zoo.id }], ['update_zoos', { id: zoo.id, name: 'Taken' }], ['delete_zoos', { id: zoo.id }]] as const) {
    const r = await call(alice, name, args);
    assert.equal(r.isError, true, name);
    assert.equal(r.json.status, 403, name);
    assert.match(r.json.error, /another owner/);
  }
  assert.equal((await call(alice, 'list_zoos', { name: "Bob's zoo" })).json.records.length, 0, 'not listed to another user');
  assert.equal((await call(bob, 'get_zoos', { id: zoo.id })).json.name, "Bob's zoo");
});

test('missing, unknown or wrongly typed arguments: a tool error naming the argument, nothing created', async () => {
  const tok = await token('alice', 'zoos:read zoos:write', 'mcp');
  const cases: [string, Record<string, unknown>, string][] = [
    ['get_zoos', {}, 'id'],
    ['get_zoos', { id: 5 }, 'id'],
    ['create_zoos', {}, 'name'],
    ['create_zoos', { name: 'Typed', founded: 'long ago' }, 'founded'],
    ['create_zoos', { name: 'Extra', owner: 'user:x' }, 'owner'],
    ['list_zoos', { founded: 'abc' }, 'founded'],
    ['list_zoos', { founded: { near: 3 } }, 'founded[near]'],
    ['list_zoos', { limit: 1000 }, 'limit'],
    ['list_zoos', { colour: 'red' }, 'colour'],
    ['update_zoos', { name: 'No id' }, 'id'],
  ];
  for (const [name, args, field] of cases) {
    const r = await call(tok, name, args);
    assert.equal(r.isError, true, `${name} ${JSON.stringify(args)}`);
    assert.equal(r.json.status, 400, `${name} ${JSON.stringify(args)}: ${JSON.stringify(r.json)}`);
    assert.ok(field in r.json.detail, `${name} ${JSON.stringify(args)} names ${field}: ${JSON.stringify(r.json.detail)}`);
  }
  for (const name of ['Typed', 'Extra']) assert.equal((await call(tok, 'list_zoos', { name })).json.records.length, 0);
});

test('malformed bodies: the SDK\'s JSON-RPC errors, never a 5xx; GET and DELETE are 405 (stateless)', async () => {
  const tok = await token('alice', 'zoos:read', 'mcp');
  const send = (body: string, extra: Record<string, string> = {}) =>
    server.fetch('/mcp', { method: 'POST', headers: { authorization: `Bearer ${tok}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...extra }, body });
  for (const body of ['{not json', '{"foo": 1}', '', '"text"', '\u00ff']) {
    const res = await send(body);
    assert.ok(res.status >= 400 && res.status < 500, `${body}: ${res.status}`);
    const json = await res.json();
    assert.equal(json.jsonrpc, '2.0', body);
    assert.ok(json.error.code < 0, body);
  }
  const unknownMethod = await rpc(tok, 'tools/teleport');
  assert.equal(unknownMethod.body.error.code, -32601);
  const noArgs = await rpc(tok, 'tools/call', {});
  assert.ok(noArgs.status < 500 && noArgs.body.error, JSON.stringify(noArgs.body));
  for (const method of ['GET', 'DELETE']) {
    const res = await server.fetch('/mcp', { method, headers: { authorization: `Bearer ${tok}`, accept: 'text/event-stream' } });
    assert.equal(res.status, 405, method);
  }
});

test('a revoked token is 401 within 1 s; an expired one is 401', async () => {
  const tok = await token('alice', 'zoos:read', 'mcp');
  assert.equal((await rpc(tok, 'tools/list')).status, 200);
  const revoked = await post(server, 'revocation', { token: tok }, { auth: basic('rp', rp.client_secret!) });
  assert.equal(revoked.status, 200);
  const deadline = Date.now() + 1000;
  let status = 200;
  while (Date.now() < deadline && status !== 401) status = (await rpc(tok, 'tools/list')).status;
  assert.equal(status, 401);

  const short = await token('alice', 'zoos:read', 'mcp', expiring, rpExpiring);
  assert.equal((await rpc(short, 'tools/list', {}, expiring)).status, 200);
  await sleep(2100);
  const late = await rpc(short, 'tools/call', { name: 'list_zoos', arguments: {} }, expiring);
  assert.equal(late.status, 401);
});

test('DPoP at /mcp as at /v1: a bound token needs the DPoP scheme and a proof for POST {publicUrl}/mcp', async () => {
  const key = (await generateKeyPair('ES256', { extractable: true })) as { publicKey: CryptoKey; privateKey: CryptoKey };
  const jwk = await exportJWK(key.publicKey);
  const proof = (htm: string, htu: string, claims: Record<string, unknown> = {}) =>
    new SignJWT({ htm, htu, jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).sign(key.privateKey);
  const issued = await server.fetch('/oauth/token', {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', authorization: basic('rp', rp.client_secret!), dpop: await proof('POST', `${server.url}/oauth/token`) },
    body: new URLSearchParams({ grant_type: 'password', username: 'alice', password: 'alice-password-1', scope: 'zoos:read', resource: `${server.url}/mcp` }).toString(),
  });
  const body = (await issued.json()) as { access_token: string; token_type: string };
  assert.equal(body.token_type, 'DPoP');
  const ath = createHash('sha256').update(body.access_token).digest('base64url');
  const send = (authorization: string, dpop?: string) =>
    server.fetch('/mcp', {
      method: 'POST',
      headers: { authorization, accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': PROTOCOL, ...(dpop ? { dpop } : {}) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
  const ok = await send(`DPoP ${body.access_token}`, await proof('POST', `${server.url}/mcp`, { ath }));
  assert.equal(ok.status, 200);
  assert.deepEqual(((await ok.json()) as any).result.tools.map((t: { name: string }) => t.name), ['list_zoos', 'get_zoos']);
  assert.equal((await send(`Bearer ${body.access_token}`)).status, 401, 'not as a bearer token');
  assert.equal((await send(`DPoP ${body.access_token}`)).status, 401, 'not without a proof');
  assert.equal((await send(`DPoP ${body.access_token}`, await proof('POST', `${server.url}/v1/zoos`, { ath }))).status, 401, 'not with a proof for another URL');
});

test('the quota (api.rateLimit) counts MCP requests per token: 429 with Retry-After past it', async () => {
  const tok = await token('bob', 'zoos:read', 'mcp', expiring, rpExpiring);
  const statuses = [];
  for (let i = 0; i < 6; i++) statuses.push((await rpc(tok, 'tools/list', {}, expiring)).status);
  assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
  const over = await rpc(tok, 'tools/list', {}, expiring);
  assert.ok(Number(over.headers.get('retry-after')) >= 1);
});

test('CORS: a preflight from any origin is 204 allowing the MCP headers; the 401 is readable by any origin; the answer carries the token\'s client\'s origin only', async () => {
  const preflight = await server.fetch('/mcp', {
    method: 'OPTIONS',
    headers: { origin: 'https://agent.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, mcp-protocol-version' },
  });
  assert.equal(preflight.status, 204);
  assert.match(preflight.headers.get('access-control-allow-headers')!, /Mcp-Protocol-Version/);
  // An MCP host in a page starts before it has registered: its preflight, then the 401 it reads (docs/mcp.md, Browsers).
  const stranger = await server.fetch('/mcp', {
    method: 'OPTIONS',
    headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, mcp-protocol-version' },
  });
  assert.equal(stranger.status, 204);
  assert.equal(stranger.headers.get('access-control-allow-origin'), 'https://evil.example');
  assert.equal(stranger.headers.get('access-control-allow-credentials'), null);
  const refused = await server.fetch('/mcp', {
    method: 'POST',
    headers: { origin: 'https://evil.example', accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': PROTOCOL },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  assert.equal(refused.status, 401);
  assert.equal(refused.headers.get('access-control-allow-origin'), '*');
  assert.match(refused.headers.get('access-control-expose-headers')!, /WWW-Authenticate/);
  assert.match(refused.headers.get('www-authenticate')!, /resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/mcp"/);
  const tok = await token('alice', 'zoos:read', 'mcp', server, web);
  const res = await server.fetch('/mcp', {
    method: 'POST',
    headers: { origin: 'https://agent.example', authorization: `Bearer ${tok}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': PROTOCOL },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('access-control-allow-origin'), 'https://agent.example');
  assert.equal(res.headers.get('access-control-allow-credentials'), null);
  // The same token from a page of another origin: the answer carries data, so no CORS headers.
  const elsewhere = await server.fetch('/mcp', {
    method: 'POST',
    headers: { origin: 'https://evil.example', authorization: `Bearer ${tok}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': PROTOCOL },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  assert.equal(elsewhere.status, 200);
  assert.equal(elsewhere.headers.get('access-control-allow-origin'), null);
});
