import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Secret, TOTP } from 'otpauth';
import { matchingTotpStep, totpStep } from './factors.js';

// RFC 6238's test vector (SHA-1, the ASCII secret "12345678901234567890", T = 59 s → 94287082,
// whose last 6 digits a 6-digit code is), and one step of drift each way, no more.

const secret = Secret.fromLatin1('12345678901234567890').base32;

test('RFC 6238 vector: the code of T = 59 s is 287082, at step 1', () => {
  assert.equal(matchingTotpStep(secret, '287082', 59_000), 1);
  assert.equal(totpStep(59_000), 1);
});

test('one step of drift each way is accepted, two are not; a wrong code never', () => {
  const now = 1_700_000_000_000;
  const at = (ms: number) => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: ms });
  assert.equal(matchingTotpStep(secret, at(now - 30_000), now), totpStep(now) - 1);
  assert.equal(matchingTotpStep(secret, at(now + 30_000), now), totpStep(now) + 1);
  assert.equal(matchingTotpStep(secret, at(now - 60_000), now), null);
  assert.equal(matchingTotpStep(secret, at(now + 60_000), now), null);
  assert.equal(matchingTotpStep(secret, '12345', now), null);
});
