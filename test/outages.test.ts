// Outages (docs/deployment.md "When Redis or the database goes away"): real servers of the test's
// own, stopped and started again under the running instances.
// - Redis away while two instances serve: every request is still answered; quotas are counted per
//   instance, with a log line and /health's `degraded`; a revocation on A is honoured on B within
//   a second through the database; when Redis is back, everything is shared again, no restart.
// - PostgreSQL restarted under load: requests meanwhile get 503 + Retry-After (never a hang, a 500
//   or a crash), the pool recovers by itself within seconds, no acknowledged write is lost.
// - SQLite on a full disk (a small tmpfs: needs root, skipped otherwise): 503, reads still served,
//   no corruption, writes succeed again when space returns.
// Spawned server (test/helpers/server.ts), not in process: PostgreSQL and Redis servers of its own, stopped under the running instances.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statfsSync, unlinkSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createPgDatabase, pgAvailable, startServer, type TestServer } from './helpers/server.js';
import { asBearer, registerClient, requestToken, secretOf } from './helpers/tokens.js';
import { addClient, addUser, basic, post } from './helpers/oauth.js';
import { privatePostgresAvailable, redisServerAvailable, startPrivatePostgres, startPrivateRedis } from './helpers/private-services.js';
import { until } from './helpers/wait.js';

async function token(server: TestServer, client: string, scope = 'zoos:read zoos:write'): Promise<string> {
  registerClient(server, client);
  const res = await requestToken(server, client, scope);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.access_token;
}

const remaining = (res: { headers: Headers }) => Number(res.headers.get('ratelimit-remaining'));

test(
  'Redis stopped and started again under two instances: served throughout, quotas per instance meanwhile, revocations honoured, recovery without restart',
  { skip: !(pgAvailable && redisServerAvailable) && 'PostgreSQL or redis-server not available', timeout: 90_000 },
  async () => {
    const redis = await startPrivateRedis();
    const database = await createPgDatabase();
    const env = { DATABASE_URL: database.url, REDIS_URL: redis.url };
    const config = { api: { rateLimit: { max: 1000, window: 600 } } };
    let a: TestServer | undefined;
    let b: TestServer | undefined;
    try {
      a = await startServer({ env, config });
      b = await startServer({ env, config });
      const t = await token(a, 'outage-redis');
      const onA = asBearer(a, t);
      const onB = asBearer(b, t);
      addUser(a, 'outage-user', 'right-password-123');
      const pw = addClient(a, 'outage-pw', ['--grant', 'password', '--scope', 'zoos:read']);

      // With Redis: one quota for the token across both instances.
      const first = await onA.json('GET', '/v1/zoos');
      assert.equal(first.status, 200);
      const second = await onB.json('GET', '/v1/zoos');
      assert.equal(remaining(second), remaining(first) - 1, 'the quota is shared through Redis');
      assert.equal((await a.json('GET', '/health')).body.checks.redis, 'ok');

      await redis.stop();

      // Every request is answered, promptly, on both instances.
      const started = Date.now();
      for (let i = 0; i < 10; i++) {
        for (const client of [onA, onB]) {
          const t0 = Date.now();
          const res = await client.json('GET', '/v1/zoos?limit=1');
          assert.equal(res.status, 200, res.text);
          assert.ok(Date.now() - t0 < 2000, `a request took ${Date.now() - t0} ms while Redis was away`);
        }
      }
      const created = await onA.json('POST', '/v1/zoos', { name: 'Written while Redis was away', city: 'Oslo', founded: 1900 });
      assert.equal(created.status, 201, created.text);
      assert.ok(Date.now() - started < 10_000);
      // /health: 200 (the instance serves), degraded, Redis unreachable; the log says what fell back.
      for (const server of [a, b]) {
        const health = await server.json('GET', '/health');
        assert.equal(health.status, 200, health.text);
        assert.equal(health.body.status, 'degraded');
        assert.equal(health.body.degraded, true);
        assert.equal(health.body.checks.redis, 'unreachable');
        assert.equal(health.body.checks.database, 'ok');
        await until('the log line', async () => (/Redis is unreachable: request quotas are counted per instance/.test(server.output()) ? true : undefined), 5000);
      }
      // Quotas per instance: a request on A no longer counts on B.
      const onlyA1 = await onA.json('GET', '/v1/zoos?limit=1');
      const onlyA2 = await onA.json('GET', '/v1/zoos?limit=1');
      const onB1 = await onB.json('GET', '/v1/zoos?limit=1');
      const onB2 = await onB.json('GET', '/v1/zoos?limit=1');
      assert.equal(remaining(onlyA2), remaining(onlyA1) - 1);
      assert.equal(remaining(onB2), remaining(onB1) - 1);
      assert.notEqual(remaining(onB1), remaining(onlyA2) - 1, 'B counted A’s requests without Redis');
      // Failed logins are still counted (in the database) and answered as OAuth errors, not 5xx.
      const wrong = await post(a, 'token', { grant_type: 'password', username: 'outage-user', password: 'wrong', scope: 'zoos:read' }, { auth: basic(pw.client_id, pw.client_secret!) });
      assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
      assert.equal(wrong.body.error, 'invalid_grant');
      const right = await post(b, 'token', { grant_type: 'password', username: 'outage-user', password: 'right-password-123', scope: 'zoos:read' }, { auth: basic(pw.client_id, pw.client_secret!) });
      assert.equal(right.status, 200, JSON.stringify(right.body));
      // A revocation on A reaches B within a second through the database (no pub/sub now).
      assert.equal((await onB.json('GET', '/v1/zoos?limit=1')).status, 200);
      const revoked = await post(a, 'revocation', { token: t }, { auth: basic('outage-redis', secretOf('outage-redis')) });
      assert.equal(revoked.status, 200);
      const revokedAt = Date.now();
      await until('B refuses the revoked token', async () => ((await onB.json('GET', '/v1/zoos?limit=1')).status === 401 ? true : undefined), 3000);
      assert.ok(Date.now() - revokedAt < 1500, `B honoured the revocation after ${Date.now() - revokedAt} ms`);

      // Redis back: both instances reconnect by themselves, the quota is shared again.
      await redis.start();
      for (const server of [a, b])
        await until('Redis reachable again', async () => ((await server.json('GET', '/health')).body.checks.redis === 'ok' ? true : undefined), 15_000);
      const healthy = await b.json('GET', '/health');
      assert.equal(healthy.body.status, 'ok');
      assert.equal(healthy.body.degraded, false);
      assert.match(a.output(), /Redis is reachable again/);
      const t2 = await token(a, 'outage-redis-2');
      const r1 = await asBearer(a, t2).json('GET', '/v1/zoos');
      const r2 = await asBearer(b, t2).json('GET', '/v1/zoos');
      assert.equal(r1.status, 200);
      assert.equal(remaining(r2), remaining(r1) - 1, 'the quota is shared through Redis again');
    } finally {
      await Promise.all([a?.cleanup(), b?.cleanup()]);
      await redis.cleanup();
      await database.drop();
    }
  },
);

test(
  'PostgreSQL restarted under load: 503 + Retry-After meanwhile, never a hang or a 500; the pool recovers by itself; no acknowledged write lost',
  { skip: !privatePostgresAvailable && 'PostgreSQL’s programs (initdb, pg_ctl) are not installed', timeout: 120_000 },
  async () => {
    const pg = await startPrivatePostgres();
    let server: TestServer | undefined;
    try {
      // No request quota: six workers make more than a quota's worth of requests in a few seconds.
      server = await startServer({ env: { DATABASE_URL: pg.url }, config: { api: { rateLimit: null } } });
      const client = asBearer(server, await token(server, 'outage-pg'));
      const acknowledged: string[] = [];
      const statuses = new Map<number, number>();
      const problems: string[] = [];
      let lastOk = 0;
      let stopping = false;
      const worker = async (n: number) => {
        for (let i = 0; !stopping; i++) {
          const t0 = Date.now();
          const res = await Promise.race([
            i % 2 ? client.json('GET', '/v1/zoos?limit=5') : client.json('POST', '/v1/zoos', { name: `load ${n}-${i}`, city: 'Load', founded: 1950 }),
            new Promise<null>((r) => setTimeout(() => r(null), 10_000)),
          ]);
          if (res === null) {
            problems.push(`a request hung for 10 s`);
            continue;
          }
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status === 201) acknowledged.push(res.body.id);
          if (res.status < 300) lastOk = Date.now();
          if (res.status === 503) {
            if (!res.headers.get('retry-after')) problems.push('a 503 without Retry-After');
            if (typeof res.body?.error !== 'string') problems.push(`a 503 without the JSON error body: ${res.text.slice(0, 100)}`);
            await new Promise((r) => setTimeout(r, 50));
          } else if (res.status !== 200 && res.status !== 201) problems.push(`${res.status}: ${res.text.slice(0, 200)}`);
          if (Date.now() - t0 > 6000) problems.push(`a request took ${Date.now() - t0} ms`);
        }
      };
      const workers = [0, 1, 2, 3, 4, 5].map(worker);
      await new Promise((r) => setTimeout(r, 1000));

      await pg.stop();
      const downAt = Date.now();
      await new Promise((r) => setTimeout(r, 1500));
      const during = await server.json('GET', '/health');
      assert.equal(during.status, 503);
      assert.equal(during.body.checks.database, 'unreachable');
      await pg.start();
      const upAt = Date.now();
      await until('a request succeeds again', async () => (lastOk > upAt ? true : undefined), 10_000);
      const recovery = lastOk - upAt;
      await new Promise((r) => setTimeout(r, 1000));
      stopping = true;
      await Promise.all(workers);

      assert.deepEqual(problems, [], `statuses ${JSON.stringify([...statuses])}`);
      assert.ok((statuses.get(503) ?? 0) > 0, `the outage was not seen: ${JSON.stringify([...statuses])}`);
      assert.ok(recovery < 5000, `recovered ${recovery} ms after PostgreSQL was back`);
      assert.ok(upAt - downAt >= 1500);
      assert.equal(server.child.exitCode, null, 'the server is still running');
      assert.equal((await server.json('GET', '/health')).status, 200);
      // Every write that was answered 201 is there.
      for (const id of acknowledged) {
        const got = await client.json('GET', `/v1/zoos/${id}`);
        assert.equal(got.status, 200, `acknowledged ${id} is lost: ${got.text}`);
      }
      assert.ok(acknowledged.length > 10);
      assert.doesNotMatch(server.output(), /unexpected failure/);
    } finally {
      await server?.cleanup();
      await pg.cleanup();
    }
  },
);

/** A tmpfs of `megabytes` mounted on a new directory, or null when this process may not mount (not root). */
function smallDisk(megabytes: number): { dir: string; unmount(): void } | null {
  if (process.getuid?.() !== 0) return null;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-full-'));
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m`, 'tmpfs', dir]).status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
  return {
    dir,
    unmount: () => {
      spawnSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Fills the file system holding `dir` to the last byte; returns the filler's path. */
function fill(dir: string): string {
  const file = path.join(dir, 'filler');
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
    // The last partial block.
    try {
      for (;;) writeSync(fd, chunk, 0, 512);
    } catch {
      // full
    }
  } finally {
    closeSync(fd);
  }
  return file;
}

const probe = smallDisk(1);
probe?.unmount();

test(
  'SQLite on a full disk: writes are 503 + Retry-After, reads still answered, no corruption; writes succeed again once space returns',
  { skip: !probe && 'mounting a tmpfs needs root', timeout: 90_000 },
  async () => {
    const disk = smallDisk(24)!;
    let server: TestServer | undefined;
    try {
      mkdirSync(path.join(disk.dir, 'data'));
      server = await startServer({ dataDir: path.join(disk.dir, 'data') });
      const client = asBearer(server, await token(server, 'outage-disk'));
      const before = await client.json('POST', '/v1/zoos', { name: 'Before the disk filled' });
      assert.equal(before.status, 201);
      const acknowledged = [before.body.id as string];
      const filler = fill(disk.dir);
      assert.ok(statfsSync(disk.dir).bavail * statfsSync(disk.dir).bsize < 8192);
      // Writes with a large record until the database needs a page it cannot have.
      const big = 'x'.repeat(32 * 1024);
      let refused: Awaited<ReturnType<typeof client.json>> | null = null;
      for (let i = 0; i < 200 && !refused; i++) {
        const res = await client.json('POST', '/v1/zoos', { name: `${i} ${big}` });
        if (res.status === 201) acknowledged.push(res.body.id);
        else if (res.status === 503) refused = res;
        else assert.fail(`${res.status} on a full disk: ${res.text.slice(0, 300)}\n${server.output().slice(-2000)}`);
      }
      assert.ok(refused, 'no write was refused on a full disk');
      assert.ok(refused.headers.get('retry-after'));
      assert.equal(refused.body.detail.database, 'unavailable');
      // Reads go on; the server stays up.
      const read = await client.json('GET', `/v1/zoos/${before.body.id}`);
      assert.equal(read.status, 200, read.text);
      assert.equal((await server.json('GET', '/health')).status, 200);

      // Space returns: writes succeed again, without a restart.
      unlinkSync(filler);
      const after = await client.json('POST', '/v1/zoos', { name: 'After space returned' });
      assert.equal(after.status, 201, after.text);
      acknowledged.push(after.body.id);
      for (const id of acknowledged) assert.equal((await client.json('GET', `/v1/zoos/${id}`)).status, 200, `acknowledged ${id} is lost`);
      assert.doesNotMatch(server.output(), /unexpected failure/);
      assert.equal(await server.stop(), 0);
      const db = new Database(path.join(disk.dir, 'data', 'gatehouse.db'), { readonly: true });
      try {
        assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
      } finally {
        db.close();
      }
    } finally {
      await server?.cleanup();
      disk.unmount();
    }
  },
);
