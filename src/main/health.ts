import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../contract/context.js';
import type { AvailabilityState } from './availability.js';
import { routeMethods } from '../platform/http/routes.js';

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
        if (ctx.redis) checks.redis = await ctx.redis.ping().then(() => 'ok', () => 'unreachable');
        const maintenance = availability.maintenance.on;
        const overloaded = availability.overloaded();
        const healthy = Object.values(checks).every((c) => c === 'ok');
        const status = !healthy ? 'unavailable' : maintenance ? 'maintenance' : overloaded ? 'overloaded' : 'ok';
        reply.header('cache-control', 'no-store');
        return reply.code(healthy ? 200 : 503).send({
          status,
          maintenance,
          maintenance_since: availability.maintenance.since ? new Date(availability.maintenance.since).toISOString() : null,
          overloaded,
          role: ctx.config.role,
          checks,
        });
      },
    },
    { config: { alwaysAvailable: true, anyProtocol: true } },
  );
}
