// The access matrix: for each collection × method × kind of credential, the status of the
// access rules (docs/access.md#401-403-405) and ownership (docs/access.md#ownership), and no body that leaks another subject's data.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { startApp, type InProcessApp } from './helpers/app.js';
import { ALL_SCOPES, apiClient, asBearer, registerClient, requestToken, secretOf, type ApiClient } from './helpers/tokens.js';

let server: InProcessApp;
let expiring: InProcessApp;
let owner: ApiClient;
let other: ApiClient;
const records: Record<string, { own: string; foreign: string; ownUrl: string; foreignUrl: string; listUrl: string }> = {};
const SECRET_MARK = 'secret-of-the-other-subject';

const collections = ['zoos', 'animals', 'orders', 'articles'] as const;
type Collection = (typeof collections)[number];

function sample(collection: Collection, mark = 'x'): Record<string, unknown> {
  switch (collection) {
    case 'zoos':
      return { name: `zoo ${mark}`, city: mark };
    case 'animals':
      return { name: `animal ${mark}`, species: mark };
    case 'orders':
      return { item: `item ${mark}`, quantity: 1 };
    case 'articles':
      return { title: `title ${mark}` };
  }
}

async function create(client: ApiClient, collection: Collection, mark: string, zooId?: string): Promise<string> {
  const url = collection === 'animals' ? `/v1/zoos/${zooId}/animals` : `/v1/${collection}`;
  const res = await client.json('POST', url, sample(collection, mark));
  assert.equal(res.status, 201, res.text);
  return res.body.id;
}

before(async () => {
  [server, expiring] = await Promise.all([startApp(), startApp({ config: { auth: { accessTokenTtl: 3 } } })]);
  owner = await apiClient(server, 'owner-app');
  other = await apiClient(server, 'other-app');
  const ownZoo = await create(owner, 'zoos', 'own');
  const foreignZoo = await create(other, 'zoos', SECRET_MARK);
  for (const c of collections) {
    const own = c === 'zoos' ? ownZoo : await create(owner, c, 'own', ownZoo);
    const foreign = c === 'zoos' ? foreignZoo : await create(other, c, SECRET_MARK, foreignZoo);
    records[c] = { own, foreign, ownUrl: `/v1/${c}/${own}`, foreignUrl: `/v1/${c}/${foreign}`, listUrl: `/v1/${c}` };
  }
});

after(async () => {
  await Promise.all([server?.cleanup(), expiring?.cleanup()]);
});

type Op = { method: string; url: (c: Collection) => string; body?: (c: Collection) => unknown; write: boolean; headers?: Record<string, string> };
const ops: Record<string, Op> = {
  'GET list': { method: 'GET', url: (c) => records[c].listUrl, write: false },
  'GET one': { method: 'GET', url: (c) => records[c].ownUrl, write: false },
  'HEAD one': { method: 'HEAD', url: (c) => records[c].ownUrl, write: false },
  POST: { method: 'POST', url: (c) => (c === 'animals' ? `/v1/zoos/${records.zoos.own}/animals` : records[c].listUrl), body: (c) => sample(c, 'new'), write: true },
  PUT: { method: 'PUT', url: (c) => records[c].ownUrl, body: (c) => ({ ...sample(c, 'put'), ...(c === 'animals' ? { zoo_id: records.zoos.own } : {}) }), write: true },
  PATCH: { method: 'PATCH', url: (c) => records[c].ownUrl, body: () => ({}), write: true },
  'POST overridden to DELETE': { method: 'POST', url: (c) => records[c].ownUrl, write: true, headers: { 'x-http-method-override': 'DELETE' } },
};

function send(client: ApiClient | null, op: Op, c: Collection, headers: Record<string, string> = {}) {
  const body = op.body?.(c);
  const all = { ...(op.headers ?? {}), ...headers };
  if (client) return client.json(op.method, op.url(c), body, all);
  return server.json(op.method, op.url(c), body, all);
}

function assertNoLeak(text: string): void {
  assert.ok(!text.includes(SECRET_MARK), `response leaks another subject's data: ${text.slice(0, 300)}`);
}

test('no token, a malformed, an unknown and a foreign-scheme token: 401 with a Bearer challenge on every route and method', async () => {
  const variants: Record<string, Record<string, string>> = {
    none: {},
    malformed: { authorization: 'Bearer not a token' },
    unknown: { authorization: 'Bearer ' + 'A'.repeat(43) },
    basic: { authorization: 'Basic dXNlcjpwYXNz' },
  };
  for (const c of collections)
    for (const [opName, op] of Object.entries(ops))
      for (const [name, headers] of Object.entries(variants)) {
        const res = await send(null, op, c, headers);
        assert.equal(res.status, 401, `${name} ${opName} ${c}: ${res.status} ${res.text}`);
        assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer realm="gatehouse"/);
        if (name !== 'none' && name !== 'basic') assert.match(res.headers.get('www-authenticate')!, /error="invalid_token"/);
        if (op.method !== 'HEAD') assert.equal(typeof res.body.error, 'string');
        assertNoLeak(res.text);
      }
});

test('a token in the query string is not accepted', async () => {
  const token = owner.token;
  const res = await server.json('GET', `/v1/zoos?access_token=${encodeURIComponent(token)}`);
  assert.equal(res.status, 401);
});

test('an expired token: 401 on every collection', async () => {
  await registerClient(expiring, 'short-lived');
  const issued = await requestToken(expiring, 'short-lived', ALL_SCOPES);
  assert.equal(issued.status, 200);
  assert.ok(issued.body.expires_in >= 2 && issued.body.expires_in <= 3, `expires_in ${issued.body.expires_in}`);
  const client = asBearer(expiring, issued.body.access_token);
  assert.equal((await client.json('GET', '/v1/zoos')).status, 200);
  await new Promise((r) => setTimeout(r, 3100));
  for (const c of collections) {
    const res = await client.json('GET', `/v1/${c}`);
    assert.equal(res.status, 401, `${c}: ${res.text}`);
    assert.match(res.headers.get('www-authenticate')!, /invalid_token/);
  }
});

test('a revoked token: 401 on every route at once (the revoking instance empties its cache)', async () => {
  const victim = await apiClient(server, 'owner-app');
  assert.equal((await victim.json('GET', records.zoos.ownUrl)).status, 200, 'the check is now cached');
  const res = await server.fetch(`${server.authUrl}/revocation`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'Basic ' + Buffer.from(`owner-app:${secretOf('owner-app')}`).toString('base64'),
    },
    body: new URLSearchParams({ token: victim.token }).toString(),
  });
  assert.equal(res.status, 200);
  assert.equal((await victim.json('GET', records.zoos.ownUrl)).status, 401, 'no wait for the cache to expire');
  for (const c of collections)
    for (const [opName, op] of Object.entries(ops)) {
      const r = await send(victim, op, c);
      assert.equal(r.status, 401, `revoked ${opName} ${c}: ${r.status}`);
    }
});

test('a token with no scope on the collection: 403 on every method', async () => {
  for (const c of collections) {
    const unrelated = collections.find((x) => x !== c)!;
    const client = await apiClient(server, 'owner-app', `${unrelated}:read ${unrelated}:write`);
    for (const [opName, op] of Object.entries(ops)) {
      const res = await send(client, op, c);
      assert.equal(res.status, 403, `no scope ${opName} ${c}: ${res.status} ${res.text}`);
      assertNoLeak(res.text);
    }
  }
});

test('a read-only token: reads succeed, every write is 405 with Allow: GET, HEAD', async () => {
  for (const c of collections) {
    const client = await apiClient(server, 'owner-app', `${c}:read`);
    for (const [opName, op] of Object.entries(ops)) {
      const res = await send(client, op, c);
      if (!op.write) {
        assert.equal(res.status, 200, `read-only ${opName} ${c}: ${res.text}`);
        continue;
      }
      assert.equal(res.status, 405, `read-only ${opName} ${c}: ${res.status} ${res.text}`);
      assert.equal(res.headers.get('allow'), 'GET, HEAD');
      assert.equal(res.body.error.length > 0, true);
    }
  }
});

test('a write-only token: writes allowed, reads are 405 with the write methods in Allow', async () => {
  const client = await apiClient(server, 'owner-app', 'orders:write');
  const read = await client.json('GET', records.orders.ownUrl);
  assert.equal(read.status, 405);
  assert.equal(read.headers.get('allow'), 'PUT, PATCH, DELETE');
  const list = await client.json('GET', '/v1/orders');
  assert.equal(list.status, 405);
  assert.equal(list.headers.get('allow'), 'POST');
  assert.equal(list.body.detail.method, 'requires scope orders:read');
  // A method the URL does not support at all: the detail names what the URL allows, Allow what the token may do.
  const patchList = await client.json('PATCH', '/v1/orders', {});
  assert.equal(patchList.status, 405);
  assert.equal(patchList.headers.get('allow'), 'POST');
  assert.equal(patchList.body.detail.method, 'allowed: GET, HEAD, POST');
});

test("another subject's record: 403 on every method, and lists leave it out", async () => {
  for (const c of collections) {
    for (const method of ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE']) {
      const body = method === 'PUT' ? sample(c, 'steal') : method === 'PATCH' ? { } : undefined;
      const res = await owner.json(method, records[c].foreignUrl, body);
      assert.equal(res.status, 403, `${method} foreign ${c}: ${res.status} ${res.text}`);
      assertNoLeak(res.text);
    }
    const list = await owner.json('GET', `/v1/${c}?limit=100`);
    assert.equal(list.status, 200);
    assert.ok(list.body.every((r: { owner: string }) => r.owner === 'client:owner-app'), `${c} list shows foreign records`);
    assert.ok(list.body.some((r: { id: string }) => r.id === records[c].own));
    assertNoLeak(list.text);
  }
  // Children inherit visibility from their parent: the other subject's zoo and its animals.
  const nested = await owner.json('GET', `/v1/zoos/${records.zoos.foreign}/animals`);
  assert.equal(nested.status, 403);
  assertNoLeak(nested.text);
  const create = await owner.json('POST', `/v1/zoos/${records.zoos.foreign}/animals`, sample('animals', 'intruder'));
  assert.equal(create.status, 403);
  const flat = await owner.json('POST', '/v1/animals', { ...sample('animals', 'intruder'), zoo_id: records.zoos.foreign });
  assert.equal(flat.status, 403);
  const filtered = await owner.json('GET', `/v1/animals?zoo_id=${records.zoos.foreign}`);
  assert.equal(filtered.status, 403, 'the flat filter answers like the nested URL');
  assertNoLeak(filtered.text);
  // The foreign records are intact.
  for (const c of collections) {
    const mine = await other.json('GET', records[c].foreignUrl);
    assert.equal(mine.status, 200);
    assert.equal(mine.body.owner, 'client:other-app');
  }
});

test('own records with a full token: every method succeeds and owner is read-only', async () => {
  for (const c of collections) {
    const id = await create(owner, c, 'mine', records.zoos.own);
    const url = `/v1/${c}/${id}`;
    const got = await owner.json('GET', url);
    assert.equal(got.status, 200);
    assert.equal(got.body.owner, 'client:owner-app');
    const steal = await owner.json('PATCH', url, { owner: 'client:other-app' });
    assert.equal(steal.status, 400);
    assert.ok('owner' in steal.body.detail);
    assert.equal((await owner.json('PATCH', url, {})).status, 200);
    assert.equal((await owner.json('HEAD', url)).status, 200);
    assert.equal((await owner.json('DELETE', url)).status, 204);
    assert.equal((await owner.json('GET', url)).status, 410);
  }
});

// --- mac tokens (draft-ietf-oauth-v2-http-mac) ---

interface MacToken {
  access_token: string;
  mac_key: string;
  receivedAt: number;
}

async function macToken(scope: string): Promise<MacToken> {
  await registerClient(server, 'mac-app', { tokenType: 'mac' });
  const res = await requestToken(server, 'mac-app', scope);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.token_type, 'mac');
  assert.equal(res.body.mac_algorithm, 'hmac-sha-256');
  assert.equal(typeof res.body.mac_key, 'string');
  return { access_token: res.body.access_token, mac_key: res.body.mac_key, receivedAt: Date.now() };
}

function macHeader(t: MacToken, method: string, path: string, opts: { nonce?: string; key?: string; bodyhash?: string } = {}): string {
  const url = new URL(server.url);
  const age = Math.floor((Date.now() - t.receivedAt) / 1000);
  const nonce = opts.nonce ?? `${age}:${Math.random().toString(36).slice(2)}`;
  const text = [nonce, method, path, url.hostname, url.port || '443', opts.bodyhash ?? '', ''].join('\n') + '\n';
  const mac = createHmac('sha256', opts.key ?? t.mac_key).update(text).digest('base64');
  return `MAC id="${t.access_token}", nonce="${nonce}", ${opts.bodyhash ? `bodyhash="${opts.bodyhash}", ` : ''}mac="${mac}"`;
}

test('mac token with bodyhash: the hash of the body actually sent is enforced', async () => {
  const t = await macToken('zoos:read zoos:write');
  const body = JSON.stringify({ name: 'hashed zoo' });
  const hash = createHash('sha256').update(body).digest('base64');
  const good = await server.json('POST', '/v1/zoos', body, { authorization: macHeader(t, 'POST', '/v1/zoos', { bodyhash: hash }) });
  assert.equal(good.status, 201, good.text);
  const tampered = JSON.stringify({ name: 'tampered zoo' });
  const bad = await server.json('POST', '/v1/zoos', tampered, { authorization: macHeader(t, 'POST', '/v1/zoos', { bodyhash: hash }) });
  assert.equal(bad.status, 401);
  assert.match(bad.headers.get('www-authenticate')!, /body hash/);
  const list = await server.json('GET', '/v1/zoos?name=tampered%20zoo', undefined, { authorization: macHeader(t, 'GET', '/v1/zoos?name=tampered%20zoo') });
  assert.deepEqual(list.body, [], 'nothing was created from the tampered request');
});

test('mac token with bodyhash on a raw attachment upload: the digest taken while the body was spooled to disk is enforced', async () => {
  const t = await macToken('articles:read articles:write');
  const created = await server.json('POST', '/v1/articles', { title: 'signed files' }, { authorization: macHeader(t, 'POST', '/v1/articles') });
  assert.equal(created.status, 201, created.text);
  const target = `/v1/articles/${created.body.id}/attachments`;
  const pdf = Buffer.from('%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n', 'latin1');
  const hash = createHash('sha256').update(pdf).digest('base64');
  const send = (bytes: Buffer) =>
    server.fetch(target, { method: 'POST', body: bytes, headers: { accept: 'application/json', 'content-type': 'application/pdf', authorization: macHeader(t, 'POST', target, { bodyhash: hash }) } });
  const good = await send(pdf);
  assert.equal(good.status, 201, await good.text());
  const tampered = Buffer.from(pdf.toString('latin1').replace('1.7', '1.6'), 'latin1');
  const bad = await send(tampered);
  assert.equal(bad.status, 401, await bad.text());
  assert.match(bad.headers.get('www-authenticate')!, /body hash/);
  const list = await server.json('GET', target, undefined, { authorization: macHeader(t, 'GET', target) });
  assert.equal(list.body.length, 1, 'only the upload whose bytes match its bodyhash is stored');
});

test('without a valid token the answer is 401 before the body is even read', async () => {
  const malformed = await server.json('POST', '/v1/zoos', '{"name":', {});
  assert.equal(malformed.status, 401);
  const text = await server.json('POST', '/v1/zoos', 'plain', { 'content-type': 'text/plain' });
  assert.equal(text.status, 401);
  const badToken = await server.json('POST', '/v1/zoos', '{not json', { authorization: 'Bearer nope' });
  assert.equal(badToken.status, 401);
});

test('mac token: a good MAC is accepted, a bad MAC, a replayed nonce, a stale nonce and Bearer use are 401', async () => {
  const t = await macToken('zoos:read zoos:write');
  const ok = await server.json('GET', '/v1/zoos', undefined, { authorization: macHeader(t, 'GET', '/v1/zoos') });
  assert.equal(ok.status, 200, ok.text);

  const created = await server.json('POST', '/v1/zoos', { name: 'mac zoo' }, { authorization: macHeader(t, 'POST', '/v1/zoos') });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.owner, 'client:mac-app');

  const bad = await server.json('GET', '/v1/zoos', undefined, { authorization: macHeader(t, 'GET', '/v1/zoos', { key: 'wrong-key' }) });
  assert.equal(bad.status, 401);
  assert.match(bad.headers.get('www-authenticate')!, /^MAC realm="gatehouse".*error="invalid_token"/);

  const wrongPath = await server.json('GET', '/v1/zoos?limit=1', undefined, { authorization: macHeader(t, 'GET', '/v1/zoos') });
  assert.equal(wrongPath.status, 401);

  const header = macHeader(t, 'GET', '/v1/zoos', { nonce: `0:replay-${Date.now()}` });
  assert.equal((await server.json('GET', '/v1/zoos', undefined, { authorization: header })).status, 200);
  const replay = await server.json('GET', '/v1/zoos', undefined, { authorization: header });
  assert.equal(replay.status, 401);
  assert.match(replay.headers.get('www-authenticate')!, /replayed nonce/);

  const stale = await server.json('GET', '/v1/zoos', undefined, { authorization: macHeader(t, 'GET', '/v1/zoos', { nonce: '9999:abc' }) });
  assert.equal(stale.status, 401);

  const asBearerToken = await server.json('GET', '/v1/zoos', undefined, { authorization: `Bearer ${t.access_token}` });
  assert.equal(asBearerToken.status, 401);

  const scopeless = await server.json('GET', '/v1/orders', undefined, { authorization: macHeader(t, 'GET', '/v1/orders') });
  assert.equal(scopeless.status, 403);

  const readOnly = await macToken('zoos:read');
  const denied = await server.json('POST', '/v1/zoos', { name: 'nope' }, { authorization: macHeader(readOnly, 'POST', '/v1/zoos') });
  assert.equal(denied.status, 405);
  assert.equal(denied.headers.get('allow'), 'GET, HEAD');
});
