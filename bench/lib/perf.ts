// BENCH_PERF=DIR: where a target's server CPU goes, sampled by Linux perf on CPU time.
//
// V8's own profiler (BENCH_PROFILE) samples on a wall-clock timer: a thread that the kernel has
// descheduled inside a system call is counted there, so the socket write looked like a quarter of
// a GET. perf's `cpu-clock` event only counts while the server's thread runs, and it sees the
// kernel, OpenSSL and SQLite as well as JavaScript (node's --perf-basic-prof names JIT frames).
// Each gatehouse target is recorded during its measured seconds (not the warm-up), in every
// round; the summary adds the rounds up and sorts the samples into categories.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Is `perf` on the PATH and allowed to sample another process? (perf_event_paranoid ≤ 1, or root) */
export function perfProblem(): string | null {
  const probe = spawnSync('perf', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return 'perf is not installed (Debian: apt-get install linux-perf)';
  const paranoid = Number(readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8').trim());
  if (paranoid > 1 && process.getuid?.() !== 0) return `kernel.perf_event_paranoid is ${paranoid}: perf may not sample another process (run as root, or set it to 1)`;
  return null;
}

export interface PerfRecording {
  stop(): Promise<void>;
}

/** Samples `pid` on CPU time from `delayMs` from now until stop(). */
export function recordPerf(pid: number, file: string, delayMs: number): PerfRecording {
  let stopped: (() => Promise<void>) | null = null;
  const timer = setTimeout(() => {
    const child: ChildProcess = spawn('perf', ['record', '-q', '-e', 'cpu-clock', '-F', '999', '-g', '-p', String(pid), '-o', file], { stdio: 'ignore' });
    const ended = new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.once('error', () => resolve()); // no recording; summarizePerf reports the missing samples
    });
    stopped = () => {
      child.kill('SIGINT'); // perf writes its file on SIGINT
      return ended;
    };
  }, delayMs);
  return {
    async stop() {
      clearTimeout(timer);
      await stopped?.();
    },
  };
}

const CATEGORIES: [string, (dso: string, symbol: string) => boolean][] = [
  ['kernel (system calls, TCP)', (dso) => dso.includes('kernel')],
  ['SQLite', (dso) => dso.includes('sqlite')],
  ['OpenSSL (TLS records, AES-GCM, SHA)', (dso, s) => dso === 'node' && /^(_?aes|_?gcm|_?ghash|sha\d*_|SHA\d*_|EVP_|ssl|SSL_|tls|ossl_|OPENSSL_|CRYPTO_|BIO_|RAND_|ERR_|OBJ_|HMAC|bn_|BN_|x25519|ecp_|WPACKET|PACKET|dtls|do_ssl3|ChaCha|Poly1305)/.test(s)],
  ['V8 garbage collection', (dso, s) => dso === 'node' && /^v8::internal::(Scaveng|Heap|MarkCompact|Mark|Sweep|Evacuat|MinorMC|Remembered|Concurrent|GCTracer|MemoryAllocator|PagedSpace|LargeObject|SemiSpace)/.test(s)],
  ['JavaScript (optimized and baseline code)', (dso, s) => dso.startsWith('[JIT]') || s.startsWith('JS:') || s.startsWith('LazyCompile:')],
  ['regular expressions', (_dso, s) => s.startsWith('RegExp:')],
  ['V8 built-ins (property access, calls, promises, strings)', (dso, s) => dso === 'node' && s.startsWith('Builtins_')],
  ['V8 runtime (slow paths, API)', (dso, s) => dso === 'node' && /^v8::/.test(s)],
  ['node C++ (streams, HTTP parser, libuv)', (dso, s) => dso === 'node' && /^(node::|uv_|uv__|llhttp|non-virtual thunk to node)/.test(s)],
  ['libc (malloc, memcpy)', (dso) => dso.startsWith('libc')],
];

export interface PerfSummary {
  samples: number;
  categories: { name: string; share: number }[];
  top: { share: number; dso: string; symbol: string }[];
}

/** Adds up the recordings of one target (its rounds) by category and by symbol. */
export function summarizePerf(files: string[]): PerfSummary | null {
  const bySymbol = new Map<string, { dso: string; symbol: string; samples: number }>();
  let samples = 0;
  for (const file of files.filter((f) => existsSync(f))) {
    // -F sample: absolute counts, so that rounds of different length add up correctly.
    const out = spawnSync('perf', ['report', '-i', file, '--no-children', '--sort', 'dso,sym', '-g', 'none', '-q', '-F', 'sample,dso,sym'], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
    for (const line of out.stdout.split('\n')) {
      const m = /^\s*(\d+)\s+(\S+(?: tid \d+)?)\s+\[(?:k|\.)\]\s+(.*?)\s*$/.exec(line);
      if (!m) continue;
      const n = Number(m[1]);
      const dso = m[2].startsWith('[JIT]') ? '[JIT]' : m[2];
      const key = `${dso}\t${m[3]}`;
      const entry = bySymbol.get(key) ?? { dso, symbol: m[3], samples: 0 };
      entry.samples += n;
      bySymbol.set(key, entry);
      samples += n;
    }
  }
  if (samples === 0) return null;
  const categories = new Map<string, number>();
  for (const { dso, symbol, samples: n } of bySymbol.values()) {
    const name = CATEGORIES.find(([, is]) => is(dso, symbol))?.[0] ?? 'other (node binary, libstdc++, …)';
    categories.set(name, (categories.get(name) ?? 0) + n);
  }
  return {
    samples,
    categories: [...categories].map(([name, n]) => ({ name, share: n / samples })).sort((a, b) => b.share - a.share),
    top: [...bySymbol.values()]
      .sort((a, b) => b.samples - a.samples)
      .slice(0, 40)
      .map((e) => ({ share: e.samples / samples, dso: e.dso, symbol: e.symbol })),
  };
}

/** Writes DIR/<key>.txt and returns the lines for the run's log. */
export function writePerfSummary(dir: string, key: string, label: string, summary: PerfSummary, cpuPerRequest: number | null): string[] {
  const pct = (x: number) => `${(x * 100).toFixed(1).padStart(5)}%`;
  const us = (x: number) => (cpuPerRequest ? ` ≈ ${(x * cpuPerRequest).toFixed(0).padStart(3)} µs/req` : '');
  const lines = [
    `${label}: ${summary.samples.toLocaleString('en-US')} samples of server CPU time (perf, cpu-clock)${cpuPerRequest ? `, ${cpuPerRequest.toFixed(0)} µs of CPU per request` : ''}`,
    ...summary.categories.map((c) => `  ${pct(c.share)}${us(c.share)}  ${c.name}`),
  ];
  const detail = [...lines, '', 'top symbols:', ...summary.top.map((t) => `  ${pct(t.share)}  ${t.dso.padEnd(20)} ${t.symbol}`)];
  writeFileSync(path.join(dir, `${key}.txt`), detail.join('\n') + '\n');
  return lines;
}
