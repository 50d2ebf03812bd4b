import type { FastifyInstance } from 'fastify';
import underPressure from '@fastify/under-pressure';
import type { AppContext } from '../contract/context.js';
import { readMaintenance, type Maintenance } from '../platform/store/settings.js';
import { OAuthError, serviceUnavailable } from '../platform/http/errors.js';
import { sendError } from '../platform/http/error-handler.js';

// 503 for maintenance (a switch in the database, seen by every instance within a second) and
// for overload (event loop saturated). /health always answers and reports both.

const POLL_MS = 1000;
export const MAINTENANCE_RETRY_AFTER = 60;

export interface AvailabilityState {
  maintenance: Maintenance;
  overloaded: () => boolean;
}

export async function registerAvailability(app: FastifyInstance, ctx: AppContext): Promise<AvailabilityState> {
  const state: AvailabilityState = { maintenance: await readMaintenance(ctx.store), overloaded: () => false };
  const timer = setInterval(() => {
    readMaintenance(ctx.store).then(
      (m) => (state.maintenance = m),
      (err) => app.log.warn({ err }, 'cannot read the maintenance switch'),
    );
  }, POLL_MS);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));

  const authPrefix = `${ctx.config.basePath}${ctx.config.auth.path}/`;
  app.addHook('onRequest', (request, _reply, done) => {
    if (!state.maintenance.on || request.routeOptions.config?.alwaysAvailable === true) return done();
    const detail = { service: 'maintenance mode is on' };
    // The authorization endpoints answer in RFC 6749's error shape (temporarily_unavailable).
    if (ctx.config.servesAuth && request.url.startsWith(authPrefix))
      return done(new OAuthError('temporarily_unavailable', 'The service is in maintenance', 503, detail, { 'retry-after': String(MAINTENANCE_RETRY_AFTER) }));
    done(serviceUnavailable(MAINTENANCE_RETRY_AFTER, 'The service is in maintenance', detail));
  });

  await app.register(underPressure, {
    maxEventLoopDelay: Number(process.env.GATEHOUSE_MAX_EVENT_LOOP_DELAY ?? 1000),
    retryAfter: 10,
    exposeStatusRoute: false,
    pressureHandler: (request, reply, type) => {
      if (request.routeOptions.config?.alwaysAvailable === true) return;
      sendError(reply, serviceUnavailable(10, 'The server is overloaded, retry later', { service: `overloaded (${type})` }));
    },
  });
  state.overloaded = () => app.isUnderPressure();
  return state;
}
