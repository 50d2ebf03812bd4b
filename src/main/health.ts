import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { AppContext } from '../contract/context.js';
import { redisNow } from '../contract/redis-state.js';
import type { AvailabilityState } from './availability.js';
import { routeMethods } from '../platform/http/routes.js';

const PING_TIMEOUT_MS = 1000;

function pingWithin(redis: Redis, ms: number): Promise<'ok' | 'unreachable'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'unreachable'>((resolve) => (timer = setTimeout(() => resolve('unreachable'), ms)));
  return Promise.race([redis.ping().then(() => 'ok' as const, () => 'unreachable' as const), late]).finally(() => clearTimeout(timer));
}

/** GET /health: always answers, reports maintenance, overload and the stores it depends on. */
export function registerHealth(app: FastifyInstance, ctx: AppContext, availability: AvailabilityState): void {
  routeMethods(
    app,
    '/health',
    {
      GET: async (_request, reply) => {
        const checks: Record<string, string> = {};
        checks.database = await ctx.store.ping().then(
          () => 'ok',
          () => 'unreachable',
        );
        // Redis away is degraded, not down (redis-state.ts): every instance keeps serving, so a
        // load balancer must not take them all out of rotation at once.
        if (ctx.redis) checks.redis = redisNow(ctx) ? await pingWithin(ctx.redis, PING_TIMEOUT_MS) : 'unreachable';
        const maintenance = availability.maintenance.on;
        const overloaded = availability.overloaded();
        const healthy = checks.database === 'ok';
        const degraded = checks.redis === 'unreachable';
        const status = !healthy ? 'unavailable' : maintenance ? 'maintenance' : overloaded ? 'overloaded' : degraded ? 'degraded' : 'ok';
        reply.header('cache-control', 'no-store');
        return reply.code(healthy ? 200 : 503).send({
          status,
          maintenance,
          maintenance_since: availability.maintenance.since ? new Date(availability.maintenance.since).toISOString() : null,
          overloaded,
          degraded,
          role: ctx.config.role,
          checks,
        });
      },
    },
    { config: { alwaysAvailable: true, anyProtocol: true } },
  );
}
