import assert from 'node:assert/strict';
import type { Store } from '../../platform/store/store.js';
import { migrateCore } from '../../platform/store/migrations.js';
import { write } from '../../platform/store/write-path.js';
import { claimDeviceCode, decideDeviceCode, findDeviceCode, insertDeviceCode, purgeDeviceCodes, recordPoll, type DeviceCodeRow } from './device-codes.js';
import { testOnEachEngine } from '../../../test/helpers/stores.js';

// A device request's changes are single conditional statements: a user code is drawn once, a poll
// keeps the pace or slows the client (the interval stored), a decision and a redemption happen
// once however many requests race for them.

const row = (hash: string, userCodeHash: string, now: number): DeviceCodeRow => ({
  hash,
  user_code_hash: userCodeHash,
  client_id: 'tv',
  scope: 'zoos:read',
  scope_given: 1,
  poll_interval: 5,
  last_polled_at: null,
  expires_at: now + 600_000,
  created_at: now,
  decision: null,
  subject: null,
  granted_scope: null,
  grant_expires_at: null,
  auth_time: null,
  sid: null,
  amr: null,
  used_at: null,
  grant_id: null,
  resources: null,
});

async function onceEach(store: Store) {
  await migrateCore(store);
  const now = Date.now();
  assert.equal(await write(store, (tx) => insertDeviceCode(tx, row('d1', 'u1', now))), true);
  assert.equal(await write(store, (tx) => insertDeviceCode(tx, row('d2', 'u1', now))), false, 'a user code taken');

  assert.equal(await write(store, (tx) => recordPoll(tx, 'd1', now, 5)), true, 'the first poll');
  assert.equal(await write(store, (tx) => recordPoll(tx, 'd1', now + 4_000, 5)), false, 'too early: slow_down');
  assert.equal((await findDeviceCode(store, 'd1'))!.poll_interval, 10);
  assert.equal(await write(store, (tx) => recordPoll(tx, 'd1', now + 9_000, 5)), false, 'within the new interval');
  assert.equal(await write(store, (tx) => recordPoll(tx, 'd1', now + 24_000, 5)), true, 'after it');

  const decision = { decision: 'approved', subject: 'user:1', granted_scope: 'zoos:read', grant_expires_at: now + 3_600_000, auth_time: now, sid: null, amr: null };
  const decided = await Promise.all([1, 2, 3].map(() => write(store, (tx) => decideDeviceCode(tx, 'd1', decision, now))));
  assert.equal(decided.filter(Boolean).length, 1, 'decided once');
  const claimed = await Promise.all([1, 2, 3].map((i) => write(store, (tx) => claimDeviceCode(tx, 'd1', `g${i}`, now))));
  assert.equal(claimed.filter(Boolean).length, 1, 'redeemed once');

  await write(store, (tx) => insertDeviceCode(tx, { ...row('d3', 'u3', now), expires_at: now - 1 }));
  assert.equal(await write(store, (tx) => decideDeviceCode(tx, 'd3', decision, now)), false, 'expired: no decision');
  assert.equal(await purgeDeviceCodes(store, now), 1);
}

testOnEachEngine('device codes: a user code, a decision and a redemption once each; the poll interval in the row', onceEach);
