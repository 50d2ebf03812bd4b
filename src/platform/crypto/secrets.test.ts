import { test } from 'node:test';
import assert from 'node:assert/strict';
import { constantTimeEqual, newTimeOrderedId, randomSecret, sha256 } from './secrets.js';

test('randomSecret: the requested entropy, base64url, never repeated across pool refills', () => {
  const seen = new Set<string>();
  // 1,000 × 32 bytes crosses the 4 KiB pool boundary several times.
  for (let i = 0; i < 1000; i++) {
    const s = randomSecret(32);
    assert.match(s, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(!seen.has(s), 'a secret was handed out twice');
    seen.add(s);
  }
  // Odd sizes straddle the end of the pool; large ones bypass it.
  for (const n of [12, 18, 31, 33, 1000, 5000]) assert.equal(Buffer.from(randomSecret(n), 'base64url').length, n);
});

test('randomSecret: bytes are not biased towards zero (pool zeroing never leaks into output)', () => {
  const bytes = Buffer.concat(Array.from({ length: 512 }, () => Buffer.from(randomSecret(32), 'base64url')));
  const zeros = bytes.filter((b) => b === 0).length;
  // 16,384 bytes: about 64 zeros expected; a leak of zeroed pool bytes would give thousands.
  assert.ok(zeros < 200, `${zeros} zero bytes`);
});

test('sha256 and constantTimeEqual', () => {
  assert.equal(sha256('abc'), 'ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
  assert.equal(constantTimeEqual('abc', 'abc'), true);
  assert.equal(constantTimeEqual('abc', 'abd'), false);
  assert.equal(constantTimeEqual('abc', 'abcd'), false);
});

test('newTimeOrderedId: UUIDv7, unique, in the order they were made, with random bits', () => {
  const ids = Array.from({ length: 5000 }, () => newTimeOrderedId());
  for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(new Set(ids).size, ids.length);
  assert.deepEqual([...ids].sort(), ids, 'sorted as made (many share a millisecond)');
  const ms = parseInt(ids[0].replaceAll('-', '').slice(0, 12), 16);
  assert.ok(Math.abs(ms - Date.now()) < 5000, 'the first 48 bits are the time in ms');
  assert.equal(new Set(ids.map((id) => id.slice(-12))).size, ids.length, 'the last 48 bits are random');
});
