// Memory under load (issue 15, BENCH_MEMORY=1): gatehouse's resident set after 1,000,000 mixed
// requests (BENCH_MEMORY_REQUESTS), in three rounds: it must stay under 150 MB and not grow from
// one round to the next (a leak grows with the requests served; caches and pools reach their
// size in the first round). The mix is what a busy deployment answers: GET by id, filtered lists,
// creates and client_credentials tokens.
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { basicAuth, CITIES, CLIENT_ID, CLIENT_SECRET, exportZoos, seedZoos, startGatehouse, TOKEN_REQUEST_BODY } from './lib/gatehouse.js';
import { measure, type LoadSettings, type Workload } from './lib/load.js';
import { fmtInt, type Check } from './lib/report.js';

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024;
}

/** Where the resident set is: the node binary's pages, other mapped files, anonymous memory (V8's heap, malloc). */
function rssParts(pid: number): string {
  const parts = { binary: 0, files: 0, anonymous: 0 };
  let name = '';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) name = mapping[1];
    else if (line.startsWith('Rss:')) {
      const kib = Number(line.split(/\s+/)[1]);
      if (name === process.execPath || name.endsWith('/node')) parts.binary += kib;
      else if (name.startsWith('/')) parts.files += kib;
      else parts.anonymous += kib;
    }
  }
  const f = (kib: number) => `${(kib / 1024).toFixed(0)} MiB`;
  return `node binary ${f(parts.binary)}, other files ${f(parts.files)}, anonymous ${f(parts.anonymous)}`;
}

export async function memoryBench(work: string, settings: LoadSettings, log: (line?: string) => void, resultsDir: string): Promise<Check[]> {
  const total = Math.max(10_000, Number(process.env.BENCH_MEMORY_REQUESTS ?? 1_000_000));
  const rounds = 3;
  // BENCH_MEMORY_NODE_ARGS: node options of the server (V8 flags NODE_OPTIONS does not allow).
  const nodeArgs = (process.env.BENCH_MEMORY_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const g = await startGatehouse(path.join(work), log, nodeArgs);
  if (nodeArgs.length) log(`  server node options: ${nodeArgs.join(' ')}`);
  await seedZoos(g, 10_000, () => undefined);
  const zoos = await exportZoos(g);
  const bearer = { authorization: `Bearer ${g.token}`, accept: 'application/json' };
  const ids = zoos.slice(0, 1000).map((z) => String(z.id));
  // Each workload's share of the requests: 40% by id, 30% lists, 20% creates, 10% tokens.
  const mix: { share: number; work: Workload }[] = [
    { share: 0.4, work: { url: g.server.url, method: 'GET', headers: bearer, paths: ids.map((id) => `/v1/zoos/${id}`) } },
    { share: 0.3, work: { url: g.server.url, method: 'GET', headers: bearer, paths: CITIES.map((c) => `/v1/zoos?city=${encodeURIComponent(c)}&limit=20`) } },
    { share: 0.2, work: { url: g.server.url, method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Memory', city: CITIES[0], founded: 1950 }), paths: ['/v1/zoos'] } },
    {
      share: 0.1,
      work: {
        url: g.server.url,
        method: 'POST',
        headers: { authorization: basicAuth(CLIENT_ID, CLIENT_SECRET), 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: TOKEN_REQUEST_BODY,
        paths: ['/oauth/token'],
      },
    },
  ];
  const start = rssMiB(g.server.pid);
  log(`  gatehouse seeded with 10,000 zoos: RSS ${start.toFixed(0)} MiB; ${fmtInt(total)} mixed requests in ${rounds} rounds`);
  const perRound = total / rounds;
  const after: number[] = [];
  let served = 0;
  for (let round = 1; round <= rounds; round++) {
    for (const { share, work } of mix) {
      let left = perRound * share;
      while (left > 0) {
        // Short measurements (no warm-up) until this workload's share of the round is served.
        const s = await measure(work, { ...settings, warmup: 0, duration: Math.min(30, Math.max(2, Math.ceil(left / 4000))) }, g.server.pid);
        const answered = s.ok + Object.values(s.non2xx).reduce((a, b) => a + b, 0);
        if (answered === 0) throw new Error(`no answers from ${work.method} ${work.paths[0]}`);
        left -= answered;
        served += answered;
      }
    }
    after.push(rssMiB(g.server.pid));
    log(`  round ${round}/${rounds}: ${fmtInt(served)} requests served; server RSS ${after[round - 1].toFixed(0)} MiB (${rssParts(g.server.pid)}); load average ${os.loadavg()[0].toFixed(1)}`);
  }
  await g.agent.close();
  await g.server.stop();
  const last = after[after.length - 1];
  const growth = last - after[0];
  const checks: Check[] = [
    { what: `server RSS after ${fmtInt(served)} mixed requests`, issue: 'issue 15', value: `${last.toFixed(0)} MiB`, target: '< 150 MB', met: last * 1.048576 < 150 },
    // Stable: the last round adds no more than a few MiB (allocator noise) to the first's.
    { what: 'server RSS growth from round 1 to round 3', issue: 'issue 15', value: `${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MiB`, target: '≤ +5 MiB', met: growth <= 5 },
  ];
  writeFileSync(path.join(resultsDir, 'memory.json'), JSON.stringify({ date: new Date().toISOString(), requests: served, rssMiB: { start, afterRounds: after }, checks }, null, 2) + '\n');
  return checks;
}
