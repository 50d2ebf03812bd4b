// Events across instances (docs/events.md, docs/deployment.md#what-is-shared-where): two instances on one PostgreSQL
// database and one Redis. A stream on B sees writes made on A within a second; a reader following
// the feed while both instances write concurrently gets every event exactly once (ids become
// visible in order); a webhook's events are each attempted by one instance.
// Spawned server (test/helpers/server.ts), not in process: two instances on PostgreSQL and Redis.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { createPgDatabase, pgAvailable, redisAvailable, startServer, tempDir, TEST_REDIS_URL, type TestServer } from './helpers/server.js';
import { asBearer, registerClient, requestToken } from './helpers/tokens.js';
import { addClient, basic, post } from './helpers/oauth.js';
import { openStream } from './helpers/events.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

const available = pgAvailable && redisAvailable;
const skip = !available && 'PostgreSQL or Redis not reachable';
let a: TestServer;
let b: TestServer;
let receiver: Receiver;
let database: { url: string; drop(): Promise<void> } | null = null;

before(async () => {
  if (!available) return;
  database = await createPgDatabase();
  receiver = await startReceiver(tempDir('gatehouse-events-scale-'));
  const env = { DATABASE_URL: database.url, REDIS_URL: TEST_REDIS_URL, NODE_EXTRA_CA_CERTS: receiver.caFile };
  const config = { events: { webhooks: { allowPrivateNetworks: true } } };
  a = await startServer({ env, config });
  b = await startServer({ env, config });
});

after(async () => {
  await Promise.all([a?.cleanup(), b?.cleanup()]);
  await receiver?.close();
  await database?.drop();
});

async function token(server: TestServer, client: string): Promise<string> {
  registerClient(server, client);
  const res = await requestToken(server, client, 'zoos:read zoos:write');
  assert.equal(res.status, 200);
  return res.body.access_token;
}

test('a stream on B sees a write on A within a second', { skip }, async () => {
  const t = await token(a, 'events-scale');
  const s = await openStream(b, '/v1/events', { authorization: `Bearer ${t}` });
  assert.equal(s.status, 200);
  const delays: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = Date.now();
    const created = await asBearer(a, t).json('POST', '/v1/zoos', { name: `across ${i}` });
    assert.equal(created.status, 201);
    const [e] = (await s.waitFor(i + 1, 3000)).slice(i);
    assert.equal(JSON.parse(e.data).record_id, created.body.id);
    delays.push(Date.now() - t0);
  }
  s.close();
  assert.ok(Math.max(...delays) < 1000, `delays ${delays.join(', ')} ms`);
});

test('concurrent writes on both instances: a reader following the feed gets every event once, in id order', { skip }, async () => {
  const t = await token(a, 'events-order');
  const start = await lastId(a, t);
  const seen: string[] = [];
  let after = start;
  let writing = true;
  // The reader polls while the writes happen: an id that became visible late would be skipped.
  const reader = (async () => {
    while (writing || seen.length < 60) {
      const page = await asBearer(b, t).json('GET', `/v1/events?after=${after}&limit=100&wait=1`);
      assert.equal(page.status, 200, page.text);
      for (const e of page.body) {
        assert.ok(Number(e.id) > Number(after));
        seen.push(e.record_id);
        after = e.id;
      }
      if (!writing && page.body.length === 0) break;
    }
  })();
  const ids: string[] = [];
  await Promise.all(
    Array.from({ length: 60 }, async (_, i) => {
      const res = await asBearer(i % 2 ? a : b, t).json('POST', '/v1/zoos', { name: `order ${i}` });
      assert.equal(res.status, 201);
      ids.push(res.body.id);
    }),
  );
  writing = false;
  await reader;
  assert.equal(seen.length, 60, `saw ${seen.length}`);
  assert.deepEqual([...seen].sort(), [...ids].sort());
});

test('a webhook on two instances: each event is delivered, and attempted by one instance', { skip }, async () => {
  const bot = addClient(a, 'events-admin', ['--grant', 'client_credentials', '--scope', 'admin']);
  const adminToken = (await post(a, 'token', { grant_type: 'client_credentials', scope: 'admin' }, { auth: basic(bot.client_id, bot.client_secret!) })).body.access_token;
  const hook = await a.json('POST', '/admin/v1/webhooks', { url: `${receiver.url}/scale`, collections: ['zoos'] }, { authorization: `Bearer ${adminToken}` });
  assert.equal(hook.status, 201, hook.text);
  const t = await token(a, 'events-hook');
  const ids: string[] = [];
  await Promise.all(
    Array.from({ length: 30 }, async (_, i) => {
      const res = await asBearer(i % 2 ? a : b, t).json('POST', '/v1/zoos', { name: `hook ${i}` });
      ids.push(res.body.id);
    }),
  );
  const signer = new Webhook(hook.body.secret);
  const recordIds = () =>
    receiver.received
      .filter((r) => r.path === '/scale')
      .map((r) => (signer.verify(r.body, { 'webhook-id': r.headers['webhook-id'], 'webhook-timestamp': r.headers['webhook-timestamp'], 'webhook-signature': r.headers['webhook-signature'] }) as { record_id: string }).record_id);
  await receiver.waitFor(() => ids.every((id) => recordIds().includes(id)), 10_000);
  await new Promise((r) => setTimeout(r, 1500)); // a second instance would have sent its copy by now
  const counts = new Map<string, number>();
  for (const id of recordIds()) counts.set(id, (counts.get(id) ?? 0) + 1);
  assert.deepEqual([...counts.values()].filter((n) => n > 1), [], 'an event was delivered twice');
  const attempts = await a.json('GET', `/admin/v1/webhooks/${hook.body.id}/deliveries?limit=100`, undefined, { authorization: `Bearer ${adminToken}` });
  assert.equal(attempts.body.length, 30);
  assert.ok(attempts.body.every((x: { attempt: number; outcome: string }) => x.attempt === 1 && x.outcome === 'succeeded'));
});

async function lastId(server: TestServer, t: string): Promise<string> {
  let after = '0';
  for (;;) {
    const page = (await asBearer(server, t).json('GET', `/v1/events?after=${after}&limit=100`)).body;
    if (page.length === 0) return after;
    after = page[page.length - 1].id;
  }
}
