import type { AppContext } from '../../contract/context.js';
import { claimOnce } from '../../contract/replay-cache.js';

// The replay cache of MAC nonces: the shared replay cache (contract/replay-cache.ts), so a nonce
// is accepted once across every instance.

export async function claimNonce(ctx: AppContext, key: string, ttlMs: number): Promise<boolean> {
  return claimOnce(ctx, 'nonce', key, ttlMs);
}
