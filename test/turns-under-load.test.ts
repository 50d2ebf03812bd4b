// A saturated server keeps accepting connections (src/platform/http/turn-gate.ts). libuv accepts
// one connection per turn of the event loop; without the gate a turn runs every request in
// flight, so while 60 connections keep the server busy with searches that read every record (a
// substring no record has: each is a scan of 5,000 rows and a small answer), new clients wait
// one such turn each for their connection. With it, a turn runs a few milliseconds of
// requests and the next connection is accepted. Nothing is lost either way; /health answers at
// once; requests that wait too long for their turn are 503 "overloaded (queue)".
// Spawned server (test/helpers/server.ts), not in process: a saturated process must keep accepting connections.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import tls from 'node:tls';
import { Agent, request } from 'undici';
import { freePort, runCli, startServer, tempDir, type TestServer } from './helpers/server.js';
import { apiClient } from './helpers/tokens.js';

const CONNECTIONS = 60;
const SCAN = '/v1/zoos?name%5Bcontains%5D=qqq&limit=1';

async function seeded(env: Record<string, string>, args: string[] = []): Promise<{ server: TestServer; token: string }> {
  // The server's own overload limit (the default unless a test sets one): this file is about load.
  const server = await startServer({ env: { GATEHOUSE_MAX_EVENT_LOOP_DELAY: '', ...env }, args, config: { api: { rateLimit: { max: 1_000_000_000 } } } });
  const api = await apiClient(server, 'busy');
  for (let k = 0; k < 5; k++) {
    const job = await api.json('POST', '/v1/zoos', Array.from({ length: 1000 }, (_, i) => ({ name: `Zoo ${k * 1000 + i}`, city: `City ${i % 20}`, founded: 1800 + (i % 200) })));
    assert.equal(job.status, 202, job.text);
    for (const until = Date.now() + 30_000; ; ) {
      const state = await api.json('GET', job.headers.get('location')!);
      if (state.body.status === 'done') break;
      assert.ok(Date.now() < until, 'the bulk job ended');
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { server, token: api.token };
}

/**
 * Keeps `CONNECTIONS` requests in flight until `stop` resolves; counts the answers by status and
 * keeps the first few other bodies and socket errors (`done` never rejects).
 */
function busy(server: TestServer, token: string, target: string, stop: Promise<void>) {
  const agent = new Agent({ connect: { ca: server.ca }, connections: CONNECTIONS });
  const statuses = new Map<number, number>();
  const bodies: string[] = [];
  let stopped = false;
  void stop.then(() => (stopped = true));
  const loops = Array.from({ length: CONNECTIONS }, async () => {
    try {
      while (!stopped) {
        const res = await request(server.url + target, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' }, dispatcher: agent });
        const text = await res.body.text();
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        if (res.statusCode !== 200 && bodies.length < 5) bodies.push(text);
      }
    } catch (e) {
      if (bodies.length < 5) bodies.push(`socket error: ${(e as Error).message}`);
    }
  });
  return { statuses, bodies, done: Promise.all(loops).then(() => agent.close()) };
}

/** Milliseconds until each of `n` new TLS connections, opened at once, has finished its handshake. */
function newConnections(server: TestServer, n: number): Promise<number[]> {
  const { hostname, port } = new URL(server.url);
  const started = performance.now();
  return Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<number>((resolve, reject) => {
          const socket = tls.connect({ host: hostname, port: Number(port), ca: server.ca, servername: 'localhost' }, () => {
            resolve(performance.now() - started);
            socket.destroy();
          });
          socket.once('error', reject);
        }),
    ),
  );
}

async function handshakesUnderLoad(budget: string): Promise<number> {
  const { server, token } = await seeded({ GATEHOUSE_TURN_BUDGET_MS: budget });
  let stop!: () => void;
  const load = busy(server, token, SCAN, new Promise<void>((r) => (stop = r)));
  try {
    // Long enough for every connection to be open and for the gate to have measured a request.
    await new Promise((r) => setTimeout(r, 2500));
    const times = await newConnections(server, 10);
    const health = await server.fetch('/health');
    assert.equal(health.status, 200);
    stop();
    await load.done;
    assert.deepEqual([...load.statuses.keys()], [200], `every request answered 200: ${load.bodies.join(' | ')}`);
    assert.deepEqual(load.bodies, [], 'no socket error');
    return Math.max(...times);
  } finally {
    stop();
    await load.done;
    await server.cleanup();
  }
}

test('new connections are accepted within a few turns while 60 connections keep the server busy; every request is answered', async (t) => {
  const ungated = await handshakesUnderLoad('0');
  const gated = await handshakesUnderLoad('2');
  t.diagnostic(`10 new connections open after ${gated.toFixed(0)} ms with turns of 2 ms, ${ungated.toFixed(0)} ms without`);
  assert.ok(gated < ungated / 3, `10 new connections: all open after ${gated.toFixed(0)} ms with turns of 2 ms, ${ungated.toFixed(0)} ms without`);
});

test('requests that wait for their turn longer than the delay limit are 503 "overloaded (queue)" with Retry-After; /health answers; the waiting show in the metrics', async () => {
  const metricsPort = await freePort();
  const { server, token } = await seeded({ GATEHOUSE_TURN_BUDGET_MS: '2', GATEHOUSE_MAX_EVENT_LOOP_DELAY: '40' }, ['--metrics-port', String(metricsPort)]);
  const waiting = async () => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    return Number(/^gatehouse_requests_waiting (\S+)$/m.exec(text)?.[1]);
  };
  assert.equal(await waiting(), 0, 'nothing waits before the load');
  let stop!: () => void;
  const load = busy(server, token, SCAN, new Promise<void>((r) => (stop = r)));
  try {
    let refused: { status: number; body: any; retryAfter: string | null } | null = null;
    for (const until = Date.now() + 20_000; !refused && Date.now() < until; ) {
      const res = await server.fetch(SCAN, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
      const body = await res.json().catch(() => null);
      if (res.status === 503 && /queue/.test(body?.detail?.service ?? '')) refused = { status: res.status, body, retryAfter: res.headers.get('retry-after') };
      else assert.ok(res.status === 200 || res.status === 503, `status ${res.status}`);
    }
    assert.ok(refused, 'a request waited past 40 ms and was refused');
    assert.equal(refused.body.detail.service, 'overloaded (queue)');
    assert.ok(Number(refused.retryAfter) > 0, 'Retry-After');
    const health = await server.fetch('/health');
    assert.equal(health.status, 200);
    let most = 0;
    for (let i = 0; i < 20; i++) most = Math.max(most, await waiting());
    assert.ok(most > 0, 'requests waiting for a turn are counted');
    stop();
    await load.done;
    assert.equal(await waiting(), 0, 'none once the load is over');
  } finally {
    stop();
    await load.done;
    await server.cleanup();
  }
  const answered = [...load.statuses.keys()].sort();
  assert.ok(answered.every((s) => s === 200 || s === 503), `only 200 and 503: ${answered}`);
  assert.ok(!load.bodies.some((b) => b.startsWith('socket error')), load.bodies.join(' | '));
});

test('a turn budget, delay limit or PostgreSQL pool size that is out of its range stops the server at start with exit 2, before it creates anything; empty means the default', async () => {
  const dir = tempDir();
  const milliseconds = 'must be a number of milliseconds \\(0 or more\\)';
  const connections = 'must be a whole number of connections \\(1-1000\\)';
  try {
    for (const [name, value, problem] of [
      ['GATEHOUSE_TURN_BUDGET_MS', 'abc', milliseconds],
      ['GATEHOUSE_TURN_BUDGET_MS', '-1', milliseconds],
      ['GATEHOUSE_MAX_EVENT_LOOP_DELAY', '1s', milliseconds],
      // Once read as Number(…) by the store: 0 made a pool that never opens a connection.
      ['GATEHOUSE_PG_POOL', '0', connections],
      ['GATEHOUSE_PG_POOL', '2.5', connections],
    ]) {
      const r = runCli(['serve', '--data-dir', dir, '--port', '0'], { env: { [name]: value } });
      assert.equal(r.status, 2, `${name}=${value}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`^gatehouse: invalid config environment: ${name}: ${problem}\\n$`));
    }
    assert.deepEqual(readdirSync(dir), [], 'no database, no certificate');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const server = await startServer({ env: { GATEHOUSE_TURN_BUDGET_MS: '', GATEHOUSE_MAX_EVENT_LOOP_DELAY: '', GATEHOUSE_PG_POOL: '' } });
  try {
    assert.equal((await server.fetch('/health')).status, 200);
  } finally {
    await server.cleanup();
  }
});
