import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { tooManyRequests } from '../../platform/http/errors.js';
import { quotaCounter } from './quota-store.js';

// Request quotas (api.rateLimit): a fixed window per access token, per IP before authentication.
// The counting is @fastify/rate-limit's (its LocalStore and RedisStore, behind quota-store.ts);
// this is the per-request step in front of it. The plugin's own hook is an async function that
// awaits the key, the store and itself (three promises and their microtask turns per request) and
// builds `request.routeOptions` anew for a route group we do not use; the quota as a whole was
// ≈ 4–5 µs of a 35 µs GET. This one is a callback hook: with the in-memory store the answer comes
// back in the same turn (about a third cheaper in-process, docs/benchmarks.md). Headers as the plugin's `enableDraftSpec` writes them (DESIGN: RateLimit-*).

export interface QuotaSettings {
  max: number;
  /** seconds */
  window: number;
  /** Told of every request refused with 429. */
  onExceeded: () => void;
}

export function quotaHook(ctx: AppContext, settings: QuotaSettings) {
  const store = quotaCounter(ctx, 'gatehouse:rate:');
  const { max, window, onExceeded } = settings;
  const windowMs = window * 1000;
  const limit = String(max);
  const quota = `${max} requests per ${window} s`;
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const key = request.caller ? `t:${request.caller.tokenHash}` : `ip:${request.ip}`;
    store.incr(
      key,
      (err, counted) => {
        if (err || !counted) return done(err ?? new Error('the quota store answered nothing'));
        const reset = String(Math.ceil(counted.ttl / 1000));
        reply.header('ratelimit-limit', limit);
        if (counted.current <= max) {
          reply.header('ratelimit-remaining', String(max - counted.current));
          reply.header('ratelimit-reset', reset);
          return done();
        }
        onExceeded();
        reply.header('ratelimit-remaining', '0');
        reply.header('ratelimit-reset', reset);
        done(tooManyRequests(counted.ttl / 1000, 'Request quota exceeded', { quota }));
      },
      windowMs,
      max,
    );
  };
}
