import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { ConsentRequired, LoginRequired, OAuthError } from '../../platform/http/errors.js';
import { errorAnswer } from '../../platform/http/html/index.js';
import { audit } from '../audit.js';
import { parseUrlEncoded, queryParams } from '../params.js';
import { endSession, sessionUser } from '../sessions.js';
import { decide, grantRemembered, rememberedConsent } from './consent.js';
import { login, loginSecondStep, loginWithPasskey } from './login.js';
import { authorizePath, checkedForm, pageHeaders, renderConsent, renderLogin, sendErrorPage } from './pages.js';
import { PageError, RedirectError, readAuthorizationRequest, redirectError, type AuthorizationRequest, type ReadRequest, type VerifiedTarget } from './request.js';
import { withAdminRule } from '../scope-request.js';
import type { User } from '../model/users.js';

// GET/POST {auth_url}/authorize: the authorization code and implicit grants (RFC 6749 §4.1, §4.2).
// The forms carry the original request as one hidden field and every POST checks it again from
// scratch (request.ts): no server-side state between the pages. Then login.ts signs the user in
// and consent.ts turns their decision into a code or tokens.

async function guarded(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  read: () => Promise<ReadRequest>,
  step: (req: AuthorizationRequest) => Promise<FastifyReply>,
): Promise<FastifyReply> {
  let target: VerifiedTarget | undefined;
  try {
    const read_ = await read();
    target = read_.partial;
    return await step(read_.complete());
  } catch (e) {
    if (e instanceof PageError) {
      pageHeaders(reply);
      if (!errorAnswer(request, e.status, 'unless-json').page) throw e.asOAuthError();
      return sendErrorPage(ctx, reply, e.status, e.title, e.description);
    }
    if (e instanceof RedirectError && target) {
      audit(ctx, request.log, 'grant.denied', { client_id: target.client.id, reason: `${e.code}: ${e.description}` });
      pageHeaders(reply);
      return reply.redirect(redirectError(ctx, target.redirectUri, target.errorMode, e.error, target.state), 302);
    }
    if (e instanceof OAuthError && !target) {
      // Unparseable parameters (bad percent-encoding): nothing is verified, so nothing is redirected.
      pageHeaders(reply);
      if (!errorAnswer(request, e.status, 'unless-json').page) throw e;
      return sendErrorPage(ctx, reply, e.status, 'Invalid request', e.description);
    }
    throw e;
  }
}

/** The request as this user may be granted it (the admin rule of scope-request.ts); nothing left is invalid_scope. */
function forUser(req: AuthorizationRequest, user: User): AuthorizationRequest {
  try {
    return { ...req, scope: withAdminRule(req.scope, req.client, { user, via: req.grant }) };
  } catch (e) {
    throw e instanceof OAuthError ? new RedirectError(e) : e;
  }
}

export function authorizeGet(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const q = request.url.indexOf('?');
    const raw = q < 0 ? '' : request.url.slice(q + 1);
    return guarded(
      ctx,
      request,
      reply,
      () => readAuthorizationRequest(ctx, queryParams(request), raw),
      async (req) => {
        const user = await sessionUser(ctx, request);
        if (!user) {
          if (req.prompt.has('none')) throw new RedirectError(new LoginRequired('The user is not signed in'));
          return renderLogin(ctx, request, reply, req);
        }
        const asked = forUser(req, user);
        // Remembered consent: a live grant to this client that covers the request answers at once.
        const remembered = asked.prompt.has('consent') ? null : await rememberedConsent(ctx, asked, user);
        if (remembered !== null) return grantRemembered(ctx, request, reply, asked, user, remembered);
        if (req.prompt.has('none')) throw new RedirectError(new ConsentRequired('The user has not authorized this request yet'));
        return renderConsent(ctx, request, reply, asked, user);
      },
    );
  };
}

export function authorizePost(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const form = await checkedForm(ctx, request, reply, 'Go back to the application and start again.');
    if (!form) return reply;
    const raw = form.repeated.has('request') ? '' : (form.values.get('request') ?? '');
    return guarded(
      ctx,
      request,
      reply,
      () => readAuthorizationRequest(ctx, parseUrlEncoded(raw), raw),
      async (req) => {
        const step = form.get('step');
        if (step === 'login') return login(ctx, request, reply, req, form);
        if (step === 'second-factor' || step === 'enrol') return loginSecondStep(ctx, request, reply, req, form);
        if (step === 'passkey') return loginWithPasskey(ctx, request, reply, req, form);
        if (step === 'logout') {
          await endSession(ctx, request, reply);
          pageHeaders(reply);
          return reply.redirect(`${authorizePath(ctx)}${req.raw ? `?${req.raw}` : ''}`, 303);
        }
        const user = await sessionUser(ctx, request);
        if (!user) return renderLogin(ctx, request, reply, req, 401, 'Your session has ended. Sign in again.');
        if (step === 'consent') return decide(ctx, request, reply, forUser(req, user), user, form);
        return sendErrorPage(ctx, reply, 400, 'Invalid request', 'The form was not understood.');
      },
    );
  };
}
