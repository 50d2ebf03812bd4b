import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { OAuthError } from '../http/errors.js';
import { randomSecret, sha256 } from '../security/secrets.js';
import { audit } from './audit.js';
import { findClient, type Client } from './clients.js';
import { browserBinding, csrfToken, verifyCsrfToken } from './csrf.js';
import { bodyParams, parseUrlEncoded, queryParams, type Params } from './params.js';
import { isWellFormedPkceValue } from './pkce.js';
import { allowedScopes, canonicalScope, resolveRequestedScope, scopeUniverse } from './scopes.js';
import { endSession, sessionUser, startSession } from './sessions.js';
import { throttled } from './grants/password.js';
import { clearLoginFailures, loginRetryAfter, recordLoginFailure } from './throttle.js';
import { createGrant, mintTokens, newGrantId, saveTokens } from './tokens.js';
import { userSubject, verifyUserCredentials, type User } from './users.js';
import { consentPage, describeDuration, errorPage, loginPage, pageSecurityPolicy } from './views.js';

// GET/POST {auth_url}/authorize: the authorization code and implicit grants (RFC 6749 §4.1, §4.2).
// A request is checked in two stages. Until the client and its redirect URI are known to be
// genuine nothing may be redirected (an error page instead); after that, every problem goes back
// to the client as RFC 6749 error parameters. The forms carry the original request as one hidden
// field and every POST checks it again from scratch: no server-side state between the pages.

type ResponseType = 'code' | 'token';

/** What stage 1 establishes: the client is genuine and its redirect URI registered. */
interface VerifiedTarget {
  client: Client;
  redirectUri: string;
  redirectUriGiven: boolean;
  state: string | undefined;
  /** The query string as received, echoed in the forms. */
  raw: string;
  /** Where errors go before response_type is accepted: the fragment for `token`, else the query. */
  errorMode: ResponseType;
}

interface AuthorizationRequest extends VerifiedTarget {
  responseType: ResponseType;
  scope: string[];
  codeChallenge: string | null;
}

/** A problem that must not be sent to the redirect URI (unknown client, unregistered URI). */
class PageError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    readonly description: string,
    readonly detail: Record<string, string>,
  ) {
    super(description);
  }
}

/** A problem reported to the client at its (verified) redirect URI. */
class RedirectError extends Error {
  constructor(
    readonly code: string,
    readonly description: string,
  ) {
    super(description);
  }
}

function qOf(accept: string, type: string): number {
  for (const part of accept.toLowerCase().split(',')) {
    const [range, ...params] = part.trim().split(';').map((s) => s.trim());
    if (range !== type) continue;
    const q = params.find((p) => p.startsWith('q='));
    return q ? Number(q.slice(2)) || 0 : 1;
  }
  return -1;
}

/** A JSON error instead of a page when the caller asks for JSON more than for HTML. */
function prefersJson(accept: string | undefined): boolean {
  if (!accept) return false;
  const json = qOf(accept, 'application/json');
  return json > 0 && json > qOf(accept, 'text/html');
}

interface ReadRequest {
  /** Stage 1 passed: the client and where errors may be sent. */
  partial: VerifiedTarget;
  /** Stage 2: throws RedirectError for anything else wrong. */
  complete: () => AuthorizationRequest;
}

/** Stage 1: who is asking and where the answer may go (PageError). Stage 2: everything else (RedirectError). */
async function readAuthorizationRequest(ctx: AppContext, params: Params, raw: string): Promise<ReadRequest> {
  for (const name of ['client_id', 'redirect_uri'])
    if (params.repeated.has(name)) throw new PageError(400, 'invalid_request', 'Invalid request', `The ${name} parameter is repeated.`, { [name]: 'must not be repeated' });
  const clientId = params.get('client_id');
  if (!clientId) throw new PageError(400, 'invalid_request', 'Invalid request', 'The request does not name a client (client_id).', { client_id: 'is required' });
  const client = await findClient(ctx, clientId);
  if (!client) throw new PageError(400, 'invalid_client', 'Unknown application', 'The application that sent you here is not registered.', { client_id: 'is unknown' });
  const given = params.get('redirect_uri');
  let redirectUri: string;
  if (given !== undefined) {
    if (!client.redirectUris.includes(given))
      throw new PageError(400, 'invalid_request', 'Invalid redirect address', 'The address this application wants to send you back to is not registered for it.', {
        redirect_uri: 'is not registered for this client',
      });
    redirectUri = given;
  } else if (client.redirectUris.length === 1) {
    redirectUri = client.redirectUris[0];
  } else {
    throw new PageError(400, 'invalid_request', 'Invalid request', 'The application must say where to send you back (redirect_uri).', {
      redirect_uri: client.redirectUris.length ? 'is required: the client has several' : 'the client has no redirect URI registered',
    });
  }
  const state = params.repeated.has('state') ? undefined : params.get('state');
  const errorMode: ResponseType = !params.repeated.has('response_type') && params.get('response_type') === 'token' ? 'token' : 'code';
  const partial: VerifiedTarget = { client, redirectUri, redirectUriGiven: given !== undefined, state, raw, errorMode };

  const complete = (): AuthorizationRequest => {
    for (const name of params.repeated) throw new RedirectError('invalid_request', `The ${name} parameter is repeated`);
    const responseType = params.get('response_type');
    if (!responseType) throw new RedirectError('invalid_request', 'response_type is required');
    if (responseType !== 'code' && responseType !== 'token') throw new RedirectError('unsupported_response_type', `Unsupported response_type: ${responseType}`);
    const grant = responseType === 'code' ? 'authorization_code' : 'implicit';
    if (!client.grantTypes.includes(grant)) throw new RedirectError('unauthorized_client', `The client is not registered for the ${grant} grant`);
    const universe = scopeUniverse(ctx.collections);
    let scope: string[];
    try {
      scope = resolveRequestedScope(params.get('scope'), allowedScopes(client.scope, universe), universe);
    } catch (e) {
      throw new RedirectError('invalid_scope', (e as OAuthError).description);
    }
    let codeChallenge: string | null = null;
    if (responseType === 'code') {
      const challenge = params.get('code_challenge');
      const method = params.get('code_challenge_method');
      if (challenge === undefined) {
        if (client.public) throw new RedirectError('invalid_request', 'PKCE is required for public clients: send code_challenge with code_challenge_method=S256');
        if (method !== undefined) throw new RedirectError('invalid_request', 'code_challenge_method without code_challenge');
      } else {
        if (method !== 'S256') throw new RedirectError('invalid_request', 'code_challenge_method must be S256');
        if (!isWellFormedPkceValue(challenge)) throw new RedirectError('invalid_request', 'code_challenge is malformed');
        codeChallenge = challenge;
      }
    }
    return { ...partial, responseType, scope, codeChallenge };
  };
  return { partial, complete };
}

/** Where the answer goes: the query for the code grant, the fragment for the implicit grant. */
function redirectTo(redirectUri: string, responseType: ResponseType | undefined, values: Record<string, string | number | undefined>): string {
  const url = new URL(redirectUri);
  const entries = Object.entries(values).filter((e): e is [string, string | number] => e[1] !== undefined);
  if (responseType === 'token') url.hash = new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)])).toString();
  else for (const [k, v] of entries) url.searchParams.append(k, String(v));
  return url.toString();
}

/** The form-action source that lets a consent POST be redirected to the client. */
function formTarget(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
}

function pageHeaders(reply: FastifyReply, formTargets: string[] = []): void {
  reply.header('content-security-policy', pageSecurityPolicy(formTargets));
  reply.header('x-frame-options', 'DENY');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('cache-control', 'no-store');
  reply.header('pragma', 'no-cache');
}

function sendPage(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(html);
}

function validityChoices(ctx: AppContext): { seconds: number; label: string }[] {
  const max = ctx.config.auth.maxGrantTtl;
  const seconds = [...new Set([3600, 86400, 30 * 86400].filter((s) => s < max).concat(max))];
  return seconds.map((s) => ({ seconds: s, label: describeDuration(s) }));
}

function scopeLabel(ctx: AppContext, scope: string): string {
  const [collection, access] = scope.split(':');
  const model = ctx.collections.get(collection);
  const what = `${model?.access === 'shared' ? '' : 'your '}${model?.title ?? collection}`;
  return access === 'read' ? `Read ${what}` : `Create, change and delete ${what}`;
}

export function authorizePath(ctx: AppContext): string {
  return `${ctx.config.basePath}${ctx.config.auth.path}/authorize`;
}

async function renderLogin(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, req: AuthorizationRequest, status = 200, error?: string, username?: string) {
  const csrf = await csrfToken(ctx, browserBinding(ctx, request, reply));
  pageHeaders(reply);
  return sendPage(reply, status, loginPage({ action: authorizePath(ctx), clientName: req.client.name, request: { request: req.raw }, csrf, error, username }));
}

async function renderConsent(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, req: AuthorizationRequest, user: User, status = 200, error?: string) {
  const csrf = await csrfToken(ctx, browserBinding(ctx, request, reply));
  const validities = validityChoices(ctx);
  pageHeaders(reply, [formTarget(req.redirectUri)]);
  return sendPage(
    reply,
    status,
    consentPage({
      action: authorizePath(ctx),
      clientName: req.client.name,
      clientId: req.client.id,
      username: user.username,
      scopes: req.scope.map((value) => ({ value, label: scopeLabel(ctx, value) })),
      validities,
      chosenTtl: validities[0].seconds,
      redirectTarget: new URL(req.redirectUri).origin !== 'null' ? new URL(req.redirectUri).origin : req.redirectUri,
      request: { request: req.raw },
      csrf,
      error,
    }),
  );
}

/** Runs a step of the flow, turning its errors into a page, a JSON error or a redirect to the client. */
async function guarded(
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
      if (prefersJson(request.headers.accept)) throw new OAuthError(e.code, e.description, e.status, e.detail);
      return sendPage(reply, e.status, errorPage(e.title, e.description));
    }
    if (e instanceof RedirectError && target) {
      audit(request.log, 'grant.denied', { client_id: target.client.id, reason: `${e.code}: ${e.description}` });
      pageHeaders(reply);
      return reply.redirect(redirectTo(target.redirectUri, target.errorMode, { error: e.code, error_description: e.description, state: target.state }), 302);
    }
    if (e instanceof OAuthError && !target) {
      // Unparseable parameters (bad percent-encoding): nothing is verified, so nothing is redirected.
      pageHeaders(reply);
      if (prefersJson(request.headers.accept)) throw e;
      return sendPage(reply, e.status, errorPage('Invalid request', e.description));
    }
    throw e;
  }
}

export function authorizeGet(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const q = request.url.indexOf('?');
    const raw = q < 0 ? '' : request.url.slice(q + 1);
    return guarded(
      request,
      reply,
      () => readAuthorizationRequest(ctx, queryParams(request), raw),
      async (req) => {
        const user = await sessionUser(ctx, request);
        return user ? renderConsent(ctx, request, reply, req, user) : renderLogin(ctx, request, reply, req);
      },
    );
  };
}

export function authorizePost(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    let form: Params;
    try {
      form = bodyParams(request);
    } catch {
      pageHeaders(reply);
      return sendPage(reply, 400, errorPage('Invalid request', 'The form could not be read.'));
    }
    const raw = form.repeated.has('request') ? '' : (form.values.get('request') ?? '');
    if (!(await verifyCsrfToken(ctx, request, form.get('csrf_token')))) {
      pageHeaders(reply);
      return sendPage(reply, 403, errorPage('This form has expired', 'Go back to the application and start again.'));
    }
    return guarded(
      request,
      reply,
      () => readAuthorizationRequest(ctx, parseUrlEncoded(raw), raw),
      async (req) => {
        const step = form.get('step');
        if (step === 'login') return login(ctx, request, reply, req, form);
        if (step === 'logout') {
          await endSession(ctx, request, reply);
          pageHeaders(reply);
          return reply.redirect(`${authorizePath(ctx)}${req.raw ? `?${req.raw}` : ''}`, 303);
        }
        const user = await sessionUser(ctx, request);
        if (!user) return renderLogin(ctx, request, reply, req, 401, 'Your session has ended. Sign in again.');
        if (step === 'consent') return decide(ctx, request, reply, req, user, form);
        pageHeaders(reply);
        return sendPage(reply, 400, errorPage('Invalid request', 'The form was not understood.'));
      },
    );
  };
}

async function login(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, req: AuthorizationRequest, form: Params) {
  const username = form.get('username');
  const password = form.get('password');
  if (!username || !password) return renderLogin(ctx, request, reply, req, 400, 'Enter your username and password.', username);
  const keys = { username, ip: request.ip };
  const wait = await loginRetryAfter(ctx, keys);
  if (wait > 0) {
    audit(request.log, 'login.throttled', { client_id: req.client.id, username, ip: request.ip, reason: 'login form' });
    reply.header('retry-after', throttled(wait).headers['retry-after']);
    return renderLogin(ctx, request, reply, req, 429, `Too many failed attempts. Try again in ${describeDuration(wait)}.`, username);
  }
  const user = await verifyUserCredentials(ctx, username, password);
  if (!user) {
    await recordLoginFailure(ctx, keys);
    audit(request.log, 'login.failed', { client_id: req.client.id, username, ip: request.ip, reason: 'login form: bad credentials' });
    return renderLogin(ctx, request, reply, req, 401, 'The username or password is not correct.', username);
  }
  await clearLoginFailures(ctx, keys);
  await startSession(ctx, request, reply, user.id);
  audit(request.log, 'login.succeeded', { client_id: req.client.id, subject: userSubject(user.id), ip: request.ip });
  pageHeaders(reply);
  // Post/redirect/get: the consent page is a plain GET of the original request (303, SPEC's only 3xx for a POST).
  return reply.redirect(`${authorizePath(ctx)}${req.raw ? `?${req.raw}` : ''}`, 303);
}

async function decide(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, req: AuthorizationRequest, user: User, form: Params) {
  const subject = userSubject(user.id);
  const decision = form.get('decision');
  pageHeaders(reply, [formTarget(req.redirectUri)]);
  if (decision === 'deny') {
    audit(request.log, 'grant.denied', { client_id: req.client.id, subject, reason: 'the user denied access' });
    return reply.redirect(redirectTo(req.redirectUri, req.responseType, { error: 'access_denied', error_description: 'The user denied access', state: req.state }), 302);
  }
  if (decision !== 'allow') return renderConsent(ctx, request, reply, req, user, 400, 'Choose Allow or Deny.');
  const chosen = form.all('scope');
  if (chosen.some((s) => !req.scope.includes(s))) return renderConsent(ctx, request, reply, req, user, 400, 'Only the permissions listed can be granted.');
  if (chosen.length === 0) return renderConsent(ctx, request, reply, req, user, 400, 'Choose at least one permission, or deny access.');
  const ttlText = form.get('ttl') ?? '';
  const ttl = Number(ttlText);
  if (!/^\d+$/.test(ttlText) || ttl < 1 || ttl > ctx.config.auth.maxGrantTtl)
    return renderConsent(ctx, request, reply, req, user, 400, `Choose how long the access is valid (at most ${describeDuration(ctx.config.auth.maxGrantTtl)}).`);

  const scope = canonicalScope(chosen, req.scope);
  const now = Date.now();
  const grantExpiresAt = now + ttl * 1000;
  if (req.responseType === 'code') {
    const code = randomSecret(32);
    await ctx.store.db
      .insertInto('authorization_codes')
      .values({
        hash: sha256(code),
        client_id: req.client.id,
        subject,
        redirect_uri: req.redirectUri,
        redirect_uri_given: req.redirectUriGiven ? 1 : 0,
        scope: scope.join(' '),
        requested_scope: req.scope.join(' '),
        grant_expires_at: grantExpiresAt,
        code_challenge: req.codeChallenge,
        code_challenge_method: req.codeChallenge ? 'S256' : null,
        expires_at: now + ctx.config.auth.codeTtl * 1000,
        used_at: null,
        grant_id: null,
        created_at: now,
      })
      .execute();
    // Used codes are kept while their grant can live, so that a late replay still revokes it.
    await ctx.store.db.deleteFrom('authorization_codes').where('expires_at', '<=', now).where('grant_expires_at', '<=', now).execute();
    audit(request.log, 'code.issued', { client_id: req.client.id, subject, scope: scope.join(' '), reason: `valid for ${ttl}s` });
    return reply.redirect(redirectTo(req.redirectUri, 'code', { code, state: req.state }), 302);
  }

  const grant = { id: newGrantId(), clientId: req.client.id, subject, scope: scope.join(' '), expiresAt: grantExpiresAt };
  const minted = await mintTokens(ctx, { client: req.client, grant, scope, refreshScope: null });
  const tokens = await ctx.store.db.transaction().execute(async (trx) => {
    await createGrant(trx, { ...grant, scope });
    return saveTokens(trx, minted);
  });
  audit(request.log, 'grant.issued', { grant_type: 'implicit', client_id: req.client.id, subject, grant_id: grant.id, scope: grant.scope });
  return reply.redirect(
    redirectTo(req.redirectUri, 'token', {
      access_token: tokens.access_token,
      token_type: tokens.token_type,
      expires_in: tokens.expires_in,
      scope: tokens.scope,
      mac_key: tokens.mac_key,
      mac_algorithm: tokens.mac_algorithm,
      state: req.state,
    }),
    302,
  );
}
