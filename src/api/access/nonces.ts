import type { AppContext } from '../../contract/context.js';
import { withRedis } from '../../contract/redis-state.js';
import { claimNonceRow } from '../store/nonces.js';

// The replay cache of MAC nonces: Redis when configured (SET NX PX), else a table with a primary
// key, so a nonce is accepted once across every instance either way (and the table while Redis
// is away: redis-state.ts).

export async function claimNonce(ctx: AppContext, key: string, ttlMs: number): Promise<boolean> {
  return withRedis(
    ctx,
    async (redis) => (await redis.set(`gatehouse:nonce:${key}`, '1', 'PX', ttlMs, 'NX')) === 'OK',
    () => claimNonceRow(ctx.store, key, Date.now() + ttlMs),
  );
}
