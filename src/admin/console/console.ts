import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { audit } from '../../authserver/audit.js';
import { signIn } from '../../authserver/login-throttle.js';
import { listClients } from '../../authserver/model/clients.js';
import { listUsers, userSubject } from '../../authserver/model/users.js';
import { parseUrlEncoded } from '../../authserver/params.js';
import { listGrants } from '../../authserver/tokens.js';
import { describeDuration } from '../../authserver/authorize/views.js';
import { decodeUtf8 } from '../../platform/http/body-parsers.js';
import { ApiError, badRequest, notFound } from '../../platform/http/errors.js';
import { sendError, toApiError } from '../../platform/http/error-handler.js';
import { prefersJson } from '../../platform/http/negotiation.js';
import { readMaintenance, writeMaintenance } from '../../platform/store/settings.js';
import { ADMIN_API } from '../api.js';
import { ASSETS, type AssetName } from './assets.js';
import { registerClientPages } from './clients.js';
import { registerGrantPages } from './grants.js';
import { registerWebhookPages } from './webhooks.js';
import { html } from './html.js';
import { ConsoleKit, formOf, safeNext } from './kit.js';
import { consoleCsrfValid, consoleUser, endConsoleSession, startConsoleSession } from './session.js';
import { registerUserPages } from './users.js';
import { dashboardBody, maintenanceBody, messageBody } from './views.js';

// The admin console, {base_url}/admin (DESIGN.md "Administration"): server-rendered pages that
// work without JavaScript, for admins only, beside the admin API and over the same model
// functions. Its own session (session.ts), a CSRF token in every form (checked here for every
// POST before anything else), strict headers on every answer, HTML error pages for a browser.

const TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Sign in required',
  403: 'Refused',
  404: 'Not found',
  405: 'Method not allowed',
  413: 'Too large',
  415: 'Unsupported form',
  429: 'Too many requests',
  503: 'Unavailable',
};

export function registerAdminConsole(app: FastifyInstance, ctx: AppContext): void {
  const kit = new ConsoleKit(ctx);
  const base = kit.base;
  // The admin API's unknown URLs fall to this scope's 404: they stay JSON.
  const api = `${ctx.config.basePath}${ADMIN_API}`;
  // Read through percent-escapes too (/admin/v%31/…): whatever could be meant as the API stays JSON.
  const isAdminApi = (url: string) => [url, url.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))].some((u) => u.startsWith(api));

  app.register(
    async (c) => {
      c.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (_req, body, done) => {
        try {
          done(null, parseUrlEncoded(decodeUtf8(body as Buffer)));
        } catch {
          done(badRequest('The form could not be read', { body: 'is not valid form encoding' }));
        }
      });

      // An error is an HTML page for a browser, the JSON error body for a client that takes no HTML.
      c.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
        const known = toApiError(err);
        if (!known || known.status >= 500) request.log.error({ err }, known ? 'request failed' : 'unexpected failure');
        let e = known ?? new ApiError(500, 'Internal server error', { request_id: String(request.id) });
        // An unknown console URL is a 404 page, whatever the browser said it accepts (the JSON-only rule answers 415 first).
        if (e.status === 415 && request.is404 && !isAdminApi(request.url)) e = notFound('No such page in the console', { path: 'does not exist' });
        if (isAdminApi(request.url)) return sendError(reply, e);
        ConsoleKit.headers(reply);
        if (prefersJson(request.headers.accept)) return sendError(reply, e);
        for (const [name, value] of Object.entries(e.headers)) reply.header(name, value);
        const title = TITLES[e.status] ?? (e.status >= 500 ? 'Something went wrong' : 'Request refused');
        const text = e.status >= 500 ? `The console could not answer. Request id ${String(request.id)}.` : `${e.message}.`;
        return kit.bare(reply, e.status, title, messageBody(title, text, html`<p><a href="${base}">To the console</a></p>`));
      });
      c.setNotFoundHandler(async () => {
        throw notFound('No such page in the console', { path: 'does not exist' });
      });

      c.addHook('onRequest', (request, reply, done) => {
        if (!isAdminApi(request.url)) ConsoleKit.headers(reply);
        done();
      });
      // Every POST carries the form token of this browser; without it nothing is done.
      c.addHook('preHandler', async (request, reply) => {
        if (request.method !== 'POST') return;
        if (await consoleCsrfValid(ctx, request, formOf(request).get('csrf_token'))) return;
        return kit.bare(reply, 403, 'This form has expired', messageBody('This form has expired', 'Nothing was changed. Open the page again and resubmit the form.', html`<p><a href="${base}">To the console</a></p>`), {
          error: 'The form token is missing or invalid; nothing was changed',
          detail: { csrf_token: 'missing or invalid' },
        });
      });

      for (const name of Object.keys(ASSETS) as AssetName[]) routeAsset(c, kit, name);

      const dashboard = kit.guard(async (_request, reply, s) => {
        const [clients, users, grants, maintenance] = await Promise.all([listClients(ctx), listUsers(ctx), listGrants(ctx, {}), readMaintenance(ctx.store)]);
        const body = dashboardBody({ base, clients: clients.length, users: users.length, admins: users.filter((u) => u.admin).length, grants: grants.length, grantsCapped: grants.length >= 1000, maintenance });
        return kit.page(reply, s, 200, 'Dashboard', 'dashboard', body);
      });
      kit.route(c, '/', {
        // Signed out: the sign-in form (200, the console's front door); signed in: the dashboard.
        GET: async function (request, reply) {
          if (await consoleUser(ctx, request)) return dashboard.call(this, request, reply);
          const signedOut = (request.query as Record<string, unknown>).signed_out !== undefined;
          return kit.signIn(request, reply, 200, { info: signedOut ? 'You are signed out.' : undefined });
        },
      });

      kit.route(c, '/signin', {
        POST: async (request, reply) => {
          const form = formOf(request);
          const username = form.get('username');
          const password = form.get('password');
          const next = safeNext(base, form.get('next')) ?? undefined;
          if (!username || !password) return kit.signIn(request, reply, 400, { username, next, error: 'Enter your username and password.' });
          const outcome = await signIn(ctx, request.log, { username, password, ip: request.ip, clientId: null, via: 'admin console' });
          if ('retryAfter' in outcome) {
            reply.header('retry-after', String(outcome.retryAfter));
            return kit.signIn(request, reply, 429, { username, next, error: `Too many failed attempts. Try again in ${describeDuration(outcome.retryAfter)}.` });
          }
          if ('failed' in outcome) return kit.signIn(request, reply, 401, { username, next, error: 'The username or password is not correct.' });
          const { user } = outcome;
          if (!user.admin) {
            audit(ctx, request.log, 'login.failed', { subject: userSubject(user.id), username, ip: request.ip, reason: 'admin console: not an admin' });
            return kit.notAdmin(reply, user.username);
          }
          await startConsoleSession(ctx, request, reply, user);
          audit(ctx, request.log, 'login.succeeded', { subject: userSubject(user.id), ip: request.ip, reason: 'admin console' });
          return reply.redirect(next ?? base, 303);
        },
      });

      kit.route(c, '/signout', {
        POST: async (request, reply) => {
          await endConsoleSession(ctx, request, reply);
          return kit.redirect(reply, '?signed_out');
        },
      });

      kit.route(c, '/maintenance', {
        GET: kit.guard(async (request, reply, s) => {
          const done = (request.query as Record<string, unknown>).done;
          const message = done === 'on' ? 'Switched on: every instance answers 503 within a second.' : done === 'off' ? 'Switched off: every instance answers again within a second.' : undefined;
          return kit.page(reply, s, 200, 'Maintenance', 'maintenance', maintenanceBody(base, s.csrf, await readMaintenance(ctx.store), message));
        }),
        POST: kit.guard(async (_request, reply, s) => {
          const enabled = s.form.get('enabled');
          if (enabled !== 'on' && enabled !== 'off') return kit.message(reply, s, 400, 'Bad request', 'The form was not understood.', 'maintenance');
          await writeMaintenance(ctx.store, enabled === 'on');
          return kit.redirect(reply, `/maintenance?done=${enabled}`);
        }),
      });

      registerClientPages(c, kit);
      registerUserPages(c, kit);
      registerGrantPages(c, kit);
      registerWebhookPages(c, kit);
    },
    { prefix: '/admin' },
  );
}

function routeAsset(app: FastifyInstance, kit: ConsoleKit, name: AssetName): void {
  const asset = ASSETS[name];
  kit.route(app, `/assets/${name}`, {
    // The URL carries the content's hash: a changed file has a new URL.
    GET: async (_request, reply) => reply.header('cache-control', 'public, max-age=31536000, immutable').type(asset.type).send(asset.body),
  });
}
