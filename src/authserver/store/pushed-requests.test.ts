import assert from 'node:assert/strict';
import type { Store } from '../../platform/store/store.js';
import { migrateCore } from '../../platform/store/migrations.js';
import { write } from '../../platform/store/write-path.js';
import { findPushedRequest, insertPushedRequest, openPushedRequest, purgePushedRequests, rewritePushedParams, usePushedRequest } from './pushed-requests.js';
import { testOnEachEngine } from '../../../test/helpers/stores.js';

// A pushed authorization request (RFC 9126) is opened once, used once and never past its expiry,
// each a single conditional statement: of requests racing for one, exactly one wins.

async function singleUse(store: Store) {
  await migrateCore(store);
  const now = Date.now();
  const row = (id: string, expiresAt: number) => ({ id, client_id: 'rp', params: '[["client_id","rp"]]', created_at: now, expires_at: expiresAt, opened_at: null, used_at: null });
  await write(store, (tx) => insertPushedRequest(tx, row('p1', now + 60_000)));
  await write(store, (tx) => insertPushedRequest(tx, row('p2', now - 1)));

  const opened = await Promise.all([1, 2, 3].map(() => write(store, (tx) => openPushedRequest(tx, 'p1', now, now + 1_800_000))));
  assert.equal(opened.filter(Boolean).length, 1, 'opened once');
  assert.equal(Number((await findPushedRequest(store, 'p1'))!.expires_at), now + 1_800_000, 'it lasts for the interaction from then on');
  assert.equal(await write(store, (tx) => openPushedRequest(tx, 'p2', now, now + 1_800_000)), false, 'an expired request is not opened');

  assert.equal(await write(store, (tx) => rewritePushedParams(tx, 'p1', '[["client_id","rp"],["scope","a"]]', now)), true);
  assert.equal((await findPushedRequest(store, 'p1'))!.params, '[["client_id","rp"],["scope","a"]]');

  const used = await Promise.all([1, 2, 3].map(() => write(store, (tx) => usePushedRequest(tx, 'p1', now))));
  assert.equal(used.filter(Boolean).length, 1, 'used once, whoever races');
  assert.equal(await write(store, (tx) => rewritePushedParams(tx, 'p1', '[]', now)), false, 'a used request does not change');
  assert.equal(await write(store, (tx) => usePushedRequest(tx, 'p2', now)), false, 'an expired request is not used');
  assert.equal(await findPushedRequest(store, 'nope'), null);

  assert.equal(await purgePushedRequests(store, now), 1, 'the expired one goes');
  assert.ok(await findPushedRequest(store, 'p1'), 'the other stays until it expires');
}

testOnEachEngine('pushed authorization requests: opened once, used once, never past expiry', singleUse);
