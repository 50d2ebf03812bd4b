import assert from 'node:assert/strict';
import type { Store } from '../../platform/store/store.js';
import { migrateCore } from '../../platform/store/migrations.js';
import { write } from '../../platform/store/write-path.js';
import { insertFactor, listFactorsOfUser, markChallengeUsed, purgeChallenges, replaceRecoveryCodes, useRecoveryCode, useTotpStep, countUnusedRecoveryCodes } from './factors.js';
import { testOnEachEngine } from '../../../test/helpers/stores.js';

// The second factors' single-use rules are single statements: a TOTP step only forward, a
// recovery code and a WebAuthn challenge once, however many requests race for them.

async function singleUse(store: Store) {
  await migrateCore(store);
  const now = Date.now();
  await write(store, (tx) =>
    insertFactor(tx, { id: 'f1', userId: 'u1', kind: 'totp', label: 'Authenticator app', secret: 'sealed', lastStep: 100, credentialId: null, publicKey: null, counter: null, transports: [], createdAt: now }),
  );
  assert.equal(await write(store, (tx) => useTotpStep(tx, 'f1', 100, now)), false, 'the step used at set-up');
  assert.equal(await write(store, (tx) => useTotpStep(tx, 'f1', 99, now)), false, 'an earlier step');
  const raced = await Promise.all([101, 101, 101].map((step) => write(store, (tx) => useTotpStep(tx, 'f1', step, now))));
  assert.deepEqual(raced.filter(Boolean).length, 1, 'one of three racing requests with one code');
  assert.equal((await listFactorsOfUser(store, 'u1'))[0].lastStep, 101);

  await write(store, (tx) => replaceRecoveryCodes(tx, 'u1', ['h1', 'h2'], now));
  assert.equal(await write(store, (tx) => useRecoveryCode(tx, 'u2', 'h1', now)), false, "another user's code");
  const codes = await Promise.all([1, 2, 3].map(() => write(store, (tx) => useRecoveryCode(tx, 'u1', 'h1', now))));
  assert.equal(codes.filter(Boolean).length, 1);
  assert.equal(await countUnusedRecoveryCodes(store, 'u1'), 1);

  // A used challenge is recorded once: the second use is a replay, until the record expires and is purged.
  assert.equal(await write(store, (tx) => markChallengeUsed(tx, { hash: 'c1', purpose: 'signin', userId: null, expiresAt: now + 60_000 })), true);
  assert.equal(await write(store, (tx) => markChallengeUsed(tx, { hash: 'c1', purpose: 'signin', userId: null, expiresAt: now + 60_000 })), false, 'used once');
  assert.equal(await write(store, (tx) => markChallengeUsed(tx, { hash: 'c2', purpose: 'register', userId: 'u1', expiresAt: now - 1 })), true);
  assert.equal(await purgeChallenges(store, now), 1, 'the expired record goes');
}

testOnEachEngine('second factors: a TOTP step, a recovery code and a challenge are each used once', singleUse);
