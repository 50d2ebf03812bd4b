import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextAttemptAt } from './delivery.js';
import { isPrivateAddress, webhookUrlProblem } from './address.js';

test('retries: 5 s, 30 s, 2 min, 10 min, 1 h, then hourly, until 24 h after the first attempt; then failed', () => {
  const first = 1_000_000;
  const waits: number[] = [];
  let now = first;
  for (let attempt = 1; ; attempt++) {
    const next = nextAttemptAt(attempt, first, now);
    if (next === null) break;
    waits.push(next - now);
    now = next;
  }
  assert.deepEqual(waits.slice(0, 6), [5_000, 30_000, 120_000, 600_000, 3_600_000, 3_600_000]);
  assert.ok(now - first <= 24 * 3_600_000);
  assert.ok(now + 3_600_000 - first > 24 * 3_600_000, 'the last retry is the last one inside 24 h');
  assert.equal(waits.length, 5 + 22); // 5 backoff steps (≈ 0.2 h) and 22 hourly ones fit in 24 h
});

test('the SSRF guard: non-public addresses, https only, no credentials', () => {
  for (const a of ['127.0.0.1', '10.2.3.4', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '224.0.0.1'])
    assert.equal(isPrivateAddress(a), true, a);
  for (const a of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '8.8.8.8']) assert.equal(isPrivateAddress(a), false, a);
  assert.equal(webhookUrlProblem('https://hooks.example/x', false), null);
  assert.match(webhookUrlProblem('http://hooks.example/x', false)!, /https/);
  assert.match(webhookUrlProblem('https://user:pw@hooks.example/x', false)!, /user name or password/);
  assert.match(webhookUrlProblem('https://127.0.0.1/x', false)!, /loopback or private/);
  assert.match(webhookUrlProblem('https://[::1]:8443/x', false)!, /loopback or private/);
  assert.match(webhookUrlProblem('https://api.localhost/x', false)!, /loopback or private/);
  assert.equal(webhookUrlProblem('https://127.0.0.1/x', true), null);
  assert.match(webhookUrlProblem('not a url', false)!, /absolute https URL/);
});
