import type { AppContext } from '../../contract/context.js';
import { claimNonceRow } from '../store/nonces.js';

// The replay cache of MAC nonces: Redis when configured (SET NX PX), else a table with a primary
// key, so a nonce is accepted once across every instance either way.

export async function claimNonce(ctx: AppContext, key: string, ttlMs: number): Promise<boolean> {
  if (ctx.redis) return (await ctx.redis.set(`gatehouse:nonce:${key}`, '1', 'PX', ttlMs, 'NX')) === 'OK';
  return claimNonceRow(ctx.store, key, Date.now() + ttlMs);
}
