import { createRequire } from 'node:module';
import type { FastifyRateLimitOptions, FastifyRateLimitStore } from '@fastify/rate-limit';
import type { AppContext } from '../../contract/context.js';
import { redisNow } from '../../contract/redis-state.js';

// Where request quotas (api.rateLimit) are counted: in Redis, shared by every instance, while it is
// reachable; in this instance's memory while it is not (and always without Redis). The two
// counting stores are @fastify/rate-limit's own; this only chooses between them per request.

type Callback = Parameters<FastifyRateLimitStore['incr']>[1];
type StoreArgs = [continueExceeding: boolean | undefined, exponentialBackoff: boolean | undefined, ...rest: unknown[]];
const require = createRequire(import.meta.url);
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as new (...args: StoreArgs) => FastifyRateLimitStore;
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as new (...args: StoreArgs) => FastifyRateLimitStore;

class FailoverStore implements FastifyRateLimitStore {
  constructor(
    private readonly ctx: AppContext,
    private readonly shared: FastifyRateLimitStore | null,
    private readonly local: FastifyRateLimitStore,
  ) {}

  incr(key: string, callback: Callback, timeWindow: number, max: number): void {
    if (!this.shared || !redisNow(this.ctx)) return this.local.incr(key, callback, timeWindow, max);
    this.shared.incr(
      key,
      (err, result) => (err ? this.local.incr(key, callback, timeWindow, max) : callback(null, result)),
      timeWindow,
      max,
    );
  }

  child(routeOptions: Parameters<FastifyRateLimitStore['child']>[0]): FastifyRateLimitStore {
    return new FailoverStore(this.ctx, this.shared?.child(routeOptions) ?? null, this.local.child(routeOptions));
  }
}

/** The `store` option of @fastify/rate-limit for this context. */
export function quotaStore(ctx: AppContext, nameSpace: string): new (options: FastifyRateLimitOptions) => FastifyRateLimitStore {
  // Fixed windows (neither continueExceeding nor exponentialBackoff), as configured in routes.ts.
  return class {
    constructor() {
      const shared = ctx.redis ? new RedisStore(false, false, ctx.redis, nameSpace) : null;
      return new FailoverStore(ctx, shared, new LocalStore(false, false));
    }
  } as unknown as new (options: FastifyRateLimitOptions) => FastifyRateLimitStore;
}
