import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { ConsentRequired, InvalidRequest, LoginRequired, OAuthError } from '../../platform/http/errors.js';
import { errorAnswer } from '../../platform/http/html/index.js';
import { audit } from '../audit.js';
import { bodyParams, parseUrlEncoded, queryParams, type Params } from '../params.js';
import { sessionOf, type SignedIn } from '../sessions.js';
import { decide, grantRemembered, rememberedConsent } from './consent.js';
import { browserFormStep } from './login.js';
import { authorizeFlow, authorizePath, checkedForm, pageHeaders, renderConsent, renderLogin, sendErrorPage } from './pages.js';
import { PageError, RedirectError, redirectError, type AuthorizationRequest, type ReadRequest, type VerifiedTarget } from './request.js';
import { readAuthorizeRequest, usePushed } from './pushed.js';
import { write } from '../../platform/store/write-path.js';
import { withAdminRule } from '../scope-request.js';
import { userSubject, type User } from '../model/users.js';
import { readIdTokenHint } from '../oidc/id-token.js';

// GET/POST {auth_url}/authorize: the authorization code and implicit grants (RFC 6749 §4.1, §4.2).
// The forms carry the original request as one hidden field and every POST checks it again from
// scratch (request.ts): no server-side state between the pages — but for a pushed request (RFC 9126,
// pushed.ts), whose request_uri is what the forms carry. Then login.ts signs the user in and
// consent.ts turns their decision into a code or tokens.

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
      // The pushed request is answered (by this error): it answers nothing more (used already: the same).
      if (target.pushed) await write(ctx.store, (tx) => usePushed(tx, target!).catch(() => undefined));
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

/**
 * Whether this request needs the user to sign in (again) before anything else: nobody is signed
 * in, `prompt=login`, a sign-in older than `max_age`, or an `id_token_hint` naming someone else.
 */
async function signInNeeded(ctx: AppContext, req: AuthorizationRequest, signedIn: SignedIn | null): Promise<string | null> {
  let hinted: string | null = null;
  if (req.idTokenHint !== null) {
    const hint = await readIdTokenHint(ctx, req.idTokenHint);
    if (!hint || hint.aud !== req.client.id) throw new RedirectError(new InvalidRequest('id_token_hint is not an ID token this server issued to this client', { id_token_hint: 'is not valid' }));
    hinted = hint.sub;
  }
  if (!signedIn) return 'The user is not signed in';
  if (req.prompt.has('login')) return 'prompt=login asks the user to sign in again';
  if (req.maxAge !== null && Date.now() - signedIn.authTime > req.maxAge * 1000) return 'The sign-in is older than max_age';
  if (hinted !== null && hinted !== userSubject(signedIn.user.id)) return 'The signed-in user is not the one named by id_token_hint';
  return null;
}

/** An authorization request, from a GET or a relying party's POST (OpenID Connect Core §3.1.2.1): sign-in, then consent. */
async function startAuthorization(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, params: () => Params, raw: string) {
  return guarded(
    ctx,
    request,
    reply,
    () => readAuthorizeRequest(ctx, params(), raw, request),
    async (req) => {
      const signedIn = await sessionOf(ctx, request);
      const why = await signInNeeded(ctx, req, signedIn);
      if (why !== null) {
        if (req.prompt.has('none')) throw new RedirectError(new LoginRequired(why));
        return renderLogin(ctx, request, reply, authorizeFlow(ctx, req), 200, undefined, req.loginHint ?? undefined);
      }
      const asked = forUser(req, signedIn!.user);
      // Remembered consent: a live grant to this client that covers the request answers at once.
      const remembered = asked.prompt.has('consent') ? null : await rememberedConsent(ctx, asked, signedIn!.user);
      if (remembered !== null) return grantRemembered(ctx, request, reply, asked, signedIn!, remembered);
      if (req.prompt.has('none')) throw new RedirectError(new ConsentRequired('The user has not authorized this request yet'));
      return renderConsent(ctx, request, reply, authorizeFlow(ctx, asked), signedIn!.user);
    },
  );
}

export function authorizeGet(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const q = request.url.indexOf('?');
    return startAuthorization(ctx, request, reply, () => queryParams(request), q < 0 ? '' : request.url.slice(q + 1));
  };
}

export function authorizePost(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    // A relying party may send the authorization request itself as a form POST (OpenID Connect
    // Core §3.1.2.1; no `step`, none of our pages' fields): it is the GET's request, and goes on
    // as that GET. (A cross-site POST carries no SameSite=Lax cookie: answered here, it would not
    // see who is signed in.)
    let posted: Params;
    try {
      posted = bodyParams(request);
    } catch {
      pageHeaders(reply);
      return sendErrorPage(ctx, reply, 400, 'Invalid request', 'The form could not be read.');
    }
    if (!posted.has('step') && !posted.has('csrf_token') && posted.has('client_id')) {
      const raw = new URLSearchParams([...posted.multi].flatMap(([k, vs]) => vs.map((v): [string, string] => [k, v]))).toString();
      pageHeaders(reply);
      return reply.redirect(`${authorizePath(ctx)}?${raw}`, 303);
    }
    const form = await checkedForm(ctx, request, reply, 'Go back to the application and start again.');
    if (!form) return reply;
    const raw = form.repeated.has('request') ? '' : (form.values.get('request') ?? '');
    return guarded(
      ctx,
      request,
      reply,
      () => readAuthorizeRequest(ctx, parseUrlEncoded(raw), raw, request),
      async (req) => {
        // Signed out, the request starts again as it came (a pushed one is not rewritten).
        const restart = () => `${authorizePath(ctx)}${req.raw ? `?${req.raw}` : ''}`;
        return browserFormStep(ctx, request, reply, authorizeFlow(ctx, req), form, restart, (signedIn) => decide(ctx, request, reply, forUser(req, signedIn.user), signedIn, form));
      },
    );
  };
}
