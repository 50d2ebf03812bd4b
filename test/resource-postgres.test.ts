// A subset of the resource API's black-box tests on the production stores: PostgreSQL
// (DATABASE_URL) and Redis (REDIS_URL). Skipped when they are absent (the runner fails under CI=true).
// Spawned server (test/helpers/server.ts), not in process: PostgreSQL drops the server's connections and the process must stay up.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { TEST_REDIS_URL, createPgDatabase, pgAvailable, redisAvailable, startServer, type TestServer } from './helpers/server.js';
import { apiClient, assertApiError, type ApiClient } from './helpers/tokens.js';

const available = pgAvailable && redisAvailable;
const skip = available ? false : 'PostgreSQL and Redis are not both reachable (TEST_DATABASE_URL, TEST_REDIS_URL)';
let server: TestServer;
let database: { url: string; drop(): Promise<void> } | null = null;
let a: ApiClient;
let b: ApiClient;

before(async () => {
  if (!available) return;
  database = await createPgDatabase();
  server = await startServer({ env: { DATABASE_URL: database.url, REDIS_URL: TEST_REDIS_URL } });
  a = await apiClient(server, `pg-a-${randomUUID().slice(0, 8)}`);
  b = await apiClient(server, `pg-b-${randomUUID().slice(0, 8)}`);
});
after(async () => {
  if (server) await server.cleanup();
  if (database) await database.drop();
});

test('the server runs on PostgreSQL and Redis', { skip }, async () => {
  assert.match(server.output(), /database\s+PostgreSQL/);
  assert.match(server.output(), /redis/);
  const health = await server.json('GET', '/health');
  assert.equal(health.status, 200);
  assert.deepEqual(health.body.checks, { database: 'ok', redis: 'ok' });
});

test('create, read, PUT, PATCH with null, If-Match, DELETE and the tombstone', { skip }, async () => {
  const created = await a.json('POST', '/v1/zoos', { name: 'PG', city: 'Turin', founded: 1955 });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.headers.get('location'), `${server.url}/v1/zoos/${created.body.id}`);
  const id = created.body.id;
  assert.deepEqual((await a.json('GET', `/v1/zoos/${id}`)).body, created.body);
  const patched = await a.json('PATCH', `/v1/zoos/${id}`, { founded: null, city: 'Milan' }, { 'if-match': '"1"' });
  assert.equal(patched.status, 200, patched.text);
  assert.equal('founded' in patched.body, false);
  assert.equal(patched.body.city, 'Milan');
  assertApiError(await a.json('PUT', `/v1/zoos/${id}`, { name: 'Lost' }, { 'if-match': '"1"' }), 412);
  const put = await a.json('PUT', `/v1/zoos/${id}`, { name: 'Whole' }, { 'if-match': '"2"' });
  assert.equal(put.status, 200);
  assert.deepEqual(Object.keys(put.body).filter((k) => !['id', 'owner', 'created_at', 'updated_at', 'link'].includes(k)), ['name']);
  assertApiError(await a.json('POST', '/v1/zoos', { name: 3, created_at: 'x' }), 400);
  assertApiError(await b.json('GET', `/v1/zoos/${id}`), 403);
  assert.equal((await a.fetch(`/v1/zoos/${id}`, { method: 'DELETE' })).status, 204);
  assertApiError(await a.json('GET', `/v1/zoos/${id}`), 410);
  assertApiError(await a.json('PATCH', `/v1/zoos/${id}`, { name: 'x' }), 410);
  assertApiError(await a.json('GET', `/v1/zoos/${randomUUID()}`), 404);
  assertApiError(await a.json('DELETE', `/v1/zoos/${randomUUID()}`), 404);
});

test('nested children equal the flat filter; wrong or missing parent 404; deleting the parent tombstones them', { skip }, async () => {
  const zoo = (await a.json('POST', '/v1/zoos', { name: 'Parent' })).body;
  const other = (await a.json('POST', '/v1/zoos', { name: 'Other' })).body;
  const kid = (await a.json('POST', `/v1/zoos/${zoo.id}/animals`, { name: 'Kid', species: 'goat' })).body;
  await a.json('POST', '/v1/animals', { zoo_id: zoo.id, name: 'Flat', species: 'cat' });
  const nested = await a.json('GET', `/v1/zoos/${zoo.id}/animals`);
  const flat = await a.json('GET', `/v1/animals?zoo_id=${zoo.id}`);
  assert.equal(nested.body.length, 2);
  assert.deepEqual(nested.body, flat.body);
  assertApiError(await a.json('GET', `/v1/zoos/${other.id}/animals/${kid.id}`), 404);
  assertApiError(await a.json('POST', `/v1/zoos/${randomUUID()}/animals`, { name: 'x', species: 'y' }), 404);
  assert.equal((await a.fetch(`/v1/zoos/${zoo.id}`, { method: 'DELETE' })).status, 204);
  assertApiError(await a.json('GET', `/v1/animals/${kid.id}`), 410);
});

test('filters, sorting and paging with Link and X-Total-Count', { skip }, async () => {
  for (let i = 0; i < 12; i++) await a.json('POST', '/v1/zoos', { name: `L${String(i).padStart(2, '0')}`, city: i % 2 ? 'Odd' : 'Even', founded: 1900 + i });
  const page = await a.json('GET', '/v1/zoos?city=Odd&sortby=founded&order=desc&limit=4');
  assert.equal(page.status, 200);
  assert.equal(page.headers.get('x-total-count'), '6');
  assert.deepEqual(page.body.map((z: any) => z.founded), [1911, 1909, 1907, 1905]);
  const next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link')!)![1];
  const rest = await a.json('GET', next);
  assert.deepEqual(rest.body.map((z: any) => z.founded), [1903, 1901]);
  assert.doesNotMatch(rest.headers.get('link')!, /rel="next"/);
  const byName = await a.json('GET', '/v1/zoos?sortby=name&city=Even&page=2&per_page=2');
  assert.deepEqual(byName.body.map((z: any) => z.name), ['L04', 'L06']);
  assert.equal((await a.json('GET', '/v1/zoos?founded=1905')).body.length, 1);
  assertApiError(await a.json('GET', '/v1/zoos?founded=x'), 400, ['founded']);
  assertApiError(await a.json('GET', '/v1/zoos?limit=1&limit=2'), 400, ['limit']);
});

test('Idempotency-Key 303 and a bulk job with per-item errors', { skip }, async () => {
  const key = randomUUID();
  const first = await a.json('POST', '/v1/orders', { item: 'hay', quantity: 2 }, { 'idempotency-key': key });
  assert.equal(first.status, 201);
  const again = await a.json('POST', '/v1/orders', { item: 'hay', quantity: 2 }, { 'idempotency-key': key });
  assert.equal(again.status, 303);
  assert.equal(again.headers.get('location'), first.headers.get('location'));
  assertApiError(await a.json('POST', '/v1/orders', { item: 'oats', quantity: 2 }, { 'idempotency-key': key }), 400, ['idempotency-key']);

  const res = await a.json('POST', '/v1/orders', [{ item: 'a', quantity: 1 }, { item: 'b', quantity: 0 }, { item: 'c', quantity: 3 }]);
  assert.equal(res.status, 202, res.text);
  let job: any;
  const deadline = Date.now() + 15_000;
  do {
    await new Promise((r) => setTimeout(r, 50));
    job = (await a.json('GET', res.headers.get('location')!)).body;
  } while (job.status !== 'done' && Date.now() < deadline);
  assert.equal(job.status, 'done');
  assert.deepEqual(job.results.map((r: any) => r.status), [201, 400, 201]);
  assert.ok('quantity' in job.results[1].detail);
  assert.equal((await a.json('GET', '/v1/orders')).body.length, 3);
});

test('a bulk job of maxBulkItems: multi-row inserts, per-item errors at their indexes, parents checked per item', { skip }, async () => {
  const items: unknown[] = Array.from({ length: 1000 }, (_, i) => ({ name: `PG bulk ${String(i).padStart(4, '0')}`, city: 'Pgbulk', founded: 1000 + i }));
  const bad = [0, 255, 256, 499, 500, 999];
  for (const i of bad) items[i] = { name: `PG bad ${i}`, founded: 'x' };
  const res = await a.json('POST', '/v1/zoos', items);
  assert.equal(res.status, 202, res.text);
  const wait = async (location: string) => {
    let job: any;
    const deadline = Date.now() + 30_000;
    do {
      await new Promise((r) => setTimeout(r, 50));
      job = (await a.json('GET', location)).body;
    } while (job.status !== 'done' && Date.now() < deadline);
    assert.equal(job.status, 'done');
    return job;
  };
  const job = await wait(res.headers.get('location')!);
  assert.deepEqual(job.results.map((r: any) => r.index), items.map((_, i) => i));
  assert.deepEqual(job.results.filter((r: any) => r.status !== 201).map((r: any) => r.index), bad);
  for (const i of bad) assert.ok('founded' in job.results[i].detail);
  const list = await a.json('GET', '/v1/zoos?city=Pgbulk&sortby=founded&limit=100&offset=900');
  assert.equal(list.headers.get('x-total-count'), String(1000 - bad.length));
  assert.equal(list.body.at(-1).name, 'PG bulk 0998');
  assert.equal(list.body.at(-1).founded, 1998);

  const zoo = (await a.json('POST', '/v1/zoos', { name: 'PG parent' })).body;
  const theirs = (await b.json('POST', '/v1/zoos', { name: 'PG not yours' })).body;
  const kids = await a.json('POST', '/v1/animals', [
    { name: 'k0', species: 's', zoo_id: zoo.id },
    { name: 'k1', species: 's', zoo_id: theirs.id },
    { name: 'k2', species: 's', zoo_id: randomUUID() },
    { name: 'k3', species: 's', zoo_id: zoo.id },
  ]);
  assert.equal(kids.status, 202, kids.text);
  assert.deepEqual((await wait(kids.headers.get('location')!)).results.map((r: any) => r.status), [201, 403, 404, 201]);
  assert.deepEqual((await a.json('GET', `/v1/zoos/${zoo.id}/animals?sortby=name`)).body.map((x: any) => x.name), ['k0', 'k3']);
});

test('maintenance mode through the database: 503 + Retry-After, /health reports it', { skip }, async () => {
  assert.equal(server.cli(['maintenance', 'on']).status, 0);
  try {
    let res;
    const deadline = Date.now() + 3000;
    do {
      await new Promise((r) => setTimeout(r, 100));
      res = await a.json('GET', '/v1/zoos');
    } while (res.status !== 503 && Date.now() < deadline);
    assertApiError(res, 503);
    assert.ok(res.headers.get('retry-after'));
    const health = await server.json('GET', '/health');
    assert.equal(health.status, 200);
    assert.equal(health.body.maintenance, true);
  } finally {
    assert.equal(server.cli(['maintenance', 'off']).status, 0);
  }
  const deadline = Date.now() + 3000;
  let status = 0;
  while (Date.now() < deadline && (status = (await a.json('GET', '/v1/zoos')).status) !== 200) await new Promise((r) => setTimeout(r, 100));
  assert.equal(status, 200);
});

test('PostgreSQL drops the server’s connections: the process stays up and the next requests are served', { skip }, async () => {
  assert.equal((await a.json('GET', '/v1/zoos')).status, 200, 'the pool has open connections now');
  const admin = new pg.Client({ connectionString: database!.url });
  await admin.connect();
  const killed = await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
  await admin.end();
  assert.ok(killed.rowCount! > 0, 'the server had connections to terminate');
  // The dropped idle connections must not crash the process; the pool reconnects on demand.
  let status = 0;
  for (let i = 0; i < 20 && status !== 200; i++) {
    status = (await a.json('GET', '/v1/zoos')).status;
    if (status !== 200) await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(status, 200);
  assert.equal(server.child.exitCode, null, 'still the same process');
  assert.equal((await server.fetch('/health')).status, 200);
});
