import { count, sqlOf, type On } from './sql.js';

// Owner of the nonces table: the replay cache of both servers when there is no Redis (MAC
// nonces at the resource API, DPoP proofs' jti at the token endpoint, the resource API and
// userinfo). contract/replay-cache.ts is the one rule over it and Redis.

/** Records a key until `expiresAt`; false when it was seen before. */
export async function claimReplayKeyRow(on: On, key: string, expiresAt: number): Promise<boolean> {
  try {
    await sqlOf(on).insertInto('nonces').values({ key, expires_at: expiresAt }).execute();
    return true;
  } catch (e) {
    const seen = await sqlOf(on).selectFrom('nonces').select('key').where('key', '=', key).executeTakeFirst();
    if (seen) return false;
    throw e;
  }
}

export async function purgeReplayKeys(on: On, before: number): Promise<number> {
  return count(await sqlOf(on).deleteFrom('nonces').where('expires_at', '<', before).executeTakeFirst());
}
