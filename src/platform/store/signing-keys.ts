import type { Store } from './store.js';
import { sqlOf } from './sql.js';
import { write } from './write-path.js';
import { newTimeOrderedId } from '../crypto/secrets.js';

// Owner of the signing_keys table: the server's HMAC keys (crypto/keys.ts), newest first.

export interface SigningKeyRow {
  id: string;
  secret: string;
  retiredAt: number | null;
}

export async function listSigningKeys(store: Store): Promise<SigningKeyRow[]> {
  const rows = await sqlOf(store).selectFrom('signing_keys').selectAll().orderBy('created_at', 'desc').execute();
  return rows.map((r) => ({ id: r.id, secret: r.secret, retiredAt: r.retired_at === null ? null : Number(r.retired_at) }));
}

/** Adds a new current key with the given secret; the previous ones are marked retired but kept. */
export async function addCurrentSigningKey(store: Store, secret: string): Promise<string> {
  const id = newTimeOrderedId();
  const now = Date.now();
  await write(store, async (tx) => {
    await sqlOf(tx).updateTable('signing_keys').set({ retired_at: now }).where('retired_at', 'is', null).execute();
    await sqlOf(tx).insertInto('signing_keys').values({ id, secret, created_at: now, retired_at: null }).execute();
  });
  return id;
}
