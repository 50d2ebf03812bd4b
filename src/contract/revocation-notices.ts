import type { AppContext } from './context.js';
import { contextCache } from './context-cache.js';
import { redisNow } from './redis-state.js';

// What a revocation tells the caches. Each instance caches token checks (active-token.ts) and
// clients (authserver/model/clients.ts) for a moment; whoever revokes — an instance, or the CLI — announces
// it after the change is committed: this process's caches are emptied at once, and with Redis
// (docs/access.md#revocation-and-the-verification-cache) every instance subscribed to the channel empties
// its own. A notice that is lost (Redis down) costs nothing but the caches' own bound (≤ 1 s).

const CHANNEL = 'gatehouse:revocations';

type Listener = () => void;
const listenersOf = (ctx: AppContext) => contextCache(ctx, 'revocation-listeners', () => new Set<Listener>());

/** Registers a cache to empty (or a stream to recheck its token) whenever a revocation is announced in this context; returns how to stop. */
export function onRevocation(ctx: AppContext, listener: Listener): () => void {
  listenersOf(ctx).add(listener);
  return () => void listenersOf(ctx).delete(listener);
}

function notifyLocal(ctx: AppContext): void {
  for (const listener of listenersOf(ctx)) listener();
}

/** Call after a revocation has been committed. Never throws. */
export async function announceRevocation(ctx: AppContext): Promise<void> {
  notifyLocal(ctx);
  const redis = redisNow(ctx);
  if (!redis) return;
  try {
    await redis.publish(CHANNEL, String(Date.now()));
  } catch {
    // Redis unreachable: the other instances' caches expire by themselves within a second.
  }
}

/** Subscribes this server to the revocations announced anywhere; returns how to stop. */
export function listenForRevocations(ctx: AppContext, onProblem: (message: string) => void): () => Promise<void> {
  if (!ctx.redis) return async () => undefined;
  const subscriber = ctx.redis.duplicate();
  subscriber.on('error', () => undefined); // ioredis reconnects (and resubscribes) by itself
  subscriber.on('message', (channel) => channel === CHANNEL && notifyLocal(ctx));
  subscriber.subscribe(CHANNEL).catch((e: Error) => onProblem(`cannot subscribe to revocation notices: ${e.message}`));
  return async () => {
    await subscriber.quit().catch(() => subscriber.disconnect());
  };
}
