import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Registry, collectDefaultMetrics, type Histogram } from 'prom-client';
import type { AppContext } from '../contract/context.js';
import type { PoolStats } from '../platform/store/store.js';
import { auditObservers, type AuditEvent, type AuditFields } from '../authserver/audit.js';
import { GRANT_TYPES } from '../authserver/model/client.js';
import { quotaRejectionObservers } from '../api/routes.js';

// Prometheus metrics (docs/deployment.md#metrics): one registry per server, served by a separate
// plain-HTTP listener (metrics.host:metrics.port, loopback by default), never by the HTTPS port.
//
// Requests are counted by one onResponse hook into plain numbers (RequestTally), no prom-client
// call per request: prom-client's labelled inc/observe hash their labels on every call (≈2 µs a
// request, measured), the tally costs a few map lookups. The numbers become samples when
// Prometheus scrapes. Tokens and failed logins are counted from the audit trail, quota 429s from
// the resource API's observers: nothing is counted inside a handler.

/** Upper bounds of the request duration histogram, in seconds (a typical request takes ~0.1–5 ms). */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** The route label of a request that matched no route (404): the raw URL would make the label unbounded. */
const UNMATCHED = 'unmatched';

const REQUESTS = 'gatehouse_http_requests_total';
const DURATION = 'gatehouse_http_request_duration_seconds';

class Series {
  count = 0;
  sum = 0;
  /** Observations per bucket (not cumulative); the last one is +Inf. */
  readonly buckets = new Float64Array(DURATION_BUCKETS.length + 1);
}

/**
 * Requests per route template, method and status: what the two HTTP families are made of. Every
 * label is bounded: the template (never the URL), the methods node's parser knows, the statuses.
 */
class RequestTally {
  private byRoute = new Map<string, Map<string, Map<number, Series>>>();

  /** Per request: four map lookups and a few additions; nothing is allocated once a series exists. */
  record(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.byRoute.get(route);
    if (byMethod === undefined) this.byRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (series === undefined) byStatus.set(status, (series = new Series()));
    series.count++;
    series.sum += seconds;
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]) bucket++;
    series.buckets[bucket]++;
  }

  *series(): Generator<[string, string, number, Series]> {
    for (const [route, byMethod] of this.byRoute)
      for (const [method, byStatus] of byMethod) for (const [status, series] of byStatus) yield [route, method, status, series];
  }

  reset(): void {
    this.byRoute = new Map();
  }
}

type Sample = { labels: Record<string, string | number>; value: number; metricName: string };

/**
 * The duration histogram, read from the tally at scrape time. prom-client's Histogram cannot be
 * given counts, so this is a metric object of the shape its Registry reads (`get()` → name, help,
 * type and samples; `reset()`), as its own metric classes are.
 */
function durationHistogram(tally: RequestTally) {
  const help = 'Time from receiving a request to the end of its response, by route template, method and status';
  const samples = (): Sample[] => {
    const out: Sample[] = [];
    for (const [route, method, status, series] of tally.series()) {
      let cumulative = 0;
      DURATION_BUCKETS.forEach((le, i) => {
        cumulative += series.buckets[i];
        out.push({ labels: { route, method, status, le }, value: cumulative, metricName: `${DURATION}_bucket` });
      });
      out.push({ labels: { route, method, status, le: '+Inf' }, value: series.count, metricName: `${DURATION}_bucket` });
      out.push({ labels: { route, method, status }, value: series.sum, metricName: `${DURATION}_sum` });
      out.push({ labels: { route, method, status }, value: series.count, metricName: `${DURATION}_count` });
    }
    return out;
  };
  return {
    name: DURATION,
    help,
    type: 'histogram' as const,
    aggregator: 'sum' as const,
    get: async () => ({ name: DURATION, help, type: 'histogram' as const, aggregator: 'sum' as const, values: samples() }),
    reset: () => tally.reset(),
  };
}

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly tally = new RequestTally();
  private readonly detach: (() => void)[] = [];
  private server: http.Server | null = null;
  private waiting: () => number = () => 0;

  constructor(ctx: AppContext) {
    const { registry, tally } = this;
    const registers = [registry];
    new Counter({
      name: REQUESTS,
      help: 'HTTP requests answered on the HTTPS port, by route template, method and status',
      labelNames: ['route', 'method', 'status'],
      registers,
      collect() {
        this.reset();
        for (const [route, method, status, series] of tally.series()) this.inc({ route, method, status }, series.count);
      },
    });
    // Not one of prom-client's classes (see durationHistogram): its Registry reads it the same way.
    registry.registerMetric(durationHistogram(tally) as unknown as Histogram);

    const tokens = new Counter({
      name: 'gatehouse_tokens_issued_total',
      help: 'Access tokens issued, by grant type (refresh_token: a refresh)',
      labelNames: ['grant_type'],
      registers,
    });
    for (const grantType of GRANT_TYPES) tokens.inc({ grant_type: grantType }, 0);
    const loginFailures = new Counter({
      name: 'gatehouse_login_failures_total',
      help: 'Sign-ins refused for a wrong user name or password (password grant and login form)',
      registers,
    });
    const quotaRejections = new Counter({
      name: 'gatehouse_quota_rejections_total',
      help: 'Resource API requests refused with 429 by the request quota (api.rateLimit)',
      registers,
    });
    this.detach.push(
      auditObservers(ctx).add((event: AuditEvent, fields: AuditFields) => {
        if (event === 'grant.issued') tokens.inc({ grant_type: fields.grant_type ?? 'unknown' });
        else if (event === 'token.refreshed') tokens.inc({ grant_type: 'refresh_token' });
        else if (event === 'login.failed') loginFailures.inc();
      }),
      quotaRejectionObservers(ctx).add(() => quotaRejections.inc()),
    );

    const engine = ctx.store.engine;
    const pool = (name: string, help: string, read: (s: PoolStats) => number | null) =>
      new Gauge({
        name,
        help,
        labelNames: ['engine'],
        registers,
        collect() {
          const value = read(ctx.store.poolStats());
          if (value !== null) this.set({ engine }, value);
        },
      });
    pool('gatehouse_db_pool_max_connections', 'Connections the database pool may open (SQLite: its one connection)', (s) => s.max);
    pool('gatehouse_db_pool_open_connections', 'Connections the database pool holds open now', (s) => s.open);
    pool('gatehouse_db_pool_idle_connections', 'Open connections not in use (PostgreSQL only)', (s) => s.idle);
    pool('gatehouse_db_pool_waiting_queries', 'Queries waiting for a free connection (PostgreSQL only)', (s) => s.waiting);

    const waiting: Gauge = new Gauge({
      name: 'gatehouse_requests_waiting',
      help: 'Requests waiting for a turn of the event loop (GATEHOUSE_TURN_BUDGET_MS): the process is saturated while above 0',
      registers,
      collect: () => waiting.set(this.waiting()),
    });
    collectDefaultMetrics({ register: registry });
  }

  /** Requests waiting for a turn of the event loop: the availability hooks' gate tells. */
  countWaiting(waiting: () => number): void {
    this.waiting = waiting;
  }

  /** The one per-request hook: route template (never the raw URL), method, status and duration. */
  instrument(app: FastifyInstance): void {
    const tally = this.tally;
    app.addHook('onResponse', (request, reply, done) => {
      tally.record(request.routeOptions.url ?? UNMATCHED, request.method, reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
  }

  /** Starts the plain-HTTP listener answering GET /metrics; resolves with its address once listening. */
  async listen(host: string, port: number): Promise<AddressInfo> {
    const server = http.createServer((req, res) => void this.answer(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', (e: NodeJS.ErrnoException) =>
        reject(new Error(`cannot listen for metrics on ${host}:${port} (metrics.port, --metrics-port): ${e.code ?? e.message}`)),
      );
      server.listen(port, host, () => resolve());
    });
    this.server = server;
    return server.address() as AddressInfo;
  }

  private async answer(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') return plain(res, 404, 'Not found: the metrics are at /metrics\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'Method not allowed\n', { allow: 'GET, HEAD' });
    let text: string;
    try {
      text = await this.registry.metrics();
    } catch (e) {
      return plain(res, 500, `Metrics could not be collected: ${(e as Error).message}\n`);
    }
    res.writeHead(200, { 'content-type': this.registry.contentType, 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : text);
  }

  async close(): Promise<void> {
    for (const detach of this.detach.splice(0)) detach();
    const server = this.server;
    this.server = null;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}

function plain(res: http.ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
  res.end(body);
}
