import assert from 'node:assert/strict';
import type { Store } from '../../platform/store/store.js';
import { migrateCore } from '../../platform/store/migrations.js';
import { sqlOf } from '../../platform/store/sql.js';
import { write } from '../../platform/store/write-path.js';
import { saveGrant, type GrantRow } from './grants.js';
import { testOnEachEngine } from '../../../test/helpers/stores.js';

// One live grant per user and client (migration 0010): duplicates stored before are merged without
// ending a token, and authorizations saved at the same moment end in one grant.

const HOUR = 3_600_000;

async function duplicatesAreMergedAndRacesEndInOne(store: Store) {
  assert.ok((await migrateCore(store, '0009_client_introspect_require_pkce')).includes('0009_client_introspect_require_pkce'));
  const db = sqlOf(store) as any;
  const now = Date.now();
  const grant = (id: string, subject: string, scope: string, expiresIn: number, revoked = false): GrantRow => ({
    id,
    client_id: 'app',
    subject,
    scope,
    expires_at: now + expiresIn,
    revoked_at: revoked ? now - 1 : null,
    revoked_reason: revoked ? 'revoked' : null,
    created_at: now - 10 * HOUR + expiresIn,
  });
  for (const g of [
    grant('a1', 'user:a', 'zoos:read', HOUR),
    grant('a2', 'user:a', 'orders:read', 2 * HOUR),
    grant('a3', 'user:a', 'zoos:write', -HOUR),
    grant('a4', 'user:a', 'admin', 3 * HOUR, true),
    grant('b1', 'user:b', 'zoos:read', HOUR),
  ])
    await db.insertInto('grants').values(g).execute();
  const token = (id: string, grantId: string) => ({ id, hash: `h-${id}`, grant_id: grantId, client_id: 'app', subject: 'user:a', scope: 'zoos:read', token_type: 'bearer', key_id: null, expires_at: now + HOUR, revoked_at: null, created_at: now });
  await db.insertInto('access_tokens').values([token('t1', 'a1'), token('t2', 'a2')]).execute();
  await db.insertInto('refresh_tokens').values({ hash: 'r1', grant_id: 'a1', client_id: 'app', scope: 'zoos:read', expires_at: now + HOUR, used_at: null, created_at: now }).execute();

  assert.deepEqual(await migrateCore(store, '0010_one_grant_per_user_and_client'), ['0010_one_grant_per_user_and_client']);
  await migrateCore(store); // the later ones, for the verbs below
  const live = await db.selectFrom('grants').selectAll().where('revoked_at', 'is', null).orderBy('id').execute();
  assert.deepEqual(
    live.map((g: GrantRow) => [g.id, g.subject, g.scope.split(' ').sort().join(' ')]),
    [
      ['a2', 'user:a', 'orders:read zoos:read'],
      ['b1', 'user:b', 'zoos:read'],
    ],
    'the longest-lasting grant kept, with the scopes of the live ones (not the expired one)',
  );
  const tokens = await db.selectFrom('access_tokens').select(['id', 'grant_id', 'revoked_at']).orderBy('id').execute();
  assert.deepEqual(tokens.map((t: { id: string; grant_id: string; revoked_at: unknown }) => [t.id, t.grant_id, t.revoked_at]), [['t1', 'a2', null], ['t2', 'a2', null]]);
  assert.equal((await db.selectFrom('refresh_tokens').select('grant_id').executeTakeFirst()).grant_id, 'a2');
  assert.equal((await db.selectFrom('grants').select('revoked_reason').where('id', '=', 'a1').executeTakeFirst()).revoked_reason, 'merged into a2');

  // Eight authorizations of the same user and client at once: one live grant, the last scope wins.
  const saved = await Promise.all(
    Array.from({ length: 8 }, (_, i) => write(store, (tx) => saveGrant(tx, { ...grant(`c${i}`, 'user:c', i % 2 ? 'zoos:read' : 'zoos:read orders:read', HOUR), created_at: now }, now))),
  );
  const cLive = await db.selectFrom('grants').selectAll().where('subject', '=', 'user:c').where('revoked_at', 'is', null).execute();
  assert.equal(cLive.length, 1);
  assert.equal(saved.filter((s) => s.created).length, 1, 'one created, the others replaced it');
  assert.ok(saved.every((s) => s.id === cLive[0].id));
  // An expired live grant is retired; the next authorization is a new grant.
  await db.updateTable('grants').set({ expires_at: now - 1 }).where('id', '=', cLive[0].id).execute();
  const fresh = await write(store, (tx) => saveGrant(tx, grant('d1', 'user:c', 'zoos:read', HOUR), now));
  assert.deepEqual(fresh, { id: 'd1', created: true, previousScope: null });
  // A revoked grant does not count: the user may authorize again.
  await db.updateTable('grants').set({ revoked_at: now }).where('id', '=', 'd1').execute();
  assert.deepEqual(await write(store, (tx) => saveGrant(tx, grant('d2', 'user:c', 'zoos:read', HOUR), now)), { id: 'd2', created: true, previousScope: null });
}

testOnEachEngine('0010 one grant per user and client: duplicates merged, racing authorizations end in one', duplicatesAreMergedAndRacesEndInOne);
