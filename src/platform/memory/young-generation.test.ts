import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MODULE = fileURLToPath(new URL('./young-generation.ts', import.meta.url));
const MiB = 1024 * 1024;

/**
 * Runs an allocating workload over many turns of the event loop, like a server's requests, in a
 * fresh node process, with or without the cap, and reports the largest young generation it saw.
 * A child process: V8 flags would outlive the test.
 */
function workload(cap: number | null, nodeArgs: string[] = [], startsWorker = false): { active: boolean | null; largest: number } {
  const script = `
    import { Worker } from 'node:worker_threads';
    import { capYoungGeneration, youngGenerationBytes } from ${JSON.stringify(MODULE)};
    const cap = ${cap === null ? 'null' : `capYoungGeneration(${cap})`};
    let largest = youngGenerationBytes();
    // A tenth of what each turn allocates lives on for a while, as a server's caches and
    // in-flight requests do; the rest is garbage at once.
    const ring = new Array(100000);
    let kept = 0;
    for (let turn = 0; turn < 400; turn++) {
      if (${startsWorker} && turn === 150) new Worker('setTimeout(() => {}, 200)', { eval: true }).unref();
      for (let i = 0; i < 20000; i++) {
        const o = { n: i, s: 'x' + i };
        if (i % 10 === 0) ring[kept++ % ring.length] = o;
      }
      largest = Math.max(largest, youngGenerationBytes());
      await new Promise((resolve) => setImmediate(resolve));
    }
    process.stdout.write(JSON.stringify({ active: cap === null ? null : cap.active, largest }));
  `;
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const out = execFileSync(process.execPath, [...nodeArgs, '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', env, timeout: 60_000 });
  return JSON.parse(out) as { active: boolean | null; largest: number };
}

test('without the cap the workload grows the young generation beyond 2 MiB semi-spaces', () => {
  const { largest } = workload(null);
  assert.ok(largest > 4 * MiB, `young generation ${largest / MiB} MiB`);
});

test('capYoungGeneration(2) keeps both semi-spaces together at 4 MiB at most under the same workload', () => {
  const { active, largest } = workload(2);
  assert.equal(active, true);
  assert.ok(largest <= 4 * MiB, `young generation ${largest / MiB} MiB`);
  assert.ok(largest >= 4 * MiB, `it still grows to the cap (${largest / MiB} MiB)`);
});

test('a worker thread started under load does not lift the cap for good (V8 resets the growth factor when it starts an isolate)', () => {
  const { active, largest } = workload(2, [], true);
  assert.equal(active, true);
  // A collection between the worker's start and its 'online' may still double it once; without
  // the factor set again, the young generation would grow on to node's 16 MiB semi-spaces.
  assert.ok(largest <= 8 * MiB, `young generation ${largest / MiB} MiB`);
});

test('the operator’s own --max-semi-space-size wins: the cap steps aside', () => {
  const { active, largest } = workload(2, ['--max-semi-space-size=4']);
  assert.equal(active, false);
  assert.ok(largest > 4 * MiB && largest <= 8 * MiB, `young generation ${largest / MiB} MiB (node's flag: 4 MiB semi-spaces)`);
});
