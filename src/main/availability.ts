import type { FastifyInstance, FastifyRequest } from 'fastify';
import underPressure from '@fastify/under-pressure';
import type { AppContext } from '../contract/context.js';
import { readMaintenance, type Maintenance } from '../platform/store/settings.js';
import { serviceUnavailable, TemporarilyUnavailable } from '../platform/http/errors.js';
import { sendError } from '../platform/http/error-handler.js';
import { TurnGate } from '../platform/http/turn-gate.js';

// 503 for maintenance (a switch in the database, seen by every instance within a second) and
// for overload (event loop saturated, or requests waiting too long for their turn). /health
// always answers, at once, and reports both.

const POLL_MS = 1000;
export const MAINTENANCE_RETRY_AFTER = 60;
const OVERLOAD_RETRY_AFTER = 10;
const overloaded = (why: string) => serviceUnavailable(OVERLOAD_RETRY_AFTER, 'The server is overloaded, retry later', { service: `overloaded (${why})` });

export interface AvailabilityState {
  maintenance: Maintenance;
  overloaded: () => boolean;
  /** Requests waiting for a turn of the event loop. */
  waiting: () => number;
}

export async function registerAvailability(app: FastifyInstance, ctx: AppContext): Promise<AvailabilityState> {
  const state: AvailabilityState = { maintenance: await readMaintenance(ctx.store), overloaded: () => false, waiting: () => 0 };
  const timer = setInterval(() => {
    readMaintenance(ctx.store).then(
      (m) => (state.maintenance = m),
      (err) => app.log.warn({ err }, 'cannot read the maintenance switch'),
    );
  }, POLL_MS);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));

  const authPrefix = `${ctx.config.basePath}${ctx.config.auth.path}/`;
  const alwaysAvailable = (request: FastifyRequest) => request.routeOptions.config?.alwaysAvailable === true;
  app.addHook('onRequest', (request, _reply, done) => {
    if (!state.maintenance.on || alwaysAvailable(request)) return done();
    const detail = { service: 'maintenance mode is on' };
    // The authorization endpoints answer in RFC 6749's error shape (temporarily_unavailable).
    if (ctx.config.servesAuth && request.url.startsWith(authPrefix))
      return done(new TemporarilyUnavailable(MAINTENANCE_RETRY_AFTER, 'The service is in maintenance', detail));
    done(serviceUnavailable(MAINTENANCE_RETRY_AFTER, 'The service is in maintenance', detail));
  });

  const { maxEventLoopDelayMs, turnBudgetMs } = ctx.config.load;
  await app.register(underPressure, {
    maxEventLoopDelay: maxEventLoopDelayMs,
    retryAfter: OVERLOAD_RETRY_AFTER,
    exposeStatusRoute: false,
    pressureHandler: (request, reply, type) => {
      if (alwaysAvailable(request)) return;
      sendError(reply, overloaded(type));
    },
  });

  // Requests take turns once a turn of the event loop has run its budget (turn-gate.ts), so that
  // a saturated server still accepts connections. A request's wait then shows in the gate rather
  // than as event-loop delay: one that has waited longer than the delay limit means overload.
  // /health and the other always-available routes never wait.
  if (turnBudgetMs > 0) {
    const gate = new TurnGate(turnBudgetMs);
    const queueOverloaded = () => maxEventLoopDelayMs > 0 && gate.oldestWait() > maxEventLoopDelayMs;
    app.addHook('onRequest', (request, _reply, done) => {
      if (gate.admit() || alwaysAvailable(request)) return done();
      if (queueOverloaded()) return done(overloaded('queue'));
      void gate.wait().then(() => done());
    });
    state.overloaded = () => app.isUnderPressure() || queueOverloaded();
    state.waiting = () => gate.queued;
  } else state.overloaded = () => app.isUnderPressure();
  return state;
}
