import { randomBytes } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import type { AppContext } from '../contract/context.js';
import type { Certificate } from '../platform/http/tls.js';
import '../platform/http/route-config.js';
import { createHttpsServer } from '../platform/http/https-server.js';
import { clientErrorHandler, frameworkErrorHandler, registerErrorHandling, type HtmlErrorPage } from '../platform/http/error-handler.js';
import { namesType, prefersJson } from '../platform/http/negotiation.js';
import { errorPage } from '../authserver/authorize/views.js';
import { pageHeaders } from '../authserver/authorize/pages.js';
import { registerJsonParser } from '../platform/http/body-parsers.js';
import { applyMethodOverride } from '../platform/http/method-override.js';
import { registerHttpPolicy } from '../platform/http/headers.js';
import { registerCors } from '../platform/http/cors.js';
import { registeredOriginCheck } from '../contract/client-origins.js';
import { registerAvailability } from './availability.js';
import { registerHealth } from './health.js';
import { gone, notFound } from '../platform/http/errors.js';
import { registerResourceApi } from '../api/routes.js';
import { registerAuthorizationServer } from '../authserver/routes.js';
import { registerAdminApi } from '../admin/api.js';
import { registerAdminConsole } from '../admin/console/console.js';
import { adminOpenApiPaths } from '../admin/openapi.js';
import type { ServerMetrics } from './metrics.js';
import { registerDemoCallback } from './demo.js';

export interface BuildOptions {
  logLevel?: string;
  /** Count every answer (metrics.port set). */
  metrics?: ServerMetrics | null;
  /** Where log lines go instead of standard output (the in-process test harness, test/helpers/app.ts, keeps them). */
  logStream?: { write(line: string): void };
}

/** Assembles the HTTPS application: the cross-cutting HTTP policy, then the two servers of SPEC.md. */
export async function buildApp(ctx: AppContext, cert: Certificate, options: BuildOptions = {}): Promise<FastifyInstance> {
  const { config } = ctx;
  const idPrefix = randomBytes(4).toString('hex');
  let requestCount = 0;
  // Log lines are written without blocking the event loop (flushed when the server closes).
  const logDestination = options.logStream ? null : pino.destination({ dest: 1, sync: false });
  const app = Fastify({
    logger: {
      level: options.logLevel ?? process.env.LOG_LEVEL ?? 'info',
      redact: ['req.headers.authorization', 'req.headers.cookie'],
      stream: options.logStream ?? logDestination!,
    },
    logController: new LogController({ disableRequestLogging: process.env.GATEHOUSE_REQUEST_LOGS !== '1' }),
    bodyLimit: config.server.bodyLimit,
    trustProxy: config.server.trustProxy,
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    genReqId: () => `${idPrefix}-${(++requestCount).toString(36)}`,
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler,
    serverFactory: (handler) =>
      createHttpsServer(cert, (req, res) => {
        applyMethodOverride(req);
        handler(req, res);
      }),
  });

  if (logDestination) app.addHook('onClose', async () => logDestination.flushSync());
  options.metrics?.instrument(app);
  registerErrorHandling(app, config.servesAuth ? authorizationServerErrorPage(config) : undefined);
  registerJsonParser(app);
  registerHttpPolicy(app, config);
  const availability = await registerAvailability(app, ctx);
  options.metrics?.countWaiting(availability.waiting);
  await registerCors(
    app,
    {
      api: `${config.basePath}/v${config.api.version}`,
      oauth: [`${config.basePath}${config.auth.path}/token`, `${config.basePath}${config.auth.path}/revocation`],
      wellKnown: `${config.basePath}/.well-known/`,
    },
    registeredOriginCheck(ctx),
  );

  await app.register(
    async (scoped) => {
      registerHealth(scoped, ctx, availability);
      if (config.servesAuth) await registerAuthorizationServer(scoped, ctx);
      // The operators' API and console run beside the authorization server, whose tables they administer.
      if (config.servesAuth) {
        registerAdminApi(scoped, ctx);
        registerAdminConsole(scoped, ctx);
        if (config.auth.demo) registerDemoCallback(scoped, ctx);
      }
      if (config.servesResources) await registerResourceApi(scoped, ctx, config.servesAuth ? () => adminOpenApiPaths(ctx.config) : undefined);
    },
    { prefix: config.basePath },
  );

  const retired = new RegExp(`^${escapeRegExp(config.basePath)}/v(\\d+)(/|$)`);
  app.setNotFoundHandler(async (request) => {
    const path = request.url.split('?')[0];
    const version = retired.exec(path)?.[1];
    if (version !== undefined && config.api.retiredVersions.includes(Number(version)))
      throw gone(`API version v${version} is retired`, { version: `use v${config.api.version}` });
    throw notFound('No such resource', { path: 'does not exist' });
  });
  return app;
}

const PAGE_TITLES: Record<number, string> = { 404: 'Page not found', 405: 'Not available this way', 503: 'Temporarily unavailable' };

/**
 * A browser (it names text/html and prefers it) on the authorization server's URLs (`/oauth/*`) gets the styled
 * page for a 404, 405 or 503 (maintenance, overload); every other client, and `/v1` always, JSON.
 */
function authorizationServerErrorPage(config: AppContext['config']): HtmlErrorPage {
  const root = `${config.basePath}${config.auth.path}`;
  return (reply, err) => {
    const request = reply.request;
    const path = request.url.split('?')[0];
    if (path !== root && !path.startsWith(`${root}/`)) return null;
    // An unknown URL meets the JSON-only Accept rule (415) before the router says 404.
    const status = err.status === 415 && request.is404 ? 404 : err.status;
    // A browser names text/html; curl and API clients send */* or nothing, and get JSON.
    const accept = request.headers.accept;
    if (!(status in PAGE_TITLES) || !namesType(accept, 'text/html') || prefersJson(accept)) return null;
    pageHeaders(reply);
    const message = status === 404 ? 'There is no page at this address.' : status === 405 ? `${err.message}.` : `${err.message}. Try again in a moment.`;
    return reply.code(status).type('text/html; charset=utf-8').send(errorPage(PAGE_TITLES[status], message));
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
