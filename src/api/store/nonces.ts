import { count, sqlOf, type On } from '../../platform/store/sql.js';

// Owner of the nonces table: the MAC replay cache when there is no Redis.

/** Records a nonce; false when it was seen before. */
export async function claimNonceRow(on: On, key: string, expiresAt: number): Promise<boolean> {
  try {
    await sqlOf(on).insertInto('nonces').values({ key, expires_at: expiresAt }).execute();
    return true;
  } catch (e) {
    const seen = await sqlOf(on).selectFrom('nonces').select('key').where('key', '=', key).executeTakeFirst();
    if (seen) return false;
    throw e;
  }
}

export async function purgeNonces(on: On, before: number): Promise<number> {
  return count(await sqlOf(on).deleteFrom('nonces').where('expires_at', '<', before).executeTakeFirst());
}
