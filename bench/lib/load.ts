// One measurement: autocannon (in worker threads, load-worker.mjs) against one server process,
// a warm-up first on the same connections. Throughput counts 2xx responses only, so a server
// answering errors (429, 503, 401...) never looks fast; latency percentiles are computed here
// from every 2xx response time (autocannon's own histogram rounds to whole milliseconds). CPU time of the server
// process (from /proc) and of this process tells who was the bottleneck.
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

export interface LoadSettings {
  connections: number;
  pipelining: number;
  /** Measured seconds. */
  duration: number;
  /** Warm-up seconds before each measurement (new connections, JIT, caches). */
  warmup: number;
  /**
   * Worker threads that generate the load (the connections are shared among them); 1 runs it on
   * this thread. More than one lets the loader use more than a core, so that a server faster
   * than one loader core is not measured at the loader's ceiling.
   */
  loaders?: number;
}

export interface Workload {
  /** Base URL of the server (https://127.0.0.1:port). */
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Request paths, cycled through in order (a fixed set, identical for every server it is compared with). */
  paths: string[];
  /** Request bodies, cycled through with the paths (replacing `body`): a POST whose body names the record (MCP tools/call). */
  bodies?: string[];
  /** DPoP (RFC 9449): a new proof by this key in every request's `DPoP` header (bench/lib/dpop.mjs). */
  dpop?: { key: { privateKeyPem: string; jwk: object }; accessToken?: string };
}

export interface Sample {
  rps: number;
  p50: number;
  p99: number;
  max: number;
  ok: number;
  non2xx: Record<string, number>;
  errors: number;
  timeouts: number;
  /** CPU used during the measurement, in cores (1.0 = one core fully busy). */
  serverCpu: number | null;
  /** Server CPU time per response, in microseconds: what a request costs, whatever else the machine was doing. */
  serverCpuPerRequest: number | null;
  loaderCpu: number;
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** utime + stime of a process, in seconds; null where /proc is not available. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

interface WorkerResult {
  ok: number;
  duration: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  latencies: Float64Array;
}

/**
 * One measurement, the load from `settings.loaders` worker threads (one at least): a warm-up and
 * then the measured seconds, on the same connections (see load-worker.mjs). The server's CPU time
 * is read when the first worker starts counting and when the last one ends.
 */
export async function measure(work: Workload, settings: LoadSettings, serverPid: number): Promise<Sample> {
  const count = Math.max(1, Math.min(settings.loaders ?? 1, settings.connections));
  const workers = Array.from(
    { length: count },
    (_, i) =>
      new Worker(new URL('./load-worker.mjs', import.meta.url), {
        workerData: {
          work,
          // The connections shared out: 50 over 2 workers is 25 each.
          connections: Math.floor(settings.connections / count) + (i < settings.connections % count ? 1 : 0),
          pipelining: settings.pipelining,
          offset: Math.floor((i * work.paths.length) / count),
        },
      }),
  );
  let serverBefore: number | null = null;
  let loaderBefore: NodeJS.CpuUsage | null = null;
  let started = 0n;
  const window = () => {
    if (loaderBefore) return;
    serverBefore = cpuSeconds(serverPid);
    loaderBefore = process.cpuUsage(); // every thread of this process
    started = process.hrtime.bigint();
  };
  try {
    const results = await Promise.all(
      workers.map(
        (w) =>
          new Promise<WorkerResult>((resolve, reject) => {
            w.on('message', (m: { measuring?: true; result?: WorkerResult; error?: string }) => {
              if (m.measuring) window();
              else if (m.result) resolve(m.result);
              else reject(new Error(m.error));
            });
            w.once('error', reject);
            w.postMessage({ warmup: settings.warmup, seconds: settings.duration });
          }),
      ),
    );
    const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
    const serverAfter = cpuSeconds(serverPid);
    const loader = process.cpuUsage(loaderBefore!);
    const statusCodes: Record<string, number> = {};
    for (const r of results) for (const [code, n] of Object.entries(r.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
    const latencies = new Float64Array(results.reduce((n, r) => n + r.latencies.length, 0));
    let at = 0;
    for (const r of results) {
      latencies.set(r.latencies, at);
      at += r.latencies.length;
    }
    return sample({
      ok: results.reduce((n, r) => n + r.ok, 0),
      duration: Math.max(...results.map((r) => r.duration)),
      errors: results.reduce((n, r) => n + r.errors, 0),
      timeouts: results.reduce((n, r) => n + r.timeouts, 0),
      statusCodes,
      latencies,
      serverSeconds: serverBefore === null || serverAfter === null ? null : serverAfter - serverBefore,
      loaderSeconds: (loader.user + loader.system) / 1e6,
      elapsed,
    });
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

function sample(m: WorkerResult & { serverSeconds: number | null; loaderSeconds: number; elapsed: number }): Sample {
  const sorted = m.latencies.sort();
  const non2xx: Record<string, number> = {};
  for (const [code, count] of Object.entries(m.statusCodes)) if (!code.startsWith('2')) non2xx[code] = count;
  const responses = m.ok + Object.values(non2xx).reduce((a, b) => a + b, 0);
  return {
    rps: m.ok / m.duration,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
    ok: m.ok,
    non2xx,
    errors: m.errors,
    timeouts: m.timeouts,
    serverCpu: m.serverSeconds === null ? null : m.serverSeconds / m.elapsed,
    serverCpuPerRequest: m.serverSeconds === null || responses === 0 ? null : (m.serverSeconds / responses) * 1e6,
    loaderCpu: m.loaderSeconds / m.elapsed,
  };
}
