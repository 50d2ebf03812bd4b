// Summarizes V8 CPU profiles (node --cpu-prof; `BENCH_PROFILE=DIR npm run bench` writes one for
// the gatehouse process): the functions with the most self time and the most total time.
// Usage: node --import tsx bench/profile-summary.ts FILE.cpuprofile [top=25]
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node --import tsx bench/profile-summary.ts FILE.cpuprofile [top]');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const where = (n: Node) => {
  const { functionName, url, lineNumber } = n.callFrame;
  const short = url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '~/').replace(path.resolve(import.meta.dirname, '..') + '/', '');
  return `${functionName || '(anonymous)'} ${short ? `${short}:${lineNumber + 1}` : ''}`.trim();
};

const selfTime = new Map<string, number>();
const totalTime = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  total += dt;
  const leaf = byId.get(id)!;
  selfTime.set(where(leaf), (selfTime.get(where(leaf)) ?? 0) + dt);
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const key = where(byId.get(cur)!);
    if (seen.has(key)) continue; // recursion counts once
    seen.add(key);
    totalTime.set(key, (totalTime.get(key) ?? 0) + dt);
  }
});

const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title} (of ${(total / 1e6).toFixed(1)} s sampled)`);
  for (const [k, v] of [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
};
show('self time', selfTime);
show('total time (inclusive)', totalTime);
