// Prometheus metrics: a separate plain-HTTP listener (metrics.port / METRICS_PORT / --metrics-port,
// loopback by default) answering GET /metrics; the HTTPS port never serves them.
// Spawned server (test/helpers/server.ts), not in process: a second (plain-HTTP) listener and the ports the process opens.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import net from 'node:net';
import { fetch } from 'undici';
import { createPgDatabase, freePort, pgAvailable, runCli, startServer, type TestServer } from './helpers/server.js';
import { addClient, addUser, basic } from './helpers/oauth.js';
import { apiClient } from './helpers/tokens.js';

async function scrape(port: number, host = '127.0.0.1') {
  const res = await fetch(`http://${host}:${port}/metrics`);
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

function refused(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 2000 });
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(true));
    socket.once('timeout', () => (socket.destroy(), resolve(true)));
  });
}

/** The TCP ports a process listens on (Linux /proc), or null where that cannot be read. */
function listeningPorts(pid: number): number[] | null {
  try {
    const inodes = new Set<string>();
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      let target = '';
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`, 'utf8');
      } catch {
        continue; // closed meanwhile
      }
      const m = /^socket:\[(\d+)\]$/.exec(target);
      if (m) inodes.add(m[1]);
    }
    const ports: number[] = [];
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
        const cols = line.trim().split(/\s+/);
        if (cols.length < 10 || cols[3] !== '0A' || !inodes.has(cols[9])) continue; // 0A: LISTEN
        ports.push(parseInt(cols[1].split(':')[1], 16));
      }
    }
    return ports;
  } catch {
    return null;
  }
}

let server: TestServer;
let metricsPort: number;

before(async () => {
  metricsPort = await freePort();
  // The flag wins over METRICS_PORT (which names a port nobody listens on).
  server = await startServer({
    config: { api: { rateLimit: { max: 3, window: 60 } } },
    args: ['--metrics-port', String(metricsPort)],
    env: { METRICS_PORT: String(await freePort()) },
  });
});
after(async () => {
  await server?.cleanup();
});

test('the banner names the metrics URL; the listener is on 127.0.0.1 only', async () => {
  assert.match(server.output(), new RegExp(`\\n  metrics        http://127\\.0\\.0\\.1:${metricsPort}/metrics\\n`));
  const res = await scrape(metricsPort);
  assert.equal(res.status, 200);
  assert.match(res.type ?? '', /^text\/plain; version=0\.0\.4/);
  assert.equal(await refused('127.0.0.2', metricsPort), true, 'another loopback address is refused');
  assert.equal(await refused('::1', metricsPort), true, 'IPv6 loopback is refused');
  assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/`)).status, 404);
  assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { method: 'POST' })).status, 405);
});

test('the HTTPS port does not serve /metrics: 404 JSON like any unknown route', async () => {
  const res = await server.json('GET', '/metrics');
  assert.equal(res.status, 404);
  assert.equal(res.body.error, 'No such resource');
});

/** The labels of a sample line, in order. */
function labelsOf(line: string): Record<string, string> {
  return Object.fromEntries([...(/\{([^}]*)\}/.exec(line)?.[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
}

test('requests by route template, durations, tokens, failed logins, quota 429s, pool and process metrics', async () => {
  const api = await apiClient(server, 'metrics-app', 'zoos:read zoos:write'); // one client_credentials token
  const zoo = await api.json('POST', '/v1/zoos', { name: 'Metrics Zoo' });
  assert.equal(zoo.status, 201);
  assert.equal((await api.json('GET', `/v1/zoos/${zoo.body.id}`)).status, 200);
  addUser(server, 'mia', 'mia-password-1');
  const pw = addClient(server, 'pw-app', ['--grant', 'password']);
  const failed = await server.fetch('/oauth/token', {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', authorization: basic('pw-app', pw.client_secret!) },
    body: new URLSearchParams({ grant_type: 'password', username: 'mia', password: 'not-her-password' }).toString(),
  });
  assert.equal(failed.status, 400);
  // Without a token the quota counts per IP (max 3): three 401s, then a 429.
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push((await server.json('GET', '/v1/zoos')).status);
  assert.deepEqual(statuses, [401, 401, 401, 429]);
  assert.equal((await server.json('GET', '/no-such-place/42')).status, 404);

  const { text } = await scrape(metricsPort);
  for (const family of [
    'gatehouse_http_requests_total counter',
    'gatehouse_http_request_duration_seconds histogram',
    'gatehouse_tokens_issued_total counter',
    'gatehouse_quota_rejections_total counter',
    'gatehouse_login_failures_total counter',
    'gatehouse_db_pool_max_connections gauge',
    'gatehouse_db_pool_open_connections gauge',
    'gatehouse_requests_waiting gauge',
    'process_cpu_user_seconds_total counter',
    'nodejs_eventloop_lag_seconds gauge',
  ])
    assert.match(text, new RegExp(`^# TYPE ${family}$`, 'm'), family);

  const requests = (route: string, method: string, status: number) =>
    sample(text, `gatehouse_http_requests_total{route="${route}",method="${method}",status="${status}"}`);
  assert.equal(requests('/v1/:collection', 'GET', 401), 3);
  assert.equal(requests('/v1/:collection', 'GET', 429), 1);
  assert.equal(requests('/v1/:collection', 'POST', 201), 1);
  assert.equal(requests('/v1/:collection/:id', 'GET', 200), 1);
  assert.equal(requests('/oauth/token', 'POST', 200), 1);
  assert.equal(requests('/oauth/token', 'POST', 400), 1);
  assert.equal(requests('unmatched', 'GET', 404), 2); // and GET /metrics on the HTTPS port, above
  assert.doesNotMatch(text, /no-such-place|Metrics Zoo/, 'never the raw URL');
  assert.ok(!text.includes(zoo.body.id), 'never a record id');

  // The histogram carries the status too (the label set of Grafana's HTTP dashboards): route
  // template, method and status only, all bounded.
  const duration = (suffix: string, labels: string) => sample(text, `gatehouse_http_request_duration_seconds_${suffix}{${labels}}`);
  assert.equal(duration('count', 'route="/v1/:collection",method="GET",status="401"'), 3);
  assert.equal(duration('count', 'route="/v1/:collection",method="GET",status="429"'), 1);
  assert.equal(duration('bucket', 'route="/v1/:collection",method="GET",status="401",le="+Inf"'), 3);
  assert.equal(duration('count', 'route="/v1/:collection/:id",method="GET",status="200"'), 1);
  assert.equal(duration('count', 'route="unmatched",method="GET",status="404"'), 2);
  assert.ok(duration('sum', 'route="/v1/:collection",method="GET",status="401"')! > 0);
  const buckets = text.split('\n').filter((l) => l.startsWith('gatehouse_http_request_duration_seconds_bucket{route="/v1/:collection",method="GET",status="401",'));
  assert.equal(buckets.length, 15, 'fourteen bounds and +Inf');
  const counts = buckets.map((l) => Number(l.split(' ').pop()));
  assert.deepEqual(counts, [...counts].sort((x, y) => x - y), 'buckets are cumulative');
  for (const line of text.split('\n').filter((l) => l.startsWith('gatehouse_http_request_duration_seconds')))
    assert.deepEqual(Object.keys(labelsOf(line)).filter((k) => k !== 'le'), ['route', 'method', 'status'], line);

  assert.equal(sample(text, 'gatehouse_tokens_issued_total{grant_type="client_credentials"}'), 1);
  assert.equal(sample(text, 'gatehouse_tokens_issued_total{grant_type="password"}'), 0);
  assert.equal(sample(text, 'gatehouse_login_failures_total'), 1);
  assert.equal(sample(text, 'gatehouse_quota_rejections_total'), 1);
  assert.equal(sample(text, 'gatehouse_db_pool_max_connections{engine="sqlite"}'), 1);
  assert.equal(sample(text, 'gatehouse_db_pool_open_connections{engine="sqlite"}'), 1);
  assert.equal(sample(text, 'gatehouse_requests_waiting'), 0, 'nothing waits for a turn on an idle server');
});

test('without a metrics port nothing but the HTTPS port listens', async (t) => {
  const plain = await startServer();
  try {
    assert.doesNotMatch(plain.output(), /metrics/);
    const ports = listeningPorts(plain.child.pid!);
    if (ports === null) {
      t.skip('the listening ports not checked: no /proc on this machine');
      return;
    }
    assert.deepEqual(ports, [Number(new URL(plain.url).port)]);
  } finally {
    await plain.cleanup();
  }
});

test('metrics.port in the file, METRICS_PORT over it; metrics.host chooses the address', async () => {
  const [fromFile, fromEnv] = [await freePort(), await freePort()];
  const s = await startServer({ config: { metrics: { port: fromFile, host: 'localhost' } }, env: { METRICS_PORT: String(fromEnv) } });
  try {
    assert.match(s.output(), new RegExp(`metrics        http://localhost:${fromEnv}/metrics`));
    assert.equal(await refused('127.0.0.1', fromFile), true);
    assert.equal((await scrape(fromEnv, 'localhost')).status, 200);
  } finally {
    await s.cleanup();
  }
});

test('a metrics port must be 1-65535', () => {
  const flag = runCli(['serve', '--metrics-port', '0']);
  assert.equal(flag.status, 1);
  assert.match(flag.stderr, /--metrics-port.*must be a port number \(1-65535\)/);
  const env = runCli(['migrate', '--data-dir', '/nonexistent-gatehouse'], { env: { METRICS_PORT: 'x' } });
  assert.equal(env.status, 2);
  assert.match(env.stderr, /METRICS_PORT: must be a port number/);
});

test('on PostgreSQL the pool gauges show the pg Pool', { skip: pgAvailable ? false : 'PostgreSQL is not reachable (TEST_DATABASE_URL)' }, async () => {
  const database = await createPgDatabase();
  const port = await freePort();
  const s = await startServer({ env: { DATABASE_URL: database.url, GATEHOUSE_PG_POOL: '4' }, args: ['--metrics-port', String(port)] });
  try {
    assert.equal((await s.json('GET', '/health')).status, 200);
    const { text } = await scrape(port);
    assert.equal(sample(text, 'gatehouse_db_pool_max_connections{engine="postgres"}'), 4);
    assert.ok(sample(text, 'gatehouse_db_pool_open_connections{engine="postgres"}')! >= 1);
    assert.ok(sample(text, 'gatehouse_db_pool_idle_connections{engine="postgres"}')! >= 1);
    assert.equal(sample(text, 'gatehouse_db_pool_waiting_queries{engine="postgres"}'), 0);
  } finally {
    await s.cleanup();
    await database.drop();
  }
});
