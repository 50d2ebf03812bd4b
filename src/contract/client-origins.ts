import type { AppContext } from './context.js';
import { RevalidatingCache } from './revalidating-cache.js';

// Whether a browser origin belongs to some registered client (CORS preflights, the token endpoint):
// one indexed read, remembered for a second, so a client registered or changed on any instance is
// honoured everywhere within that bound (at once where a notice empties the cache).

const ORIGIN_CACHE_MS = 1000;
const ORIGIN_CACHE_MAX = 10_000;

export function registeredOriginCheck(ctx: AppContext): (origin: string) => Promise<boolean> {
  const cache = new RevalidatingCache<boolean>(ctx, ORIGIN_CACHE_MS, ORIGIN_CACHE_MAX);
  return async (origin) => {
    const now = Date.now();
    const hit = cache.get(origin, now);
    if (hit !== undefined) return hit;
    const known = await ctx.accessTokens.originRegistered(origin);
    cache.set(origin, known, now);
    return known;
  };
}
