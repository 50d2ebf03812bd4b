import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { findClient, type Client } from '../model/clients.js';
import { nullIfRefused, type FetchOrigin } from '../model/client-metadata-document.js';
import { bodyParams, queryParams, type Params } from '../params.js';
import { endSessions, sessionOf } from '../sessions.js';
import { browserBinding, csrfToken } from '../authorize/csrf.js';
import { checkedForm, pageHeaders, sendCardPage, sendErrorPage } from '../authorize/pages.js';
import { formTarget } from '../authorize/request.js';
import { readIdTokenHint } from './id-token.js';
import { logoutPage, signedOutPage } from './logout-view.js';
import { audit } from '../audit.js';
import { userSubject } from '../model/users.js';

// RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0) at {auth_url}/logout, GET or POST:
// `id_token_hint`, `client_id`, `post_logout_redirect_uri` (only one the client registered:
// never an open redirect), `state`. The user is asked first (a page cannot sign anyone out by
// linking here); then the session ends and the browser goes back to the client, or is told.

const FIELDS = ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state'] as const;

class LogoutRefused extends Error {}

interface LogoutRequest {
  fields: Record<string, string | undefined>;
  client: Client | null;
  /** The registered address to go back to, with `state`; null: show the signed-out page. */
  returnTo: string | null;
  /** The session the ID token was issued in, and whose (ended too when it is the signed-in user's). */
  hinted: { sid: string | null; sub: string } | null;
}

async function readLogoutRequest(ctx: AppContext, params: Params, origin?: FetchOrigin): Promise<LogoutRequest> {
  for (const name of FIELDS) if (params.repeated.has(name)) throw new LogoutRefused(`The ${name} parameter is repeated.`);
  const fields = Object.fromEntries(FIELDS.map((f) => [f, params.get(f)])) as Record<(typeof FIELDS)[number], string | undefined>;
  let clientId = fields.client_id;
  let hinted: LogoutRequest['hinted'] = null;
  if (fields.id_token_hint !== undefined) {
    const hint = await readIdTokenHint(ctx, fields.id_token_hint);
    if (!hint) throw new LogoutRefused('The id_token_hint is not an ID token this server issued.');
    if (clientId !== undefined && clientId !== hint.aud) throw new LogoutRefused('The id_token_hint was issued to another application than client_id names.');
    clientId = hint.aud;
    hinted = { sid: hint.sid ?? null, sub: hint.sub };
  }
  const client = clientId === undefined ? null : await findClient(ctx, clientId, false, origin).catch(nullIfRefused);
  if (clientId !== undefined && !client) throw new LogoutRefused('The application that sent you here is not registered.');
  let returnTo: string | null = null;
  if (fields.post_logout_redirect_uri !== undefined) {
    if (!client) throw new LogoutRefused('post_logout_redirect_uri needs id_token_hint or client_id, to know whose address it is.');
    if (!client.postLogoutRedirectUris.includes(fields.post_logout_redirect_uri))
      throw new LogoutRefused('The address this application wants to send you back to is not registered for it.');
    const url = new URL(fields.post_logout_redirect_uri);
    if (fields.state !== undefined) url.searchParams.append('state', fields.state);
    returnTo = url.toString();
  }
  return { fields, client, returnTo, hinted };
}

function logoutPath(ctx: AppContext): string {
  return `${ctx.config.basePath}${ctx.config.auth.path}/logout`;
}

export function logoutEndpoint(ctx: AppContext) {
  const refuse = (reply: FastifyReply, e: unknown) => {
    if (!(e instanceof LogoutRefused)) throw e;
    pageHeaders(reply);
    return sendErrorPage(ctx, reply, 400, 'Cannot sign out from here', e.message, { error: 'invalid_request', detail: { request: e.message } });
  };

  /** The question (or, with nobody signed in, straight back to the client). */
  const ask = async (request: FastifyRequest, reply: FastifyReply, params: Params) => {
    let req: LogoutRequest;
    try {
      req = await readLogoutRequest(ctx, params, request);
    } catch (e) {
      return refuse(reply, e);
    }
    const signedIn = await sessionOf(ctx, request);
    const targets = req.returnTo ? [formTarget(req.returnTo)] : [];
    pageHeaders(reply, targets);
    if (!signedIn) return req.returnTo ? reply.redirect(req.returnTo, 303) : sendCardPage(ctx, reply, 200, signedOutPage(true));
    const csrf = await csrfToken(ctx, await browserBinding(ctx, request, reply));
    return sendCardPage(ctx, reply, 200, logoutPage({ action: logoutPath(ctx), username: signedIn.user.username, clientName: req.client?.name ?? null, fields: req.fields, csrf }), {
      formTargets: targets,
    });
  };

  return {
    GET: async (request: FastifyRequest, reply: FastifyReply) => {
      try {
        return await ask(request, reply, queryParams(request));
      } catch (e) {
        return refuse(reply, e instanceof LogoutRefused ? e : new LogoutRefused('The request could not be read.'));
      }
    },
    POST: async (request: FastifyRequest, reply: FastifyReply) => {
      let posted: Params;
      try {
        posted = bodyParams(request);
      } catch {
        return refuse(reply, new LogoutRefused('The form could not be read.'));
      }
      // A relying party's POST of the same parameters: the same question, asked on a GET. (A
      // cross-site POST carries no SameSite=Lax cookie: answered here, it would not see the
      // session and would say "signed out" to someone who is not.)
      if (!posted.has('step')) {
        pageHeaders(reply);
        const query = new URLSearchParams(FIELDS.flatMap((f) => (posted.get(f) === undefined ? [] : [[f, posted.get(f)!] as [string, string]]))).toString();
        return reply.redirect(`${logoutPath(ctx)}${query ? `?${query}` : ''}`, 303);
      }
      const form = await checkedForm(ctx, request, reply, 'Go back to the application and sign out again.');
      if (!form) return reply;
      let req: LogoutRequest;
      try {
        req = await readLogoutRequest(ctx, form, request);
      } catch (e) {
        return refuse(reply, e);
      }
      pageHeaders(reply, req.returnTo ? [formTarget(req.returnTo)] : []);
      if (form.get('decision') !== 'logout') return sendCardPage(ctx, reply, 200, signedOutPage(false));
      const signedIn = await sessionOf(ctx, request);
      const named = req.hinted?.sid && signedIn && req.hinted.sub === userSubject(signedIn.user.id) ? { sid: req.hinted.sid, userId: signedIn.user.id } : null;
      await endSessions(ctx, request, reply, named);
      if (signedIn) audit(ctx, request.log, 'logout', { client_id: req.client?.id ?? null, subject: `user:${signedIn.user.id}` });
      return req.returnTo ? reply.redirect(req.returnTo, 303) : sendCardPage(ctx, reply, 200, signedOutPage(true));
    },
  };
}
