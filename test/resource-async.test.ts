// 303 for a repeated Idempotency-Key, 202 + /v1/jobs/{id} for a POSTed array, and "nothing
// written half": failed requests and failed bulk items leave the records as they were.
// Spawned server (test/helpers/server.ts), not in process: jobs and idempotency keys across a restart on the same data.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startServer, type TestServer } from './helpers/server.js';
import { apiClient, assertApiError, type ApiClient } from './helpers/tokens.js';

let server: TestServer;
let a: ApiClient;
let b: ApiClient;

before(async () => {
  server = await startServer({ config: { api: { maxBulkItems: 300 } } });
  a = await apiClient(server, 'async-a');
  b = await apiClient(server, 'async-b');
});
after(async () => {
  await server.cleanup();
});

async function count(client: ApiClient, path = '/v1/zoos'): Promise<number> {
  const res = await client.json('GET', `${path}${path.includes('?') ? '&' : '?'}limit=1`);
  assert.equal(res.status, 200, res.text);
  return Number(res.headers.get('x-total-count'));
}

async function waitForJob(client: ApiClient, location: string, timeoutMs = 20_000, intervalMs = 25) {
  const seen: number[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await client.json('GET', location);
    assert.equal(res.status, 200, res.text);
    seen.push(res.body.progress);
    if (res.body.status === 'done') return { job: res.body, progress: seen };
    assert.ok(['queued', 'running'].includes(res.body.status), res.body.status);
    assert.ok(Date.now() < deadline, `job not done after ${timeoutMs} ms: ${res.text}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

describe('Idempotency-Key', () => {
  test('a repeat with the same key and body answers 303 to the first record; nothing is created twice', async () => {
    const key = randomUUID();
    const body = { name: 'Once', city: 'Oslo' };
    const first = await a.json('POST', '/v1/zoos', body, { 'idempotency-key': key });
    assert.equal(first.status, 201, first.text);
    const before = await count(a);
    for (let i = 0; i < 2; i++) {
      const again = await a.json('POST', '/v1/zoos', body, { 'idempotency-key': key });
      assert.equal(again.status, 303, again.text);
      assert.equal(again.headers.get('location'), first.headers.get('location'));
      assert.match(again.headers.get('content-type')!, /^application\/json/);
    }
    assert.equal(await count(a), before);
    const list = await a.json('GET', '/v1/zoos?name=Once');
    assert.equal(list.body.length, 1);
  });

  test('a repeat after the first record was deleted still answers 303 to its URL, which answers 410', async () => {
    const key = randomUUID();
    const body = { name: 'Short-lived', city: 'Turku' };
    const first = await a.json('POST', '/v1/zoos', body, { 'idempotency-key': key });
    assert.equal(first.status, 201);
    assert.equal((await a.json('DELETE', `/v1/zoos/${first.body.id}`)).status, 204);
    const again = await a.json('POST', '/v1/zoos', body, { 'idempotency-key': key });
    assert.equal(again.status, 303);
    assert.equal(again.headers.get('location'), first.headers.get('location'));
    assert.equal(again.body.id, first.body.id);
    assert.equal(again.body.link.self.href, first.headers.get('location'));
    assert.equal((await a.json('GET', `/v1/zoos/${first.body.id}`)).status, 410);
    assert.deepEqual((await a.json('GET', '/v1/zoos?name=Short-lived')).body, [], 'nothing was created again');
  });

  test('the same key with another body is 400 naming the header; nothing is created', async () => {
    const key = randomUUID();
    assert.equal((await a.json('POST', '/v1/zoos', { name: 'Key one' }, { 'idempotency-key': key })).status, 201);
    const before = await count(a);
    const res = await a.json('POST', '/v1/zoos', { name: 'Key two' }, { 'idempotency-key': key });
    assertApiError(res, 400, ['idempotency-key']);
    assert.equal(await count(a), before);
    assert.deepEqual((await a.json('GET', `/v1/zoos?name=${encodeURIComponent('Key two')}`)).body, []);
  });

  test('keys are per subject: another client with the same key creates its own record', async () => {
    const key = randomUUID();
    const one = await a.json('POST', '/v1/zoos', { name: 'Shared key' }, { 'idempotency-key': key });
    const two = await b.json('POST', '/v1/zoos', { name: 'Shared key' }, { 'idempotency-key': key });
    assert.equal(one.status, 201);
    assert.equal(two.status, 201);
    assert.notEqual(one.body.id, two.body.id);
  });

  test('concurrent requests with the same key create one record', async () => {
    const key = randomUUID();
    const body = { name: 'Raced' };
    const results = await Promise.all(Array.from({ length: 6 }, () => a.json('POST', '/v1/zoos', body, { 'idempotency-key': key })));
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [201, 303, 303, 303, 303, 303], JSON.stringify(results.map((r) => r.text)));
    assert.equal(new Set(results.map((r) => r.headers.get('location'))).size, 1);
    assert.equal((await a.json('GET', '/v1/zoos?name=Raced')).body.length, 1);
  });

  test('a failed create does not use up the key', async () => {
    const key = randomUUID();
    assertApiError(await a.json('POST', '/v1/zoos', { city: 'no name' }, { 'idempotency-key': key }), 400);
    const ok = await a.json('POST', '/v1/zoos', { name: 'Second try' }, { 'idempotency-key': key });
    assert.equal(ok.status, 201, ok.text);
  });

  test('a malformed key is 400', async () => {
    assertApiError(await a.json('POST', '/v1/zoos', { name: 'x' }, { 'idempotency-key': 'k'.repeat(256) }), 400, ['idempotency-key']);
  });
});

describe('bulk create: 202 and /v1/jobs/{id}', () => {
  test('a POSTed array becomes a job; valid items are created, invalid ones reported per item', async () => {
    const before = await count(a);
    const items: unknown[] = Array.from({ length: 120 }, (_, i) => ({ name: `Bulk ${i}`, city: 'Bulkville', founded: 2000 + (i % 5) }));
    items[5] = { city: 'no name' };
    items[60] = { name: 'Has id', id: randomUUID() };
    items[119] = { name: 'Bad type', founded: 'soon' };
    items[77] = 'not an object';
    const res = await a.json('POST', '/v1/zoos', items);
    assert.equal(res.status, 202, res.text);
    const location = res.headers.get('location')!;
    assert.match(location, new RegExp(`^${server.url.replace(/\./g, '\\.')}/v1/jobs/[0-9a-f-]{36}$`));
    assert.equal(res.body.link.self.href, location);
    assert.equal(res.body.total, 120);
    assert.ok(['queued', 'running'].includes(res.body.status));

    const { job, progress } = await waitForJob(a, location);
    assert.equal(job.total, 120);
    assert.equal(job.processed, 120);
    assert.equal(job.progress, 1);
    assert.equal(job.succeeded, 116);
    assert.equal(job.failed, 4);
    for (const p of progress) assert.ok(p >= 0 && p <= 1);
    assert.deepEqual(progress, [...progress].sort((x, y) => x - y), 'progress never goes back');
    assert.equal(job.results.length, 120);
    const byIndex = new Map(job.results.map((r: any) => [r.index, r]));
    const bad = (i: number) => byIndex.get(i) as any;
    assert.equal(bad(5).status, 400);
    assert.ok('name' in bad(5).detail);
    assert.ok('id' in bad(60).detail);
    assert.ok('founded' in bad(119).detail);
    assert.equal(bad(77).status, 400);
    const created = job.results.filter((r: any) => r.status === 201);
    assert.equal(created.length, 116);
    assert.equal(await count(a), before + 116);
    assert.equal(await count(a, '/v1/zoos?city=Bulkville'), 116);
    // Each result links to its record, which holds the submitted item.
    for (const r of created.slice(0, 5).concat(created.slice(-2))) {
      const rec = await a.json('GET', r.link.self.href);
      assert.equal(rec.status, 200);
      assert.equal(rec.body.id, r.id);
      assert.equal(rec.body.name, `Bulk ${r.index}`);
    }
    assert.deepEqual((await a.json('GET', `/v1/zoos?name=${encodeURIComponent('Has id')}`)).body, []);
  });

  test('a bulk create of children under a zoo', async () => {
    const zoo = (await a.json('POST', '/v1/zoos', { name: 'Ark' })).body;
    const res = await a.json('POST', `/v1/zoos/${zoo.id}/animals`, [
      { name: 'Noah', species: 'human' },
      { name: 'Wrong', species: 'x', zoo_id: randomUUID() },
      { name: 'Eve', species: 'dove' },
    ]);
    assert.equal(res.status, 202, res.text);
    const { job } = await waitForJob(a, res.headers.get('location')!);
    assert.deepEqual(job.results.map((r: any) => r.status), [201, 400, 201]);
    assert.ok('zoo_id' in job.results[1].detail);
    const animals = await a.json('GET', `/v1/zoos/${zoo.id}/animals`);
    assert.deepEqual(animals.body.map((x: any) => x.name).sort(), ['Eve', 'Noah']);
  });

  test('a bulk create under a missing parent is 404 at once and creates nothing', async () => {
    const before = await count(a, '/v1/animals');
    assertApiError(await a.json('POST', `/v1/zoos/${randomUUID()}/animals`, [{ name: 'x', species: 'y' }]), 404);
    assert.equal(await count(a, '/v1/animals'), before);
  });

  test('an empty array and one over maxBulkItems are 400', async () => {
    assertApiError(await a.json('POST', '/v1/zoos', []), 400);
    assertApiError(await a.json('POST', '/v1/zoos', Array.from({ length: 301 }, (_, i) => ({ name: `x${i}` }))), 400);
  });

  test("another subject cannot read a job; an unknown job is 404", async () => {
    const res = await a.json('POST', '/v1/zoos', [{ name: 'Mine' }]);
    const location = res.headers.get('location')!;
    await waitForJob(a, location);
    assertApiError(await b.json('GET', location), 403);
    assertApiError(await a.json('GET', `/v1/jobs/${randomUUID()}`), 404);
    assertApiError(await server.json('GET', location), 401);
  });

  test('the job route allows GET only', async () => {
    const res = await a.json('DELETE', `/v1/jobs/${randomUUID()}`);
    assertApiError(res, 405);
    assert.match(res.headers.get('allow')!, /GET/);
  });
});

describe('nothing written half', () => {
  test('a failed validation leaves every collection as it was', async () => {
    const zoosBefore = await count(a);
    const animalsBefore = await count(a, '/v1/animals');
    const zoo = (await a.json('POST', '/v1/zoos', { name: 'Stable' })).body;
    assertApiError(await a.json('POST', `/v1/zoos/${zoo.id}/animals`, { name: 'No species' }), 400);
    assertApiError(await a.json('POST', '/v1/zoos', { name: 'x', founded: 1.5 }), 400);
    assert.equal(await count(a), zoosBefore + 1);
    assert.equal(await count(a, '/v1/animals'), animalsBefore);
  });

  test('a failed update leaves the record byte for byte, version included', async () => {
    const zoo = (await a.json('POST', '/v1/zoos', { name: 'Frozen', city: 'Bergen' })).body;
    assertApiError(await a.json('PUT', `/v1/zoos/${zoo.id}`, { name: 'Frozen', founded: 'x' }), 400);
    assertApiError(await a.json('PATCH', `/v1/zoos/${zoo.id}`, { city: 7 }), 400);
    assertApiError(await a.json('PATCH', `/v1/zoos/${zoo.id}`, { created_at: '2000-01-01T00:00:00Z' }), 400);
    const now = await a.json('GET', `/v1/zoos/${zoo.id}`);
    assert.deepEqual(now.body, zoo);
    assert.equal(now.headers.get('etag'), '"1"');
  });

  test('a failed delete (412) removes neither the record nor its children', async () => {
    const zoo = (await a.json('POST', '/v1/zoos', { name: 'Kept' })).body;
    const kid = (await a.json('POST', `/v1/zoos/${zoo.id}/animals`, { name: 'Kid', species: 'goat' })).body;
    assertApiError(await a.json('DELETE', `/v1/zoos/${zoo.id}`, undefined, { 'if-match': '"9"' }), 412);
    assert.equal((await a.json('GET', `/v1/zoos/${zoo.id}`)).status, 200);
    assert.deepEqual((await a.json('GET', `/v1/animals/${kid.id}`)).body, kid);
  });

  test('a request cut off mid-body creates nothing', async () => {
    const before = await count(a);
    const { connect } = await import('node:tls');
    const url = new URL(server.url);
    await new Promise<void>((resolve, reject) => {
      const socket = connect({ host: url.hostname, port: Number(url.port), ca: server.ca, servername: 'localhost' }, () => {
        const body = JSON.stringify({ name: 'Cut off', city: 'Half' });
        socket.write(
          `POST /v1/zoos HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${a.token}\r\nContent-Type: application/json\r\n` +
            `Content-Length: ${body.length + 50}\r\n\r\n${body.slice(0, 10)}`,
        );
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 200);
      });
      socket.on('error', reject);
    });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(await count(a), before);
    assert.deepEqual((await a.json('GET', `/v1/zoos?city=Half`)).body, []);
  });
});

describe('a bulk job survives its process being killed', () => {
  test('SIGKILL mid-job, restart on the same data: the job finishes, every item created exactly once', { timeout: 120_000 }, async () => {
    const { rmSync } = await import('node:fs');
    const { tempDir, testConfig, writeConfig } = await import('./helpers/server.js');
    const dataDir = tempDir();
    try {
      const configFile = writeConfig(dataDir, testConfig());
      const first = await startServer({ dataDir, configFile });
      const k = await apiClient(first, 'crash-a');
      const items = Array.from({ length: 1000 }, (_, i) => ({ name: `Crash ${String(i).padStart(4, '0')}`, city: 'Crashville' }));
      const res = await k.json('POST', '/v1/zoos', items);
      assert.equal(res.status, 202, res.text);
      const jobPath = new URL(res.headers.get('location')!).pathname;
      await first.stop('SIGKILL');

      const second = await startServer({ dataDir, configFile });
      try {
        const k2 = await apiClient(second, 'crash-a');
        // The dead process's lease (30 s) runs out, then the new process carries the job on.
        const { job } = await waitForJob(k2, jobPath, 60_000, 250);
        assert.equal(job.processed, 1000);
        assert.equal(job.succeeded, 1000);
        assert.equal(job.results.length, 1000);
        assert.deepEqual(job.results.map((r: any) => r.index), items.map((_, i) => i));
        const names: string[] = [];
        for (let offset = 0; offset < 1000; offset += 100) {
          const page = await k2.json('GET', `/v1/zoos?city=Crashville&sortby=name&limit=100&offset=${offset}`);
          assert.equal(page.headers.get('x-total-count'), '1000', 'no item created twice, none lost');
          names.push(...page.body.map((z: any) => z.name));
        }
        assert.deepEqual(names, items.map((i) => i.name));
        assert.deepEqual(new Set(job.results.map((r: any) => r.id)).size, 1000);
      } finally {
        await second.cleanup();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('bulk create: chunks, parents and results', () => {
  test('a job of maxBulkItems reports exactly its invalid items, at their indexes, across chunk boundaries', async () => {
    const max = 300; // maxBulkItems in this file's config
    const before = await count(a, '/v1/zoos?city=Edgeville');
    const items: unknown[] = Array.from({ length: max }, (_, i) => ({ name: `Edge ${String(i).padStart(3, '0')}`, city: 'Edgeville', founded: 1700 + i }));
    // Which field each invalid item is refused for (the first and last items and both sides of a chunk boundary included).
    const bad = new Map<number, string>([
      [0, 'name'],
      [1, 'founded'],
      [100, 'body'],
      [249, 'name'],
      [250, 'id'],
      [251, 'founded'],
      [298, 'owner'],
      [299, 'name'],
    ]);
    for (const [i, field] of bad) {
      if (field === 'name') items[i] = { city: 'Edgeville' };
      else if (field === 'founded') items[i] = { name: `Edge bad ${i}`, city: 'Edgeville', founded: 'soon' };
      else if (field === 'body') items[i] = i;
      else items[i] = { name: `Edge bad ${i}`, city: 'Edgeville', [field]: 'x' };
    }
    const res = await a.json('POST', '/v1/zoos', items);
    assert.equal(res.status, 202, res.text);
    const { job, progress } = await waitForJob(a, res.headers.get('location')!, 20_000, 5);
    assert.deepEqual(progress, [...progress].sort((x, y) => x - y), 'progress never goes back');
    assert.equal(job.total, max);
    assert.equal(job.processed, max);
    assert.equal(job.succeeded, max - bad.size);
    assert.equal(job.failed, bad.size);
    assert.deepEqual(job.results.map((r: any) => r.index), items.map((_, i) => i), 'one result per item, in order');
    for (const r of job.results) {
      const field = bad.get(r.index);
      if (field === undefined) {
        assert.equal(r.status, 201, JSON.stringify(r));
        assert.match(r.id, /^[0-9a-f-]{36}$/);
        continue;
      }
      assert.equal(r.status, 400, JSON.stringify(r));
      assert.equal(r.id, undefined);
      assert.ok(field in r.detail, `item ${r.index}: ${JSON.stringify(r.detail)} names ${field}`);
      // The same item sent alone is refused with the same error.
      const alone = await a.json('POST', '/v1/zoos', items[r.index]);
      assert.equal(alone.status, 400);
      assert.deepEqual({ error: r.error, detail: r.detail }, { error: alone.body.error, detail: alone.body.detail });
    }
    const ids = job.results.filter((r: any) => r.status === 201).map((r: any) => r.id);
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(await count(a, '/v1/zoos?city=Edgeville'), before + max - bad.size);
    for (const i of [2, 248, 252, 297]) {
      const rec = await a.json('GET', `/v1/zoos/${job.results[i].id}`);
      assert.equal(rec.status, 200);
      assert.deepEqual([rec.body.name, rec.body.city, rec.body.founded], [`Edge ${String(i).padStart(3, '0')}`, 'Edgeville', 1700 + i]);
    }
  });

  test('items naming their parents: each parent checked, a refused parent reported per item as a single create would', async () => {
    const zoo1 = (await a.json('POST', '/v1/zoos', { name: 'Parent one' })).body;
    const zoo2 = (await a.json('POST', '/v1/zoos', { name: 'Parent two' })).body;
    const theirs = (await b.json('POST', '/v1/zoos', { name: 'Not yours' })).body;
    const gone = (await a.json('POST', '/v1/zoos', { name: 'Gone' })).body;
    assert.equal((await a.json('DELETE', `/v1/zoos/${gone.id}`)).status, 204);
    const missing = randomUUID();
    const item = (i: number, zoo_id?: string, extra: Record<string, unknown> = {}) => ({ name: `Kid ${i}`, species: 'owl', ...(zoo_id ? { zoo_id } : {}), ...extra });
    const items = [
      item(0, zoo1.id),
      item(1, zoo2.id),
      item(2, theirs.id),
      item(3, gone.id),
      item(4, missing),
      item(5, zoo1.id),
      item(6),
      item(7, theirs.id),
      item(8, zoo1.id, { species: 7 }),
      item(9, missing),
      item(10, zoo2.id),
    ];
    const res = await a.json('POST', '/v1/animals', items);
    assert.equal(res.status, 202, res.text);
    const { job } = await waitForJob(a, res.headers.get('location')!);
    assert.deepEqual(job.results.map((r: any) => r.status), [201, 201, 403, 410, 404, 201, 400, 403, 400, 404, 201]);
    for (const r of job.results) {
      if (r.status === 201) continue;
      const alone = await a.json('POST', '/v1/animals', items[r.index]);
      assert.equal(alone.status, r.status, `item ${r.index}`);
      assert.deepEqual({ error: r.error, detail: r.detail }, { error: alone.body.error, detail: alone.body.detail }, `item ${r.index}`);
    }
    const kids = async (zoo: string) => (await a.json('GET', `/v1/zoos/${zoo}/animals?sortby=name`)).body.map((x: any) => x.name);
    assert.deepEqual(await kids(zoo1.id), ['Kid 0', 'Kid 5']);
    assert.deepEqual(await kids(zoo2.id), ['Kid 1', 'Kid 10']);
    assert.deepEqual((await b.json('GET', `/v1/zoos/${theirs.id}/animals`)).body, []);
  });
});

describe('bulk jobs killed part-way', () => {
  test('SIGKILL while jobs are part-way: each carries on after its last committed chunk, every record exactly once', { timeout: 120_000 }, async () => {
    const { rmSync } = await import('node:fs');
    const { tempDir, testConfig, writeConfig } = await import('./helpers/server.js');
    const dataDir = tempDir();
    try {
      const configFile = writeConfig(dataDir, testConfig());
      const first = await startServer({ dataDir, configFile });
      const k = await apiClient(first, 'part-a');
      const JOBS = 10;
      // Ten jobs submitted at once: their chunks take turns, so each is part-way for most of the time.
      const jobs = await Promise.all(
        Array.from({ length: JOBS }, async (_, j) => {
          const names = Array.from({ length: 1000 }, (_, i) => `Part ${j}-${String(i).padStart(4, '0')}`);
          const res = await k.json('POST', '/v1/zoos', names.map((name) => ({ name, city: 'Partville' })));
          assert.equal(res.status, 202, res.text);
          return { path: new URL(res.headers.get('location')!).pathname, names };
        }),
      );
      // Kill the process once some job is seen with some of its chunks committed and some not.
      let partway = false;
      for (let tries = 0; !partway && tries < 2000; tries++) {
        const states = await Promise.all(jobs.map(async (j) => (await k.json('GET', j.path)).body));
        partway = states.some((s) => s.processed > 0 && s.processed < s.total);
        if (states.every((s) => s.status === 'done')) break;
      }
      await first.stop('SIGKILL');
      assert.ok(partway, 'a job was seen part-way before the kill');

      const second = await startServer({ dataDir, configFile });
      try {
        const k2 = await apiClient(second, 'part-a');
        const resultIds: string[] = [];
        for (const j of jobs) {
          const { job } = await waitForJob(k2, j.path, 60_000, 250);
          assert.equal(job.processed, 1000);
          assert.equal(job.succeeded, 1000);
          assert.deepEqual(job.results.map((r: any) => r.index), j.names.map((_, i) => i));
          resultIds.push(...job.results.map((r: any) => r.id));
        }
        assert.equal(new Set(resultIds).size, JOBS * 1000);
        const listed = new Map<string, string>();
        for (let offset = 0; offset < JOBS * 1000; offset += 100) {
          const page = await k2.json('GET', `/v1/zoos?city=Partville&sortby=name&limit=100&offset=${offset}`);
          assert.equal(page.headers.get('x-total-count'), String(JOBS * 1000), 'no item created twice, none lost');
          for (const z of page.body) listed.set(z.id, z.name);
        }
        assert.deepEqual([...listed.values()], jobs.flatMap((j) => j.names));
        assert.deepEqual([...listed.keys()].sort(), [...resultIds].sort(), "each result's id is the record created for it");
        const byId = new Map(jobs.flatMap((j, n) => j.names.map((name, i) => [resultIds[n * 1000 + i], name] as const)));
        for (const [id, name] of listed) assert.equal(byId.get(id), name);
      } finally {
        await second.cleanup();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
