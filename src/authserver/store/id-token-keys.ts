import { sqlOf, type On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';

// Owner of the id_token_keys table: the asymmetric keys that sign ID tokens, one current key per
// algorithm, newest first. The private half is stored sealed (the caller seals and opens it).

export interface IdTokenKeyRow {
  id: string;
  alg: string;
  privateKey: string;
  publicJwk: string;
  createdAt: number;
  retiredAt: number | null;
}

/** Every key still current or retired after `retiredAfter` (older ones sign nothing that may still be valid). */
export async function listIdTokenKeys(on: On, retiredAfter: number): Promise<IdTokenKeyRow[]> {
  const rows = await sqlOf(on)
    .selectFrom('id_token_keys')
    .selectAll()
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', retiredAfter)]))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    alg: r.alg,
    privateKey: r.private_key,
    publicJwk: r.public_jwk,
    createdAt: Number(r.created_at),
    retiredAt: r.retired_at === null ? null : Number(r.retired_at),
  }));
}

/** Adds the current key of its algorithm; the previous current one of that algorithm is retired (kept for verification). */
export async function insertCurrentIdTokenKey(tx: WriteTx, key: Omit<IdTokenKeyRow, 'retiredAt'>): Promise<void> {
  await sqlOf(tx).updateTable('id_token_keys').set({ retired_at: key.createdAt }).where('alg', '=', key.alg).where('retired_at', 'is', null).execute();
  await sqlOf(tx)
    .insertInto('id_token_keys')
    .values({ id: key.id, alg: key.alg, private_key: key.privateKey, public_jwk: key.publicJwk, created_at: key.createdAt, retired_at: null })
    .execute();
}

/**
 * Adds the first current key of its algorithm, unless there is one: false then, nothing changed.
 * One statement — the partial unique index (one current key per algorithm) settles two instances
 * making the first key at once — and it never retires a key: a check, then a retire and insert,
 * retired a key another instance had just committed and maybe signed with (PostgreSQL's UPDATE sees
 * rows committed after the check).
 */
export async function insertFirstIdTokenKey(tx: WriteTx, key: Omit<IdTokenKeyRow, 'retiredAt'>): Promise<boolean> {
  const result = await sqlOf(tx)
    .insertInto('id_token_keys')
    .values({ id: key.id, alg: key.alg, private_key: key.privateKey, public_jwk: key.publicJwk, created_at: key.createdAt, retired_at: null })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** A key's public half and algorithm by its id, current or retired (a JWT access token's `kid`: contract/jwt-access-token.ts), or null. */
export async function findIdTokenPublicKey(on: On, id: string): Promise<{ alg: string; publicJwk: string } | null> {
  const row = await sqlOf(on).selectFrom('id_token_keys').select(['alg', 'public_jwk']).where('id', '=', id).executeTakeFirst();
  return row ? { alg: row.alg, publicJwk: row.public_jwk } : null;
}
