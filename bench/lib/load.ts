// One measurement: autocannon (programmatic, in this process) against one server process, with
// a warm-up first. Throughput counts 2xx responses only, so a server answering errors (429,
// 503, 401...) never looks fast; latency percentiles are computed here from every 2xx response
// time (autocannon's own histogram rounds to whole milliseconds). CPU time of the server
// process (from /proc) and of this process tells who was the bottleneck.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export interface LoadSettings {
  connections: number;
  pipelining: number;
  /** Measured seconds. */
  duration: number;
  /** Warm-up seconds before each measurement (new connections, JIT, caches). */
  warmup: number;
}

export interface Workload {
  /** Base URL of the server (https://127.0.0.1:port). */
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Request paths, cycled through in order (a fixed set, identical for every server it is compared with). */
  paths: string[];
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

function run(work: Workload, settings: LoadSettings, seconds: number, onLatency?: (ms: number) => void) {
  let next = 0;
  const { paths } = work;
  return new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: work.url,
        connections: settings.connections,
        pipelining: settings.pipelining,
        duration: seconds,
        requests: [
          {
            method: work.method,
            headers: work.headers,
            body: work.body,
            setupRequest: (req) => ({ ...req, path: paths[next++ % paths.length] }),
          },
        ],
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
    if (onLatency)
      instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
        if (statusCode >= 200 && statusCode < 300) onLatency(responseTime);
      });
  });
}

export async function measure(work: Workload, settings: LoadSettings, serverPid: number): Promise<Sample> {
  if (settings.warmup > 0) await run(work, settings, settings.warmup);
  const latencies: number[] = [];
  const serverBefore = cpuSeconds(serverPid);
  const loaderBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  const result = await run(work, settings, settings.duration, (ms) => latencies.push(ms));
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  const serverAfter = cpuSeconds(serverPid);
  const loader = process.cpuUsage(loaderBefore);
  const sorted = Float64Array.from(latencies).sort();
  const non2xx: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {}))
    if (!code.startsWith('2')) non2xx[code] = count;
  const ok = result['2xx'];
  const responses = ok + Object.values(non2xx).reduce((a, b) => a + b, 0);
  const serverSeconds = serverBefore === null || serverAfter === null ? null : serverAfter - serverBefore;
  return {
    rps: ok / result.duration,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
    ok,
    non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    serverCpu: serverSeconds === null ? null : serverSeconds / elapsed,
    serverCpuPerRequest: serverSeconds === null || responses === 0 ? null : (serverSeconds / responses) * 1e6,
    loaderCpu: (loader.user + loader.system) / 1e6 / elapsed,
  };
}
