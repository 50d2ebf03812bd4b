import type { Redis } from 'ioredis';
import type { AppContext } from './context.js';

// Redis is an accelerator, never a single point of failure (docs/deployment.md "When Redis goes
// away"): while it is unreachable every use of it falls back — MAC nonces and failed-login
// counters to their database tables (still shared by every instance), request quotas to this
// instance's memory, cache invalidation to the caches' own 1 s bound — and comes back to it by
// itself when ioredis has reconnected. The rule lives here, once.

/** Redis when its connection is up now; null when there is none configured or it is away. */
export function redisNow(ctx: AppContext): Redis | null {
  return ctx.redis?.status === 'ready' ? ctx.redis : null;
}

/**
 * Runs `viaRedis` when Redis is up, else (or when it fails on the way: a connection lost
 * mid-command) `viaDatabase`. Without Redis configured, always `viaDatabase`.
 */
export async function withRedis<T>(ctx: AppContext, viaRedis: (redis: Redis) => Promise<T>, viaDatabase: () => Promise<T>): Promise<T> {
  const redis = redisNow(ctx);
  if (!redis) return viaDatabase();
  try {
    return await viaRedis(redis);
  } catch (e) {
    if (redisNow(ctx) && !isConnectionError(e)) throw e;
    return viaDatabase();
  }
}

function isConnectionError(e: unknown): boolean {
  const m = (e as Error)?.message ?? '';
  return /Connection is closed|connect ECONNREFUSED|Reached the max retries|Stream isn't writeable|ECONNRESET|EPIPE/i.test(m);
}

export interface RedisWatcher {
  stop(): void;
}

/**
 * Logs once when Redis goes away (saying what falls back to what) and once when it is back, both
 * as warnings: whoever watches for the first must see the second.
 */
export function watchRedis(ctx: AppContext, warn: (message: string) => void): RedisWatcher {
  const redis = ctx.redis;
  if (!redis) return { stop: () => undefined };
  let lost = redis.status !== 'ready' && redis.status !== 'connecting' && redis.status !== 'connect';
  const down = () => {
    if (lost) return;
    lost = true;
    warn(
      'Redis is unreachable: request quotas are counted per instance, MAC nonces and failed-login counters go to the database, ' +
        'and other instances see revocations within 1 s through their caches; reconnecting',
    );
  };
  const up = () => {
    if (!lost) return;
    lost = false;
    warn('Redis is reachable again: quotas, nonces and login counters are shared through it again');
  };
  redis.on('close', down);
  redis.on('reconnecting', down);
  redis.on('ready', up);
  return {
    stop: () => {
      redis.off('close', down);
      redis.off('reconnecting', down);
      redis.off('ready', up);
    },
  };
}
