import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeDuration } from './views.js';

test('durations in words: whole units exactly, within 1% as the whole unit, otherwise rounded up', () => {
  const cases: [number, string][] = [
    [1, '1 second'],
    [30, '30 seconds'],
    [60, '1 minute'],
    [100, '100 seconds'],
    [900, '15 minutes'],
    [847, '15 minutes'],
    [3600, '1 hour'],
    [3599, '1 hour'],
    [5400, '90 minutes'],
    [86400, '1 day'],
    [86399, '1 day'],
    [86401.4, '1 day'],
    [100_000, '28 hours'],
    [7_776_000, '90 days'],
    [200_000, '3 days'],
    [0, '0 seconds'],
  ];
  for (const [seconds, words] of cases) assert.equal(describeDuration(seconds), words, String(seconds));
});
