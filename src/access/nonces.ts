import type { AppContext } from '../context.js';

// The replay cache of MAC nonces: Redis when configured (SET NX PX), else a table with a primary
// key, so a nonce is accepted once across every instance either way.

export async function claimNonce(ctx: AppContext, key: string, ttlMs: number): Promise<boolean> {
  if (ctx.redis) return (await ctx.redis.set(`gatehouse:nonce:${key}`, '1', 'PX', ttlMs, 'NX')) === 'OK';
  try {
    await ctx.store.db.insertInto('nonces').values({ key, expires_at: Date.now() + ttlMs }).execute();
    return true;
  } catch (e) {
    const seen = await ctx.store.db.selectFrom('nonces').select('key').where('key', '=', key).executeTakeFirst();
    if (seen) return false;
    throw e;
  }
}
