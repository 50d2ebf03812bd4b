// What a client sees when something fails inside gatehouse (not the client's fault): a JSON 500
// with a request id, nothing of the cause; the cause in the log under that id; the process goes on.
// And overload: 503 + Retry-After while the event loop lags, /health still answering.
// Spawned server (test/helpers/server.ts), not in process: overload (event-loop lag) and the process going on after a failure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startServer } from './helpers/server.js';
import { ALL_SCOPES, apiClient, asBearer, assertApiError, registerClient, requestToken } from './helpers/tokens.js';
import { sleep } from './helpers/oauth.js';

test('an unexpected failure is a JSON 500 naming only a request id; the log has the cause; the server keeps serving', async () => {
  const server = await startServer();
  try {
    const api = await apiClient(server, 'failures');
    assert.equal((await api.json('POST', '/v1/zoos', { name: 'Doomed', city: 'Nowhere', founded: 1 })).status, 201);
    assert.equal((await api.json('POST', '/v1/orders', { item: 'x', quantity: 1 })).status, 201);

    // Break the database behind the server's back: its zoos table disappears.
    const db = new Database(path.join(server.dataDir, 'gatehouse.db'));
    db.exec('drop table r_zoos');
    db.close();

    for (const target of ['/v1/zoos', '/v1/zoos?city=Nowhere']) {
      const res = await api.json('GET', target);
      assertApiError(res, 500, ['request_id']);
      assert.equal(res.body.error, 'Internal server error');
      assert.deepEqual(Object.keys(res.body.detail), ['request_id']);
      assert.doesNotMatch(res.text, /sqlite|r_zoos|no such table|stack/i, 'nothing of the cause reaches the client');
      assert.equal(res.headers.get('x-powered-by'), null);

      // The operator finds the cause in the log under the id the client was given.
      const id = res.body.detail.request_id as string;
      let line: any;
      for (let i = 0; i < 50 && !line; i++) {
        line = server
          .output()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l))
          .find((l) => l.reqId === id && l.level === 50);
        if (!line) await sleep(100);
      }
      assert.ok(line, `an error line for request ${id} in the log`);
      assert.match(line.err.message, /no such table: r_zoos/);
    }

    // Everything else still works, and the process is still the same one.
    assert.equal((await api.json('GET', '/v1/orders')).status, 200);
    assert.equal((await server.fetch('/health')).status, 200);
    assert.equal(server.child.exitCode, null);
  } finally {
    await server.stop();
    await server.cleanup();
  }
});

test('overload: while the event loop lags, or requests wait for their turn, past the limit: 503 + Retry-After; /health answers; it recovers', async () => {
  // A limit of 1 ms: bulk jobs and 30 readers at once keep the event loop busy past it (its delay
  // is sampled each second) and make requests wait for their turn longer than that (a turn runs
  // 20 ms of requests). One bulk job's chunks alone, one per turn, no longer lag a fast machine's
  // event loop enough. The quota is lifted so that polling is never a 429.
  const server = await startServer({ env: { GATEHOUSE_MAX_EVENT_LOOP_DELAY: '1' }, config: { api: { rateLimit: { max: 1_000_000 } } } });
  try {
    // With a 1 ms limit a busy machine can report overload before the test starts: the token is
    // fetched again until the server answers it.
    registerClient(server, 'overload');
    let token: { status: number; body: { access_token?: string } } = { status: 0, body: {} };
    for (const until = Date.now() + 30_000; token.status !== 200 && Date.now() < until; await sleep(200)) token = await requestToken(server, 'overload', ALL_SCOPES);
    assert.equal(token.status, 200, JSON.stringify(token.body));
    const api = asBearer(server, token.body.access_token!);
    const items = Array.from({ length: 1000 }, (_, i) => ({ name: `Zoo ${i}`, city: `City ${i % 50}`, founded: 1900 + (i % 100), motto: 'x'.repeat(200) }));
    let overloaded: Awaited<ReturnType<typeof api.json>> | undefined;
    const deadline = Date.now() + 30_000;
    while (!overloaded && Date.now() < deadline) {
      // Three bulk jobs at once keep the loop busy for well over a sampling second.
      for (let j = 0; j < 3 && !overloaded; j++) {
        const job = await api.json('POST', '/v1/zoos', items);
        if (job.status === 503) overloaded = job;
        else assert.equal(job.status, 202, job.text);
      }
      const until = Math.min(deadline, Date.now() + 5_000);
      await Promise.all(
        Array.from({ length: 30 }, async () => {
          while (!overloaded && Date.now() < until) {
            const res = await api.json('GET', '/v1/zoos?limit=100');
            if (res.status === 503) overloaded ??= res;
            else assert.equal(res.status, 200, res.text);
          }
        }),
      );
    }
    assert.ok(overloaded, 'the server reported overload within 30 s');
    assertApiError(overloaded, 503, ['service']);
    assert.match(overloaded.body.detail.service, /overloaded/);
    assert.ok(Number(overloaded.headers.get('retry-after')) > 0, 'Retry-After');
    const health = await server.fetch('/health');
    assert.equal(health.status, 200, '/health stays up under overload');

    // Once the readers stop and the jobs are done, the lag goes and requests are served again.
    const recovered = Date.now() + 60_000;
    let last = 0;
    while (Date.now() < recovered) {
      last = (await api.json('GET', '/v1/zoos?limit=1')).status;
      if (last === 200) break;
      await sleep(500);
    }
    assert.equal(last, 200, 'served again once the load is gone');
  } finally {
    await server.stop();
    await server.cleanup();
  }
});
