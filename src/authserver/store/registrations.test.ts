import assert from 'node:assert/strict';
import type { Store } from '../../platform/store/store.js';
import { migrateCore } from '../../platform/store/migrations.js';
import { write } from '../../platform/store/write-path.js';
import {
  deleteClientRegistration,
  deleteRegistrationToken,
  findClientRegistration,
  insertClientRegistration,
  insertRegistrationToken,
  listLiveRegistrationTokens,
  purgeRegistrationTokens,
  registeredClientIds,
  spendRegistrationToken,
  updateClientRegistration,
} from './registrations.js';
import { testOnEachEngine } from '../../../test/helpers/stores.js';

// An initial access token's uses are spent one statement at a time: however many registrations
// race, a token of N uses makes at most N clients; an expired or revoked one none.

async function tokensAndRegistrations(store: Store) {
  await migrateCore(store);
  const now = Date.now();
  await write(store, (tx) => insertRegistrationToken(tx, { id: 't1', hash: 'h1', created_by: null, created_at: now, expires_at: now + 60_000, uses_left: 2 }));
  await write(store, (tx) => insertRegistrationToken(tx, { id: 't2', hash: 'h2', created_by: 'user:x', created_at: now - 120_000, expires_at: now - 60_000, uses_left: 5 }));
  const raced = await Promise.all([1, 2, 3, 4, 5].map(() => write(store, (tx) => spendRegistrationToken(tx, 't1', now))));
  assert.equal(raced.filter(Boolean).length, 2, 'two uses, five racing registrations');
  assert.equal(await write(store, (tx) => spendRegistrationToken(tx, 't2', now)), false, 'expired');
  assert.deepEqual((await listLiveRegistrationTokens(store, now)).map((t) => t.id), [], 'used up and expired are not live');
  await write(store, (tx) => insertRegistrationToken(tx, { id: 't3', hash: 'h3', created_by: null, created_at: now, expires_at: now + 60_000, uses_left: 1 }));
  assert.deepEqual((await listLiveRegistrationTokens(store, now)).map((t) => [t.id, Number(t.uses_left)]), [['t3', 1]]);
  assert.equal(await write(store, (tx) => deleteRegistrationToken(tx, 't3')), true);
  assert.equal(await write(store, (tx) => spendRegistrationToken(tx, 't3', now)), false, 'revoked');
  assert.equal(await write(store, (tx) => deleteRegistrationToken(tx, 't3')), false);
  assert.equal(await purgeRegistrationTokens(store, now), 2, 'the used-up and the expired');

  await write(store, (tx) => insertClientRegistration(tx, { client_id: 'reg-a', token_hash: 'rh', auth_method: 'none', contacts: '[]', created_by: 'registration', created_at: now }));
  await write(store, (tx) => updateClientRegistration(tx, 'reg-a', { auth_method: 'none', contacts: '["a@example.org"]' }));
  assert.equal((await findClientRegistration(store, 'reg-a'))?.contacts, '["a@example.org"]');
  assert.deepEqual(await registeredClientIds(store), ['reg-a']);
  await write(store, (tx) => deleteClientRegistration(tx, 'reg-a'));
  assert.equal(await findClientRegistration(store, 'reg-a'), null);
}

testOnEachEngine('registration tokens are spent once per use, even raced; client registrations are kept and removed', tokensAndRegistrations);
