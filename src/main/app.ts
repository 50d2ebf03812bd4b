import { randomBytes } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import type { AppContext } from '../contract/context.js';
import type { Certificate } from '../platform/http/tls.js';
import '../platform/http/route-config.js';
import { createHttpsServer } from '../platform/http/https-server.js';
import { clientErrorHandler, frameworkErrorHandler, registerErrorHandling, type HtmlErrorPage } from '../platform/http/error-handler.js';
import { errorAnswer, sendPage } from '../platform/http/html/index.js';
import { errorPage } from '../authserver/authorize/views.js';
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
import type { ServerMetrics } from './metrics.js';
import { registerDemoCallback } from './demo.js';

export interface BuildOptions {
  logLevel?: string;
  /** Count every answer (metrics.port set). */
  metrics?: ServerMetrics | null;
  /** Where log lines go instead of standard output (the in-process test harness, test/helpers/app.ts, keeps them). */
  logStream?: { write(line: string): void };
}

/** A URL with the secret part of `token=`/`invite=` values cut (`<selector>.…`): what request logs show. */
export function withoutLinkSecrets(url: string): string {
  // The selector is 32 hex digits; whatever follows it (the dot, or %2E, and the secret) is cut.
  return url.replace(/([?&](?:token|invite)=)([0-9a-fA-F]{0,32})[^&]*/g, (_m, key: string, selector: string) => `${key}${selector}.…`);
}

/** Assembles the HTTPS application: the cross-cutting HTTP policy, then the two servers (docs/oauth.md, docs/api.md). */
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
      // A mailed link's secret (docs/users.md) never reaches a log line whole.
      serializers: { req: (req: { method: string; url: string; hostname?: string; ip?: string; id?: string }) => ({ id: req.id, method: req.method, url: withoutLinkSecrets(req.url), hostname: req.hostname, remoteAddress: req.ip }) },
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
      mcp: `${config.basePath}/mcp`,
      oauth: ['token', 'revocation', 'userinfo', 'jwks', 'par', 'device_authorization'].map((endpoint) => `${config.basePath}${config.auth.path}/${endpoint}`),
      wellKnown: `${config.basePath}/.well-known/`,
      registration: `${config.basePath}${config.auth.path}/register`,
    },
    registeredOriginCheck(ctx),
  );

  let adminPaths: (() => Record<string, unknown>) | undefined;
  await app.register(
    async (scoped) => {
      registerHealth(scoped, ctx, availability);
      if (config.servesAuth) await registerAuthorizationServer(scoped, ctx);
      // The operators' API and console run beside the authorization server, whose tables they administer.
      if (config.servesAuth) {
        adminPaths = registerAdminApi(scoped, ctx);
        registerAdminConsole(scoped, ctx);
        if (config.auth.demo) registerDemoCallback(scoped, ctx);
      }
      // The resource API's OpenAPI document describes the admin API too, from its route schemas.
      if (config.servesResources) await registerResourceApi(scoped, ctx, adminPaths);
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
    const path = reply.request.url.split('?')[0];
    if (path !== root && !path.startsWith(`${root}/`)) return null;
    const { page, status } = errorAnswer(reply.request, err.status, 'browsers');
    if (!page || !(status in PAGE_TITLES)) return null;
    const message = status === 404 ? 'There is no page at this address.' : status === 405 ? `${err.message}.` : `${err.message}. Try again in a moment.`;
    return sendPage(reply, { kind: 'card', basePath: config.basePath, status, ...errorPage(PAGE_TITLES[status], message) });
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
