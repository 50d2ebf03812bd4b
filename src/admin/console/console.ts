import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { parseUrlEncoded } from '../../authserver/params.js';
import { decodeUtf8 } from '../../platform/http/body-parsers.js';
import { ApiError, badRequest, notFound } from '../../platform/http/errors.js';
import { sendError, toApiError } from '../../platform/http/error-handler.js';
import { ASSETS, errorAnswer, html, setPageHeaders, type AssetName } from '../../platform/http/html/index.js';
import { ADMIN_API } from '../api.js';
import { messageBody } from './components.js';
import { registerClientPages } from './clients.js';
import { registerDashboard } from './dashboard.js';
import { registerGrantPages } from './grants.js';
import { registerInvitationPages } from './invitations.js';
import { registerRegistrationTokenPages } from './registration-tokens.js';
import { ConsoleKit, formOf } from './kit.js';
import { registerMaintenancePages } from './maintenance.js';
import { consoleCsrfValid } from './session.js';
import { registerSignIn } from './signin.js';
import { registerUserPages } from './users.js';
import { registerWebhookPages } from './webhooks.js';

// The admin console, {base_url}/admin (docs/admin.md): server-rendered pages that work without
// JavaScript, for admins only, beside the admin API and over the same model functions. Its own
// session (session.ts), a CSRF token in every form (checked here for every POST before anything
// else), the console's headers on every answer, HTML error pages for a browser. One file per
// section (its handlers) beside its `-view.ts` (its bodies).

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
        if (isAdminApi(request.url)) return sendError(reply, e);
        // An unknown console URL is a 404, whatever the client said it accepts.
        const answer = errorAnswer(request, e.status, 'unless-json');
        if (answer.status !== e.status) e = notFound('No such page in the console', { path: 'does not exist' });
        setPageHeaders(reply, 'console');
        if (!answer.page) return sendError(reply, e);
        for (const [name, value] of Object.entries(e.headers)) reply.header(name, value);
        const title = TITLES[e.status] ?? (e.status >= 500 ? 'Something went wrong' : 'Request refused');
        const text = e.status >= 500 ? `The console could not answer. Request id ${String(request.id)}.` : `${e.message}.`;
        return kit.bare(reply, e.status, title, messageBody(title, text, html`<p><a href="${base}">To the console</a></p>`));
      });
      c.setNotFoundHandler(async () => {
        throw notFound('No such page in the console', { path: 'does not exist' });
      });

      c.addHook('onRequest', (request, reply, done) => {
        if (!isAdminApi(request.url)) setPageHeaders(reply, 'console');
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

      registerDashboard(c, kit);
      registerSignIn(c, kit);
      registerMaintenancePages(c, kit);
      registerClientPages(c, kit);
      registerUserPages(c, kit);
      registerInvitationPages(c, kit);
      registerRegistrationTokenPages(c, kit);
      registerGrantPages(c, kit);
      registerWebhookPages(c, kit);
    },
    { prefix: '/admin' },
  );
}

/** The pages' stylesheet and script (platform/http/html/assets.ts), served here: where every page is. */
function routeAsset(app: FastifyInstance, kit: ConsoleKit, name: AssetName): void {
  const asset = ASSETS[name];
  kit.route(app, `/assets/${name}`, {
    // The URL carries the content's hash: a changed file has a new URL.
    GET: async (_request, reply) => reply.header('cache-control', 'public, max-age=31536000, immutable').type(asset.type).send(asset.body),
  });
}
