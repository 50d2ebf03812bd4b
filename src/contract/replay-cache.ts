import type { AppContext } from './context.js';
import { withRedis } from './redis-state.js';
import { claimReplayKeyRow } from '../platform/store/replay-cache.js';

// The replay cache both servers share: a key (a MAC nonce, a DPoP proof's jti) is accepted once
// across every instance — Redis when configured (SET NX PX), else the nonces table's primary key
// (and the table while Redis is away: redis-state.ts).

/** True the first time `kind:key` is claimed within `ttlMs`; false when it was seen before. */
export async function claimOnce(ctx: AppContext, kind: 'nonce' | 'dpop', key: string, ttlMs: number): Promise<boolean> {
  const name = `${kind}:${key}`;
  return withRedis(
    ctx,
    async (redis) => (await redis.set(`gatehouse:${name}`, '1', 'PX', ttlMs, 'NX')) === 'OK',
    () => claimReplayKeyRow(ctx.store, name, Date.now() + ttlMs),
  );
}
