// BENCH_EVENTS=1 npm run bench: issue 14's figures.
// 1. Writes with the outbox: POST /v1/zoos, server CPU per request, against the build before
//    events (BENCH_BASELINE_REF, default the last commit before the outbox, built into the temp
//    dir; or BENCH_BASELINE_CLI), in interleaved rounds on fresh data dirs. Target: within 10%.
// 2. Fan-out: BENCH_STREAMS (1,000) concurrent SSE streams on one instance while BENCH_WRITE_RATE
//    (100) writes per second go on for BENCH_FANOUT_SECONDS (20): p99 from the event's commit
//    time to its arrival on a stream (< 250 ms), the server's RSS (< 300 MB).
// 3. Webhooks: BENCH_WEBHOOK_EVENTS (20,000) record.created events from bulk jobs to a local HTTPS
//    receiver: deliveries per second from the first to the last (≥ 1,000), none lost.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { Agent, fetch } from 'undici';
import { generate } from 'selfsigned';
import { bulkLoad, CLI, ROOT, startGatehouse, type Gatehouse } from './lib/gatehouse.js';
import { cpuSeconds, measure, type LoadSettings, type Sample } from './lib/load.js';
import { fmtInt, fmtMs, median } from './lib/report.js';

const num = (name: string, def: number) => (process.env[name] ? Number(process.env[name]) : def);

interface Check {
  what: string;
  value: string;
  target: string;
  met: boolean;
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024;
}

/** The build before events: BENCH_BASELINE_CLI, or BENCH_BASELINE_REF exported and compiled here. */
function baselineCli(work: string, log: (line: string) => void): string {
  if (process.env.BENCH_BASELINE_CLI) return path.resolve(process.env.BENCH_BASELINE_CLI);
  const ref = process.env.BENCH_BASELINE_REF ?? '60212a1';
  const dir = path.join(work, `baseline-${ref}`);
  mkdirSync(dir, { recursive: true });
  log(`  building ${ref} (the build before the outbox) in ${dir} ...`);
  execFileSync('sh', ['-c', `git -C "${ROOT}" archive ${ref} | tar -x -C "${dir}"`]);
  if (!existsSync(path.join(dir, 'node_modules'))) symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(dir, 'tsconfig.json')], { stdio: 'inherit' });
  return path.join(dir, 'dist/cli/main.js');
}

async function writesWithOutbox(work: string, settings: LoadSettings, rounds: number, log: (line?: string) => void, checks: Check[]) {
  log('1. POST /v1/zoos with the outbox against the build before events');
  const before = baselineCli(work, log);
  const servers: Record<string, Gatehouse> = {};
  for (const [name, cli] of [['events', CLI], ['before', before]] as const) {
    const dir = path.join(work, `post-${name}`);
    mkdirSync(dir, { recursive: true });
    servers[name] = await startGatehouse(dir, log, [], undefined, {}, cli);
  }
  const samples: Record<string, Sample[]> = { events: [], before: [] };
  for (let r = 0; r < rounds; r++)
    for (const name of ['events', 'before']) {
      const g = servers[name];
      const s = await measure(
        {
          url: g.server.url,
          method: 'POST',
          headers: { authorization: `Bearer ${g.token}`, accept: 'application/json', 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Bench Zoo', city: 'Berlin', founded: 1955 }),
          paths: ['/v1/zoos'],
        },
        settings,
        g.server.pid,
      );
      if (Object.keys(s.non2xx).length || s.errors) log(`  ${name}: non-2xx ${JSON.stringify(s.non2xx)}, errors ${s.errors}`);
      samples[name].push(s);
      log(`  round ${r + 1} ${name.padEnd(6)} ${fmtInt(s.rps)} req/s, p99 ${fmtMs(s.p99)}, server CPU ${s.serverCpuPerRequest?.toFixed(0)} µs/req (${s.serverCpu?.toFixed(2)} cores), loader ${s.loaderCpu.toFixed(2)} cores`);
    }
  const cpu = (name: string) => median(samples[name].map((s) => s.serverCpuPerRequest ?? NaN));
  // On a shared machine both sides drift together from round to round: the ratio within each
  // round (measured back to back) is steadier than the ratio of the two medians.
  const paired = median(samples.events.map((s, i) => (s.serverCpuPerRequest ?? NaN) / (samples.before[i].serverCpuPerRequest ?? NaN)));
  log(
    `  median server CPU per POST: ${cpu('events').toFixed(0)} µs with events, ${cpu('before').toFixed(0)} µs before (${(cpu('events') / cpu('before')).toFixed(2)}×); ` +
      `median of the per-round ratios ${paired.toFixed(2)}×`,
  );
  checks.push({ what: 'POST /v1/zoos server CPU/req, outbox on vs before events (median of per-round ratios)', value: `${paired.toFixed(2)}× (medians ${cpu('events').toFixed(0)} vs ${cpu('before').toFixed(0)} µs)`, target: '≤ 1.10×', met: paired <= 1.1 });
  for (const g of Object.values(servers)) {
    await g.agent.close();
    await g.server.stop();
  }
}

async function fanOut(work: string, log: (line?: string) => void, checks: Check[]) {
  const streams = num('BENCH_STREAMS', 1000);
  const rate = num('BENCH_WRITE_RATE', 100);
  const seconds = num('BENCH_FANOUT_SECONDS', 20);
  log(`2. fan-out: ${fmtInt(streams)} SSE streams, ${rate} writes/s for ${seconds} s`);
  const dir = path.join(work, 'fanout');
  mkdirSync(dir, { recursive: true });
  const g = await startGatehouse(dir, log);
  const ca = readFileSync(g.certFile, 'utf8');
  // The readers run in worker threads (BENCH_STREAM_WORKERS, 2), not on the thread that times the writes.
  const workerCount = Math.max(1, num('BENCH_STREAM_WORKERS', 2));
  const rssBefore = rssMiB(g.server.pid);
  const workers = Array.from({ length: workerCount }, (_, w) => {
    const count = Math.floor(streams / workerCount) + (w < streams % workerCount ? 1 : 0);
    return new Worker(new URL('./lib/sse-worker.mjs', import.meta.url), { workerData: { url: g.server.url, token: g.token, ca, count } });
  });
  const ask = (w: Worker, message: string, kind: string) =>
    new Promise<any>((resolve, reject) => {
      const on = (m: any) => m.kind === kind && (w.off('message', on), resolve(m));
      w.on('message', on);
      w.once('error', reject);
      if (message) w.postMessage(message);
    });
  await Promise.all(workers.map((w) => ask(w, '', 'open')));
  const receivedNow = async () => (await Promise.all(workers.map((w) => ask(w, 'count', 'count')))).reduce((a, m) => a + m.received, 0);
  log(`  ${fmtInt(streams)} streams open in ${workerCount} worker threads; server RSS ${rssBefore.toFixed(0)} → ${rssMiB(g.server.pid).toFixed(0)} MiB`);
  const writeAgent = new Agent({ connect: { ca }, connections: 8 });
  const total = rate * seconds;
  const cpuBefore = cpuSeconds(g.server.pid);
  const started = Date.now();
  let peakRss = 0;
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    writes.push(
      fetch(`${g.server.url}/v1/zoos`, {
        method: 'POST',
        headers: { authorization: `Bearer ${g.token}`, accept: 'application/json', 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Fan ${i}`, city: 'Berlin', founded: 1900 }),
        dispatcher: writeAgent,
      }).then((r) => r.text()),
    );
    if (i % rate === 0) peakRss = Math.max(peakRss, rssMiB(g.server.pid));
  }
  await Promise.all(writes);
  const deadline = Date.now() + 10_000;
  while ((await receivedNow()) < total * streams && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  peakRss = Math.max(peakRss, rssMiB(g.server.pid));
  const cpu = (cpuSeconds(g.server.pid) ?? NaN) - (cpuBefore ?? NaN);
  const results = await Promise.all(workers.map((w) => ask(w, 'stop', 'done')));
  await Promise.all(workers.map((w) => w.terminate()));
  const received = results.reduce((a, m) => a + m.received, 0);
  const readerCpu = results.reduce((a, m) => a + (m.cpu.user + m.cpu.system) / 1e6, 0);
  const sorted = Float64Array.from(results.flatMap((m) => [...m.delays])).sort();
  const p = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  log(
    `  ${fmtInt(received)} of ${fmtInt(total * streams)} deliveries; commit → stream p50 ${fmtMs(p(0.5))}, p99 ${fmtMs(p(0.99))}, max ${fmtMs(sorted[sorted.length - 1])}; ` +
      `server RSS peak ${peakRss.toFixed(0)} MiB; server CPU ${(cpu / ((Date.now() - started) / 1000)).toFixed(2)} cores; readers' CPU ${readerCpu.toFixed(1)} s in all; load average ${os.loadavg()[0].toFixed(1)}`,
  );
  checks.push({ what: `${fmtInt(streams)} SSE streams, ${rate} writes/s: commit → delivery p99`, value: `${fmtMs(p(0.99))} ms`, target: '< 250 ms', met: p(0.99) < 250 && received === total * streams });
  checks.push({ what: `${fmtInt(streams)} SSE streams: server RSS`, value: `${peakRss.toFixed(0)} MiB`, target: '< 300 MB', met: peakRss * 1.048576 < 300 });
  await writeAgent.close();
  await g.agent.close();
  await g.server.stop();
}

async function webhooks(work: string, log: (line?: string) => void, checks: Check[]) {
  const events = num('BENCH_WEBHOOK_EVENTS', 20_000);
  log(`3. webhooks: ${fmtInt(events)} events to a local HTTPS receiver`);
  const dir = path.join(work, 'webhooks');
  mkdirSync(dir, { recursive: true });
  const pems = await generate([{ name: 'commonName', value: 'bench receiver' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
  } as never);
  const caFile = path.join(dir, 'receiver.pem');
  writeFileSync(caFile, pems.cert);
  const seen = new Set<string>();
  let requests = 0;
  let first = 0;
  let last = 0;
  const receiver = https.createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    req.resume();
    req.on('end', () => {
      requests++;
      const id = String(req.headers['webhook-id']);
      if (!seen.has(id)) {
        seen.add(id);
        last = Date.now();
        if (!first) first = last;
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;
  process.env.NODE_EXTRA_CA_CERTS = caFile; // the gatehouse child inherits it
  const g = await startGatehouse(dir, log, [], undefined, { events: { webhooks: { allowPrivateNetworks: true } } });
  // The bench client has no admin scope: add the webhook with the CLI, as an operator would.
  const added = execFileSync(process.execPath, [CLI, 'webhook', 'add', `https://127.0.0.1:${port}/hook`, '--events', 'record.created', '--config', g.configFile, '--data-dir', g.dataDir], {
    encoding: 'utf8',
    env: { ...process.env, LOG_LEVEL: 'warn' },
  });
  JSON.parse(added);
  const cpuBefore = cpuSeconds(g.server.pid);
  const loadStarted = Date.now();
  await bulkLoad(g, events, 1000, 4, cpuSeconds, () => undefined);
  log(`  ${fmtInt(events)} zoos bulk-loaded in ${((Date.now() - loadStarted) / 1000).toFixed(1)} s`);
  const deadline = Date.now() + 120_000;
  while (seen.size < events && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const cpu = (cpuSeconds(g.server.pid) ?? NaN) - (cpuBefore ?? NaN);
  const rate = seen.size / Math.max((last - first) / 1000, 0.001);
  log(`  ${fmtInt(seen.size)} of ${fmtInt(events)} events delivered (${fmtInt(requests)} requests) in ${((last - first) / 1000).toFixed(1)} s: ${fmtInt(rate)} deliveries/s; server CPU ${cpu.toFixed(1)} s over load + delivery`);
  checks.push({ what: 'webhook deliveries/s to a local HTTPS receiver, none lost', value: `${fmtInt(rate)}/s, ${fmtInt(seen.size)}/${fmtInt(events)}`, target: '≥ 1,000/s, all', met: rate >= 1000 && seen.size === events });
  await g.agent.close();
  await g.server.stop();
  receiver.close();
}

export async function eventsBench(work: string, settings: LoadSettings, rounds: number, log: (line?: string) => void, resultsDir: string): Promise<void> {
  const checks: Check[] = [];
  const only = process.env.BENCH_EVENTS_ONLY ? new Set(process.env.BENCH_EVENTS_ONLY.split(',')) : null;
  if (!only || only.has('post')) await writesWithOutbox(work, settings, rounds, log, checks);
  if (!only || only.has('fanout')) await fanOut(work, log, checks);
  if (!only || only.has('webhooks')) await webhooks(work, log, checks);
  log();
  const table = ['| Figure | Measured | Target | Verdict |', '|---|---|---|---|', ...checks.map((c) => `| ${c.what} | ${c.value} | ${c.target} | ${c.met ? 'met' : 'MISSED'} |`)].join('\n');
  log(table);
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(path.join(resultsDir, 'events-latest.md'), `Measured ${new Date().toISOString()} on ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), node ${process.version}.\n\n${table}\n`);
}
