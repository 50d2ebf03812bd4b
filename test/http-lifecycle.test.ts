// The process around the API: maintenance mode (503 + Retry-After, /health stays up), SIGTERM
// exits 0 after draining, and the self-signed certificate made on first start is reused.
// Spawned server (test/helpers/server.ts), not in process: signals, draining, and the certificate made on first start.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:tls';
import path from 'node:path';
import { startServer, tempDir, testConfig, writeConfig } from './helpers/server.js';
import { apiClient, assertApiError, requestToken } from './helpers/tokens.js';
import { until } from './helpers/wait.js';

describe('maintenance mode', () => {
  test('`gatehouse maintenance on`: 503 + Retry-After within a second, /health stays 200 and reports it; `off` restores', async () => {
    const server = await startServer();
    try {
      const a = await apiClient(server, 'maint-a');
      const zoo = (await a.json('POST', '/v1/zoos', { name: 'Open' })).body;

      const on = server.cli(['maintenance', 'on']);
      assert.equal(on.status, 0, on.stderr);
      assert.equal(JSON.parse(on.stdout).maintenance, true);
      const switchedAt = Date.now();
      const first = await until('503', async () => {
        const r = await a.json('GET', `/v1/zoos/${zoo.id}`);
        return r.status === 503 ? r : undefined;
      });
      assert.ok(Date.now() - switchedAt < 2000, 'within about a second');
      assertApiError(first, 503);
      assert.match(first.headers.get('retry-after')!, /^\d+$/);
      assert.ok(Number(first.headers.get('retry-after')) > 0);

      // Every API path answers 503 — reads, writes, lists, unknown routes, the index, the token endpoint.
      for (const [method, url, body] of [
        ['GET', '/v1/zoos', undefined],
        ['POST', '/v1/zoos', { name: 'Closed' }],
        ['PATCH', `/v1/zoos/${zoo.id}`, { name: 'Closed' }],
        ['DELETE', `/v1/zoos/${zoo.id}`, undefined],
        ['GET', '/v1', undefined],
        ['GET', '/', undefined],
      ] as const) {
        const r = await a.json(method, url, body);
        assertApiError(r, 503);
        assert.ok(r.headers.get('retry-after'), `${method} ${url} has Retry-After`);
      }
      const token = await requestToken(server, 'maint-a');
      assert.equal(token.status, 503);

      const health = await server.json('GET', '/health');
      assert.equal(health.status, 200);
      assert.equal(health.body.maintenance, true);
      assert.equal(health.body.status, 'maintenance');
      assert.match(health.body.maintenance_since, /^\d{4}-\d{2}-\d{2}T/);

      const status = server.cli(['maintenance', 'status']);
      assert.equal(JSON.parse(status.stdout).maintenance, true);

      const off = server.cli(['maintenance', 'off']);
      assert.equal(off.status, 0, off.stderr);
      await until('200 again', async () => ((await a.json('GET', `/v1/zoos/${zoo.id}`)).status === 200 ? true : undefined));
      const back = await a.json('GET', `/v1/zoos/${zoo.id}`);
      assert.deepEqual(back.body, zoo, 'nothing changed while in maintenance');
      const healthAfter = await server.json('GET', '/health');
      assert.equal(healthAfter.body.maintenance, false);
      assert.equal(healthAfter.body.status, 'ok');
    } finally {
      server.cli(['maintenance', 'off']);
      await server.cleanup();
    }
  });
});

describe('process lifecycle', () => {
  test('SIGTERM drains an in-flight request, refuses new connections meanwhile, and exits 0', async () => {
    const server = await startServer();
    try {
      const a = await apiClient(server, 'term-a');
      // A request whose body is still arriving when SIGTERM comes is finished, not cut off.
      const url = new URL(server.url);
      const body = JSON.stringify({ name: 'Last one' });
      let response = '';
      const socket = connect({ host: url.hostname, port: Number(url.port), ca: server.ca, servername: 'localhost' });
      await new Promise<void>((resolve, reject) => {
        socket.once('secureConnect', () => resolve());
        socket.once('error', reject);
      });
      socket.on('data', (d) => (response += d));
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.write(
        `POST /v1/zoos HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${a.token}\r\nContent-Type: application/json\r\n` +
          `Accept: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
      );
      await new Promise((r) => setTimeout(r, 200));
      const exited = server.stop('SIGTERM');
      await new Promise((r) => setTimeout(r, 300));
      // While it drains, new connections are refused.
      const refused = await new Promise<string>((resolve) => {
        const late = connect({ host: url.hostname, port: Number(url.port), ca: server.ca, servername: 'localhost' });
        late.once('secureConnect', () => (late.destroy(), resolve('connected')));
        late.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
      });
      assert.equal(refused, 'ECONNREFUSED');
      socket.write(body.slice(5));
      await Promise.race([closed, until('the response', async () => (response.includes('Last one') ? true : undefined), 5000)]);
      socket.destroy();
      assert.match(response, /^HTTP\/1\.1 201 /, `in-flight request answered: ${response.slice(0, 200)}`);
      assert.match(response, /"name":"Last one"/);
      assert.equal(await exited, 0);
    } finally {
      await server.cleanup();
    }
  });

  test('SIGTERM under load: every write answered is stored, nothing stored went unanswered, only connection errors, exit 0 within the drain timeout', async () => {
    const dataDir = tempDir();
    const server = await startServer({ dataDir });
    const restarted: { cleanup(): Promise<void> }[] = [];
    try {
      const a = await apiClient(server, 'term-load', 'zoos:read zoos:write');
      const acknowledged = new Set<string>();
      const otherStatuses: string[] = [];
      const errors = new Map<string, number>();
      let stop = false;
      const worker = async (n: number) => {
        for (let i = 0; !stop; i++) {
          const name = `w${n}-${i}`;
          try {
            const res = await a.json('POST', '/v1/zoos', { name, city: 'Drain' });
            if (res.status === 201) acknowledged.add(name);
            else otherStatuses.push(`${res.status} ${res.text.slice(0, 120)}`);
          } catch (e) {
            const err = e as Error & { cause?: { code?: string } };
            const code = err.cause?.code ?? err.message;
            errors.set(code, (errors.get(code) ?? 0) + 1);
            await new Promise((r) => setTimeout(r, 20));
          }
        }
      };
      const workers = Array.from({ length: 16 }, (_, n) => worker(n));
      await until('some writes', async () => (acknowledged.size >= 100 ? true : undefined), 20_000);
      // The signal alone (server.stop would also close the test's own connections).
      const exited = new Promise<number | null>((resolve) => server.child.once('exit', (c) => resolve(c)));
      const signalledAt = Date.now();
      server.child.kill('SIGTERM');
      const code = await exited;
      const drained = Date.now() - signalledAt;
      await new Promise((r) => setTimeout(r, 200));
      stop = true;
      await Promise.all(workers);
      assert.equal(code, 0, server.output().slice(-1500));
      assert.ok(drained < 30_000, `exited ${drained} ms after SIGTERM`);
      assert.deepEqual(otherStatuses, []);
      for (const k of errors.keys()) assert.match(k, /ECONNREFUSED|ECONNRESET|UND_ERR_SOCKET|other side closed|EPIPE|socket/i, `an error other than a closed connection: ${k}`);
      assert.doesNotMatch(server.output(), /unexpected failure/);

      // Restarted on the same data: exactly the acknowledged writes are there.
      const again = await startServer({ dataDir, configFile: server.configFile });
      restarted.push(again);
      const reader = await apiClient(again, 'term-load', 'zoos:read zoos:write');
      const stored = new Set<string>();
      let target: string | null = '/v1/zoos?city=Drain&limit=100';
      while (target) {
        const page = await reader.json('GET', target);
        assert.equal(page.status, 200, page.text);
        for (const z of page.body) stored.add(z.name);
        const next = /<([^>]+)>;\s*rel="next"/.exec(page.headers.get('link') ?? '');
        target = next ? next[1] : null;
      }
      const lost = [...acknowledged].filter((n) => !stored.has(n));
      const unanswered = [...stored].filter((n) => !acknowledged.has(n));
      assert.deepEqual(lost, [], 'acknowledged writes lost');
      assert.deepEqual(unanswered, [], 'writes stored whose answer never arrived (cut off by the shutdown)');
      assert.ok(acknowledged.size >= 100);
    } finally {
      for (const r of restarted) await r.cleanup();
      await server.cleanup();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('the certificate created on first start is reused on the second start; data persists', async () => {
    const dataDir = tempDir();
    try {
      const configFile = writeConfig(dataDir, testConfig());
      const first = await startServer({ dataDir, configFile });
      assert.match(first.output(), /certificate\s+\S+cert\.pem \(self-signed, created now\)/);
      const a = await apiClient(first, 'restart-a');
      const zoo = (await a.json('POST', '/v1/zoos', { name: 'Persistent' })).body;
      const cert1 = readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8');
      const key1 = readFileSync(path.join(dataDir, 'tls', 'key.pem'), 'utf8');
      assert.equal(await first.stop(), 0);

      const second = await startServer({ dataDir, configFile });
      try {
        assert.doesNotMatch(second.output(), /created now/);
        assert.equal(readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8'), cert1);
        assert.equal(readFileSync(path.join(dataDir, 'tls', 'key.pem'), 'utf8'), key1);
        // A client that trusts the first certificate talks to the second process.
        const again = await second.fetch('/health', { headers: { accept: 'application/json' } });
        assert.equal(again.status, 200);
        const a2 = await apiClient(second, 'restart-b');
        assert.equal((await a2.json('GET', `/v1/zoos/${zoo.id}`)).status, 403, 'the record is still there (owned by restart-a)');
        assert.equal(await second.stop(), 0);
      } finally {
        await second.cleanup();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
