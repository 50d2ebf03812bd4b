import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { boundHeapGrowth, HEAP_GROWING_PERCENT } from './heap.js';

const run = promisify(execFile);
const HEAP_MODULE = fileURLToPath(new URL('./heap.ts', import.meta.url));

/**
 * A child process that holds ~45 MiB of live objects and then keeps promoting garbage to the old
 * generation (objects that survive two scavenges, then die), as a server's requests in flight
 * do; it reports the most the old space held and the live size after a forced full collection.
 */
const WORKLOAD = `
import v8 from 'node:v8';
import vm from 'node:vm';
if (process.env.BOUND === '1') { const { boundHeapGrowth } = await import(process.env.HEAP_MODULE); boundHeapGrowth(); }
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
const live = [];
for (let i = 0; i < 300000; i++) live.push({ i, s: 'live' + i, a: [i, i + 1] });
const ring = new Array(150000);
let k = 0, most = 0;
const oldUsed = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_used_size;
gc(); // the next limit is set from the whole live set
const until = Date.now() + 4000;
while (Date.now() < until && k < 12000000) {
  for (let r = 0; r < 20000; r++) ring[k++ % ring.length] = { k, s: 'x' + k, b: [k] };
  most = Math.max(most, oldUsed());
}
gc();
console.log(JSON.stringify({ most, live: oldUsed(), promoted: k, kept: live.length }));
`;

async function workload(bound: boolean): Promise<{ most: number; live: number }> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', WORKLOAD], {
    env: { ...process.env, BOUND: bound ? '1' : '0', HEAP_MODULE },
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split('\n').pop()!) as { most: number; live: number };
}

const MiB = 2 ** 20;

test('with the bound the old generation is collected before it holds much more than its live data; without it, it grows (Node 20)', async (t) => {
  const [bounded, free] = await Promise.all([workload(true), workload(false)]);
  // V8 starts marking at live × (1 + percent / 100) and the workload allocates on while it marks:
  // measured here ≈ 2× the live size with the bound, ≈ 6× without.
  const ceiling = 3 * bounded.live;
  assert.ok(bounded.most < ceiling, `bounded: old space held ${(bounded.most / MiB).toFixed(0)} MiB, live ${(bounded.live / MiB).toFixed(0)} MiB`);
  // The control: the same workload under V8's own factor goes past that ceiling, so the assertion above can fail.
  // Node 24's V8 keeps this workload's old space near its live size by itself (53 MiB for 46 live):
  // there the bound changes nothing, and stays because it costs nothing.
  if (Number(process.versions.node.split('.')[0]) >= 24 && free.most <= ceiling)
    return void t.diagnostic(`${process.version}: V8's own factor stays below the ceiling too (${(free.most / MiB).toFixed(0)} MiB for ${(free.live / MiB).toFixed(0)} MiB live)`);
  assert.ok(free.most > ceiling, `unbounded: old space held ${(free.most / MiB).toFixed(0)} MiB, live ${(free.live / MiB).toFixed(0)} MiB`);
});

test("node's own --heap-growing-percent, either spelling, is left in force", () => {
  assert.equal(boundHeapGrowth(['--heap-growing-percent=0']), null);
  assert.equal(boundHeapGrowth(['--max-old-space-size=512', '--heap_growing_percent=50']), null);
  assert.equal(boundHeapGrowth(['--max-semi-space-size=8']), HEAP_GROWING_PERCENT);
});
