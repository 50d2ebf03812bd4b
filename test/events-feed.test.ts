// Events (docs/events.md#the-feed-get-v1events): the outbox as GET /v1/events shows it to a token — exactly the
// events of the records it could GET — as JSON pages with a long poll and as Server-Sent Events;
// every admin-side type on GET /admin/v1/events. Black-box over HTTPS against the real server.
// Spawned server (test/helpers/server.ts), not in process: event streams and long polls stay open, which inject cannot read.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/server.js';
import { apiClient, assertApiError, clientToken, asBearer, registerClient, requestToken, secretOf, type ApiClient } from './helpers/tokens.js';
import { addClient, basic, post } from './helpers/oauth.js';
import { openStream } from './helpers/events.js';

let server: TestServer;
let a: ApiClient;
let b: ApiClient;
let zoosOnly: ApiClient;
let ordersOnly: ApiClient;
let adminToken: string;

before(async () => {
  // articles shared: every token with articles:read sees every article's events.
  server = await startServer({ config: { collections: { articles: { access: 'shared' } } } });
  a = await apiClient(server, 'ev-a');
  b = await apiClient(server, 'ev-b');
  zoosOnly = await apiClient(server, 'ev-zoos', 'zoos:read');
  ordersOnly = await apiClient(server, 'ev-orders', 'orders:write');
  const bot = addClient(server, 'ev-admin', ['--grant', 'client_credentials', '--scope', 'admin']);
  const t = await post(server, 'token', { grant_type: 'client_credentials', scope: 'admin' }, { auth: basic(bot.client_id, bot.client_secret!) });
  adminToken = t.body.access_token;
});
after(async () => server?.cleanup());

async function feed(client: ApiClient, query = '') {
  const res = await client.json('GET', `/v1/events${query}`);
  assert.equal(res.status, 200, res.text);
  return res;
}

/** The newest event id a reader can see, by walking the feed (the default page size, `Link: next`). */
async function lastOf(get: (target: string) => Promise<{ body: { id: string }[] }>, base: string): Promise<string> {
  let after = '0';
  for (;;) {
    const page = (await get(`${base}?limit=100&after=${after}`)).body;
    if (page.length === 0) return after;
    after = page[page.length - 1].id;
  }
}
const latestId = (client: ApiClient) => lastOf((t) => client.json('GET', t), '/v1/events');

describe('the feed', () => {
  test('a record change is an event of the shape docs/events.md gives; a token sees its own records only in owner collections', async () => {
    const start = await latestId(a);
    const zoo = (await a.json('POST', '/v1/zoos', { name: 'Tierpark', city: 'Berlin', founded: 1955 })).body;
    const other = (await b.json('POST', '/v1/zoos', { name: 'Zoo Wien', city: 'Wien', founded: 1752 })).body;
    const page = (await feed(a, `?after=${start}`)).body;
    assert.equal(page.length, 1, JSON.stringify(page));
    const e = page[0];
    assert.deepEqual(Object.keys(e), ['id', 'type', 'time', 'collection', 'record_id', 'owner', 'actor', 'data']);
    assert.match(e.id, /^\d+$/);
    assert.ok(Number(e.id) > Number(start));
    assert.equal(e.type, 'record.created');
    assert.equal(e.collection, 'zoos');
    assert.equal(e.record_id, zoo.id);
    assert.equal(e.owner, 'client:ev-a');
    assert.equal(e.actor, 'client:ev-a');
    assert.ok(!Number.isNaN(Date.parse(e.time)));
    // data is the record as GET shows it.
    const got = await a.json('GET', `/v1/zoos/${zoo.id}`);
    assert.deepEqual(e.data, got.body);
    // b sees its own zoo, not a's.
    const bPage = (await feed(b, `?after=${start}`)).body;
    assert.deepEqual(
      bPage.map((x: { record_id: string }) => x.record_id),
      [other.id],
    );
  });

  test('updates and deletes, a cascaded delete gives each child its record.deleted', async () => {
    const start = await latestId(a);
    const zoo = (await a.json('POST', '/v1/zoos', { name: 'Hellabrunn', city: 'München', founded: 1911 })).body;
    const animal = (await a.json('POST', `/v1/zoos/${zoo.id}/animals`, { name: 'Leo', species: 'lion' })).body;
    assert.ok(animal.id, JSON.stringify(animal));
    const patched = await a.json('PATCH', `/v1/zoos/${zoo.id}`, { city: 'Munich' });
    assert.equal(patched.status, 200, patched.text);
    assert.equal((await a.json('DELETE', `/v1/zoos/${zoo.id}`)).status, 204);
    const page = (await feed(a, `?after=${start}`)).body;
    assert.deepEqual(
      page.map((e: { type: string; collection: string; record_id: string }) => [e.type, e.collection, e.record_id]),
      [
        ['record.created', 'zoos', zoo.id],
        ['record.created', 'animals', animal.id],
        ['record.updated', 'zoos', zoo.id],
        ['record.deleted', 'animals', animal.id],
        ['record.deleted', 'zoos', zoo.id],
      ],
    );
    assert.equal(page[2].data.city, 'Munich');
    assert.equal(page[4].data, null);
    // ids increase
    const ids = page.map((e: { id: string }) => Number(e.id));
    assert.deepEqual([...ids].sort((x, y) => x - y), ids);
  });

  test('a refused or failed write has no event', async () => {
    const start = await latestId(a);
    assert.equal((await a.json('POST', '/v1/zoos', { name: 42 })).status, 400);
    const zoo = (await b.json('POST', '/v1/zoos', { name: 'Private', city: 'Bern', founded: 1937 })).body;
    assert.equal((await a.json('PATCH', `/v1/zoos/${zoo.id}`, { city: 'X' })).status, 403);
    assert.equal((await a.json('PUT', `/v1/zoos/${zoo.id}`, { name: 'x', city: 'y', founded: 1 }, { 'if-match': '"9"' })).status, 403);
    assert.deepEqual((await feed(a, `?after=${start}`)).body, []);
  });

  test('shared collections: every reader sees every record’s events; filters by types and collections; Link next', async () => {
    const start = await latestId(a);
    const art = (await b.json('POST', '/v1/articles', { title: 'Hello', body: 'world' })).body;
    await a.json('POST', '/v1/zoos', { name: 'Zoo Zürich', city: 'Zürich', founded: 1929 });
    const all = await feed(a, `?after=${start}`);
    assert.deepEqual(
      all.body.map((e: { collection: string }) => e.collection),
      ['articles', 'zoos'],
    );
    assert.equal(all.body[0].record_id, art.id);
    const onlyArticles = (await feed(a, `?after=${start}&collections=articles`)).body;
    assert.deepEqual(
      onlyArticles.map((e: { record_id: string }) => e.record_id),
      [art.id],
    );
    assert.deepEqual((await feed(a, `?after=${start}&types=record.deleted`)).body, []);
    const limited = await feed(a, `?after=${start}&limit=1`);
    assert.equal(limited.body.length, 1);
    const next = /<([^>]+)>; rel="next"/.exec(limited.headers.get('link') ?? '');
    assert.ok(next, limited.headers.get('link') ?? 'no Link');
    const url = new URL(next[1]);
    assert.equal(url.searchParams.get('after'), limited.body[0].id);
    assert.equal(url.searchParams.get('limit'), '1');
    const second = (await a.json('GET', url.pathname + url.search)).body;
    assert.equal(second[0].collection, 'zoos');
  });

  test('a token sees only the collections it may read; none at all is 403', async () => {
    const start = await latestId(a);
    await a.json('POST', '/v1/orders', { item: 'hay', quantity: 3 });
    await a.json('POST', '/v1/articles', { title: 'Seen by zoos:read?' });
    // zoos:read only: never orders or articles.
    const page = (await zoosOnly.json('GET', `/v1/events?after=${start}`)).body;
    assert.ok(Array.isArray(page));
    assert.ok(page.every((e: { collection: string }) => e.collection === 'zoos'));
    assertApiError(await zoosOnly.json('GET', '/v1/events?collections=orders'), 403, ['collections']);
    assertApiError(await ordersOnly.json('GET', '/v1/events'), 403, ['scope']);
  });

  test('bad parameters are 400 naming the parameter; admin types are not on /v1/events', async () => {
    for (const [query, key] of [
      ['?after=abc', 'after'],
      ['?after=-1', 'after'],
      ['?limit=0', 'limit'],
      ['?limit=100000', 'limit'],
      ['?wait=31', 'wait'],
      ['?types=record.made', 'types'],
      ['?types=grant.created', 'types'],
      ['?collections=nope', 'collections'],
      ['?collections=', 'collections'],
      ['?foo=1', 'foo'],
    ] as const)
      assertApiError(await a.json('GET', `/v1/events${query}`), 400, [key]);
    const noToken = await server.json('GET', '/v1/events');
    assert.equal(noToken.status, 401);
    assertApiError(await a.json('POST', '/v1/events', {}), 405);
    const html = await a.fetch('/v1/events', { headers: { accept: 'text/html' } });
    assert.equal(html.status, 415);
  });

  test('long poll: wait answers as soon as an event arrives, or [] after wait seconds', async () => {
    const start = await latestId(a);
    const t0 = Date.now();
    const empty = await feed(a, `?after=${start}&wait=1`);
    assert.deepEqual(empty.body, []);
    assert.ok(Date.now() - t0 >= 900, `answered after ${Date.now() - t0} ms`);
    const polling = feed(a, `?after=${start}&wait=20`);
    await new Promise((r) => setTimeout(r, 300));
    // another owner's write does not wake a's poll with anything it may see
    await b.json('POST', '/v1/zoos', { name: 'Not yours', city: 'Oslo', founded: 1900 });
    const t1 = Date.now();
    await a.json('POST', '/v1/zoos', { name: 'Yours', city: 'Oslo', founded: 1901 });
    const res = await polling;
    assert.ok(Date.now() - t1 < 1500, `the poll answered ${Date.now() - t1} ms after the write`);
    assert.equal(res.body.length, 1);
    assert.equal(res.body[0].data.name, 'Yours');
  });
});

describe('the stream', () => {
  test('Server-Sent Events: id, event and data; resume from Last-Event-ID with no gap and no duplicate', async () => {
    const start = await latestId(a);
    const s = await openStream(server, '/v1/events', { authorization: `Bearer ${a.token}` });
    assert.equal(s.status, 200);
    assert.match(s.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(s.headers.get('cache-control'), 'no-store');
    const z1 = (await a.json('POST', '/v1/zoos', { name: 'S1', city: 'Rome', founded: 1911 })).body;
    await b.json('POST', '/v1/zoos', { name: 'not for a', city: 'Rome', founded: 1911 });
    const z2 = (await a.json('POST', '/v1/zoos', { name: 'S2', city: 'Rome', founded: 1912 })).body;
    const [e1, e2] = await s.waitFor(2);
    s.close();
    assert.equal(e1.event, 'record.created');
    assert.equal(JSON.parse(e1.data).record_id, z1.id);
    assert.equal(e1.id, JSON.parse(e1.data).id);
    assert.equal(JSON.parse(e2.data).record_id, z2.id);
    // Written while nobody listened, then resumed from the first event: exactly what followed it.
    const z3 = (await a.json('POST', '/v1/zoos', { name: 'S3', city: 'Rome', founded: 1913 })).body;
    const resumed = await openStream(server, '/v1/events', { authorization: `Bearer ${a.token}`, 'last-event-id': e1.id! });
    const got = await resumed.waitFor(2);
    assert.deepEqual(
      got.map((e) => JSON.parse(e.data).record_id),
      [z2.id, z3.id],
    );
    const z4 = (await a.json('POST', '/v1/zoos', { name: 'S4', city: 'Rome', founded: 1914 })).body;
    const more = await resumed.waitFor(3);
    assert.equal(JSON.parse(more[2].data).record_id, z4.id);
    resumed.close();
    // after= works the same, and the feed from `start` agrees.
    const fromStart = await openStream(server, `/v1/events?after=${start}`, { authorization: `Bearer ${a.token}` });
    const all = await fromStart.waitFor(4);
    fromStart.close();
    assert.deepEqual(
      all.map((e) => JSON.parse(e.data).record_id),
      [z1.id, z2.id, z3.id, z4.id],
    );
  });

  test('the stream ends within a second of the token’s revocation', async () => {
    const token = await clientToken(server, 'ev-revoked', 'zoos:read zoos:write');
    const s = await openStream(server, '/v1/events', { authorization: `Bearer ${token}` });
    assert.equal(s.status, 200);
    await asBearer(server, token).json('POST', '/v1/zoos', { name: 'R', city: 'Riga', founded: 1912 });
    await s.waitFor(1);
    const revokedAt = Date.now();
    const r = await post(server, 'revocation', { token }, { auth: basic('ev-revoked', secretOf('ev-revoked')) });
    assert.equal(r.status, 200);
    const endedAt = await Promise.race([s.ended, new Promise<number>((resolve) => setTimeout(() => resolve(-1), 3000))]);
    assert.ok(endedAt > 0, 'the stream did not end');
    assert.ok(endedAt - revokedAt < 1000, `ended ${endedAt - revokedAt} ms after the revocation`);
  });

  test('the stream ends within a second of the token’s expiry', async () => {
    const short = await startServer({ config: { auth: { accessTokenTtl: 3 } } });
    try {
      registerClient(short, 'ev-expiring');
      const before = Date.now();
      const issued = await requestToken(short, 'ev-expiring', 'zoos:read');
      assert.equal(issued.body.expires_in, 3);
      const token = issued.body.access_token as string;
      const s = await openStream(short, '/v1/events', { authorization: `Bearer ${token}` });
      assert.equal(s.status, 200);
      const endedAt = await Promise.race([s.ended, new Promise<number>((resolve) => setTimeout(() => resolve(-1), 6000))]);
      assert.ok(endedAt > 0, 'the stream outlived its token');
      // The token expires 3 s after it was issued, somewhere between `before` and the first response.
      assert.ok(endedAt >= before + 3000 - 50, `ended ${endedAt - before} ms after the token request, before its expiry`);
      assert.ok(endedAt < before + 3000 + 1000 + 500, `ended ${endedAt - before} ms after the token request`);
    } finally {
      await short.cleanup();
    }
  });

  test('HEAD with Accept: text/event-stream answers the stream’s headers at once, with no stream', async () => {
    const started = Date.now();
    const res = await a.fetch('/v1/events', { method: 'HEAD', headers: { accept: 'text/event-stream' } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(await res.text(), '');
    assert.ok(Date.now() - started < 2000);
    const admin = await server.fetch('/admin/v1/events', { method: 'HEAD', headers: { accept: 'text/event-stream', authorization: `Bearer ${adminToken}` } });
    assert.equal(admin.status, 200);
    assert.match(admin.headers.get('content-type') ?? '', /^text\/event-stream/);
  });

  test('a stream from Accept without JSON still checks the token and the parameters', async () => {
    const res = await server.fetch('/v1/events', { headers: { accept: 'text/event-stream' } });
    assert.equal(res.status, 401);
    const bad = await a.fetch('/v1/events?types=nope', { headers: { accept: 'text/event-stream' } });
    assert.equal(bad.status, 400);
    assert.match(bad.headers.get('content-type') ?? '', /json/);
  });
});

describe('admin events', () => {
  const admin = (path: string) => server.json('GET', `/admin/v1${path}`, undefined, { authorization: `Bearer ${adminToken}` });

  test('every type is on /admin/v1/events; a resource token is refused there', async () => {
    const start = await lastOf(admin, '/events');
    addClient(server, 'ev-new-client', ['--grant', 'client_credentials', '--scope', 'zoos:read']);
    const badLogin = await post(server, 'token', { grant_type: 'password', username: 'nobody', password: 'wrong-password-1' }, { auth: basic('ev-new-client', 'x'.repeat(40)) });
    assert.ok(badLogin.status >= 400);
    const page = (await admin(`/events?after=${start}`)).body;
    const types = page.map((e: { type: string }) => e.type);
    assert.ok(types.includes('client.created'), JSON.stringify(types));
    const created = page.find((e: { type: string }) => e.type === 'client.created');
    assert.equal(created.record_id, 'ev-new-client');
    assert.equal(created.data.client_id, 'ev-new-client');
    assert.ok(!JSON.stringify(created).includes('secret_hash'));
    const onlyClients = (await admin(`/events?after=${start}&types=client.created`)).body;
    assert.ok(onlyClients.every((e: { type: string }) => e.type === 'client.created'));
    assert.equal((await a.json('GET', '/admin/v1/events')).status, 403);
  });

  test('grant and token events: a revoked token is token.revoked', async () => {
    const start = await lastOf(admin, '/events');
    const token = await clientToken(server, 'ev-tok', 'zoos:read');
    const r = await post(server, 'revocation', { token }, { auth: basic('ev-tok', secretOf('ev-tok')) });
    assert.equal(r.status, 200);
    const page = (await admin(`/events?after=${start}&types=token.revoked`)).body;
    assert.equal(page.length, 1, JSON.stringify(page));
    assert.equal(page[0].data.client_id, 'ev-tok');
    assert.equal(page[0].actor, 'client:ev-tok');
  });
});
