import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextMailAttemptAt } from './dispatcher.js';

test('retries: 10 s, 1 min, 5 min, 30 min, 2 h, then every 2 h, until 24 h after the mail was queued; then failed', () => {
  const queued = 1_000_000;
  const waits: number[] = [];
  let now = queued;
  for (let attempt = 1; ; attempt++) {
    const next = nextMailAttemptAt(attempt, queued, now);
    if (next === null) break;
    waits.push(next - now);
    now = next;
  }
  assert.deepEqual(waits.slice(0, 7), [10_000, 60_000, 300_000, 1_800_000, 7_200_000, 7_200_000, 7_200_000]);
  assert.ok(now - queued <= 24 * 3_600_000);
  assert.ok(now + 7_200_000 - queued > 24 * 3_600_000, 'the last retry is the last one inside 24 h');
});
