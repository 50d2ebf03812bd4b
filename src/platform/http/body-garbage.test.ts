import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { bodyGarbage, COLLECT_EVERY_BYTES } from './body-garbage.js';

/** The young-generation collections that happen while `run` runs (and their entries are delivered). */
async function scavengesDuring(run: () => void): Promise<number> {
  let seen = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if ((entry.detail as { kind?: number } | undefined)?.kind === constants.NODE_PERFORMANCE_GC_MINOR) seen++;
  });
  observer.observe({ entryTypes: ['gc'] });
  run();
  await new Promise((resolve) => setTimeout(resolve, 50));
  observer.disconnect();
  return seen;
}

test('a body counter has the young generation scavenged after every COLLECT_EVERY_BYTES passed on', async () => {
  const passed = bodyGarbage();
  // Three pieces that add up to the threshold: the third one crosses it.
  const scavenges = await scavengesDuring(() => {
    passed(COLLECT_EVERY_BYTES / 2);
    passed(COLLECT_EVERY_BYTES / 4);
    passed(COLLECT_EVERY_BYTES / 4);
  });
  assert.ok(scavenges >= 1, 'a scavenge once 2 MiB were passed on');
  // Ten thresholds' worth: ten scavenges (at least: V8 may add its own).
  const ten = await scavengesDuring(() => {
    for (let i = 0; i < 10; i++) passed(COLLECT_EVERY_BYTES);
  });
  assert.ok(ten >= 10, `${ten} scavenges for 20 MiB passed on`);
});
