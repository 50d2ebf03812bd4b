// Medians, ratios against the targets of issues 2, 3 and 4, and the text and markdown tables.
import type { Sample } from './load.js';

export function median(values: number[]): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

export interface TargetSummary {
  key: string;
  label: string;
  rounds: number;
  rps: number;
  rpsMin: number;
  rpsMax: number;
  p50: number;
  p99: number;
  serverCpu: number | null;
  /** Median server CPU microseconds per response. */
  cpuPerRequest: number | null;
  loaderCpu: number;
  /** Non-2xx responses, errors and timeouts over every round (a clean run has none). */
  failures: number;
  failureDetail: string;
  /** Which side limited the req/s (see `bottleneck`); set by the caller, who knows the loader threads and cores. */
  bottleneck?: string;
}

/**
 * Who limited the throughput of a measurement: the server (its event loop at ≈ one core), the
 * load generator (every loader thread at ≈ one core), the machine (server and loader together
 * use every core: neither is at its own ceiling, they share the CPUs), or neither (latency-bound:
 * the connections wait). Server CPU per request is the figure that stays honest in every case.
 */
export function bottleneck(s: Pick<TargetSummary, 'serverCpu' | 'loaderCpu'>, loaders: number, cores: number): string {
  const server = s.serverCpu ?? NaN;
  if (server >= 0.9) return 'server';
  if (s.loaderCpu >= 0.9 * loaders) return 'loader';
  if (server + s.loaderCpu >= 0.9 * cores) return 'machine';
  return 'neither';
}

export function summarize(key: string, label: string, samples: Sample[]): TargetSummary {
  const rps = samples.map((s) => s.rps);
  const cpu = samples.map((s) => s.serverCpu).filter((c): c is number => c !== null);
  const perRequest = samples.map((s) => s.serverCpuPerRequest).filter((c): c is number => c !== null);
  const codes: Record<string, number> = {};
  let errors = 0;
  let timeouts = 0;
  for (const s of samples) {
    for (const [code, n] of Object.entries(s.non2xx)) codes[code] = (codes[code] ?? 0) + n;
    errors += s.errors;
    timeouts += s.timeouts;
  }
  const parts = [...Object.entries(codes).map(([c, n]) => `${n}×${c}`), ...(errors ? [`${errors} errors`] : []), ...(timeouts ? [`${timeouts} timeouts`] : [])];
  return {
    key,
    label,
    rounds: samples.length,
    rps: median(rps),
    rpsMin: Math.min(...rps),
    rpsMax: Math.max(...rps),
    p50: median(samples.map((s) => s.p50)),
    p99: median(samples.map((s) => s.p99)),
    serverCpu: cpu.length ? median(cpu) : null,
    cpuPerRequest: perRequest.length ? median(perRequest) : null,
    loaderCpu: median(samples.map((s) => s.loaderCpu)),
    failures: Object.values(codes).reduce((a, b) => a + b, 0) + errors + timeouts,
    failureDetail: parts.join(', '),
  };
}

export interface Check {
  what: string;
  /** Which issue sets the bar. */
  issue: string;
  value: string;
  /** The same comparison from server CPU time per request (robust to a busy machine and to a saturated load generator). */
  cpuValue?: string;
  target: string;
  met: boolean | null;
}

export const fmtInt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—');
export const fmtMs = (n: number) => (Number.isFinite(n) ? n.toFixed(n < 10 ? 2 : 1) : '—');
export const fmtCpu = (n: number | null) => (n === null || !Number.isFinite(n) ? '—' : n.toFixed(2));
export const fmtRatio = (n: number) => (Number.isFinite(n) ? `${n.toFixed(2)}×` : '—');
export const fmtPct = (n: number) => (Number.isFinite(n) ? `${(n * 100).toFixed(0)}%` : '—');

function pad(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')).join('\n');
}

const HEAD = ['target', 'CPU µs/req', 'req/s (median)', 'min–max', 'p50 ms', 'p99 ms', 'server CPU', 'loader CPU', 'bottleneck', 'non-2xx/errors'];

function row(s: TargetSummary): string[] {
  return [s.label, s.cpuPerRequest === null ? '—' : fmtInt(s.cpuPerRequest), fmtInt(s.rps), `${fmtInt(s.rpsMin)}–${fmtInt(s.rpsMax)}`, fmtMs(s.p50), fmtMs(s.p99), fmtCpu(s.serverCpu), fmtCpu(s.loaderCpu), s.bottleneck ?? '—', s.failures ? s.failureDetail : '0'];
}

const mark = (met: boolean | null) => (met === null ? 'n/a' : met ? 'met' : 'MISSED');

export function textTables(summaries: TargetSummary[], checks: Check[]): string {
  const results = pad([HEAD, ...summaries.map(row)]);
  const verdicts = pad([['check', 'issue', 'by server CPU/req', 'measured', 'target', 'verdict'], ...checks.map((c) => [c.what, c.issue, c.cpuValue ?? '', c.value, c.target, mark(c.met)])]);
  return `${results}\n\n${verdicts}`;
}

export function markdownTables(summaries: TargetSummary[], checks: Check[]): string {
  const md = (rows: string[][]) =>
    [`| ${rows[0].join(' | ')} |`, `|${rows[0].map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`, ...rows.slice(1).map((r) => `| ${r.join(' | ')} |`)].join('\n');
  const verdictRows = [
    ['check', 'issue', 'by server CPU µs/req (the headline)', 'measured (medians; req/s for rates)', 'target', 'verdict'],
    ...checks.map((c) => [c.what, c.issue, c.cpuValue ?? '', c.value, c.target, c.met === null ? 'n/a' : c.met ? '✅ met' : '❌ missed']),
  ];
  return `${md([HEAD, ...summaries.map(row)])}\n\n${md(verdictRows)}`;
}
