import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { canonicalScope } from '../scope-request.js';
import { ADMIN_SCOPE } from '../../contract/scope-name.js';
import { randomSecret, sha256 } from '../../platform/crypto/secrets.js';
import { write } from '../../platform/store/write-path.js';
import { AccessDenied } from '../../platform/http/errors.js';
import { audit } from '../audit.js';
import { userSubject, type User } from '../model/users.js';
import type { SignedIn } from '../sessions.js';
import { OPENID_SCOPE, isIdentityScope } from '../oidc/claims.js';
import type { Params } from '../params.js';
import { insertCode, listLiveGrantRows } from '../store/grants.js';
import { issueTokens, type Grant } from '../tokens.js';
import { pageHeaders, renderConsent } from './pages.js';
import { formTarget, redirectError, redirectTo, type AuthorizationRequest } from './request.js';
import { usePushed } from './pushed.js';
import { describeDuration } from './views.js';

// The consent step: the user's decision becomes an authorization code (code grant) or tokens in
// the fragment (implicit grant, through the same token pipeline as every other grant).

export async function decide(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, req: AuthorizationRequest, signedIn: SignedIn, form: Params) {
  const { user } = signedIn;
  const subject = userSubject(user.id);
  const decision = form.get('decision');
  pageHeaders(reply, [formTarget(req.redirectUri)]);
  if (decision === 'deny') {
    // A pushed request is answered once (RFC 9126 §4): a denial too.
    await write(ctx.store, (tx) => usePushed(tx, req));
    audit(ctx, request.log, 'grant.denied', { client_id: req.client.id, subject, reason: 'the user denied access' });
    return reply.redirect(redirectError(ctx, req.redirectUri, req.responseType, new AccessDenied('The user denied access'), req.state), 302);
  }
  const ttlText = form.get('ttl') ?? '';
  const ttl = Number(ttlText);
  // The page comes back with what the user ticked and picked.
  const again = (message: string) => renderConsent(ctx, request, reply, req, user, 400, message, { scopes: form.all('scope'), ttl: /^\d+$/.test(ttlText) ? ttl : null });
  if (decision !== 'allow' && decision !== 'allow_read') return again('Choose Allow or Deny.');
  // "Read only": the read scopes of the request, whatever the boxes say.
  const ticked = form.all('scope');
  // `openid` is the sign-in the application asked for: it comes with any Allow (the page shows it fixed).
  const withSignIn = (scopes: string[]) => (req.scope.includes(OPENID_SCOPE) && !scopes.includes(OPENID_SCOPE) ? [OPENID_SCOPE, ...scopes] : scopes);
  const chosen = withSignIn(decision === 'allow_read' ? req.scope.filter((s) => s.endsWith(':read') || (isIdentityScope(s) && ticked.includes(s))) : ticked);
  if (chosen.some((s) => !req.scope.includes(s))) return again('Only the permissions listed can be granted.');
  if (chosen.length === 0) return again(decision === 'allow_read' ? 'This application asked for no read permission.' : 'Choose at least one permission, or deny access.');
  if (!/^\d+$/.test(ttlText) || ttl < 1 || ttl > ctx.config.auth.maxGrantTtl)
    return again(`Choose how long the access is valid (at most ${describeDuration(ctx.config.auth.maxGrantTtl)}).`);

  const scope = canonicalScope(chosen, req.scope);
  return grantAccess(ctx, request, reply, req, signedIn, scope, { new: Date.now() + ttl * 1000 }, `valid for ${ttl}s`);
}

/**
 * Remembered consent: the live grant this user gave this client (there is one per user and
 * client) when it covers every scope of the request, or null. A request it covers skips the
 * consent page; what is issued then belongs to that grant and ends with its validity, never later.
 */
export async function rememberedConsent(ctx: AppContext, req: AuthorizationRequest, user: User): Promise<Grant | null> {
  // `admin` is asked every time (docs/oauth.md#scopes): the page, or consent_required.
  if (req.scope.includes(ADMIN_SCOPE)) return null;
  const now = Date.now();
  const grants = await listLiveGrantRows(ctx.store, { subject: userSubject(user.id), clientId: req.client.id }, now, 100);
  for (const g of grants) {
    const held = new Set(g.scope.split(' '));
    if (req.scope.every((s) => held.has(s))) return { id: g.id, clientId: g.client_id, subject: g.subject, scope: g.scope, expiresAt: Number(g.expires_at) };
  }
  return null;
}

/** Issues what the request asked for without showing the consent page (see rememberedConsent). */
export async function grantRemembered(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, req: AuthorizationRequest, signedIn: SignedIn, grant: Grant) {
  pageHeaders(reply, [formTarget(req.redirectUri)]);
  return grantAccess(ctx, request, reply, req, signedIn, req.scope, { existing: grant }, 'remembered consent');
}

/**
 * The code (code grant) or tokens in the fragment (implicit), for `scope`: under the remembered
 * grant, or as a new authorization ending at `new` (it replaces this user's grant to the client
 * when the code is redeemed, or at once for the implicit grant).
 */
async function grantAccess(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  req: AuthorizationRequest,
  signedIn: SignedIn,
  scope: string[],
  grant: { new: number } | { existing: Grant },
  reason: string,
) {
  const subject = userSubject(signedIn.user.id);
  const now = Date.now();
  const grantExpiresAt = 'new' in grant ? grant.new : grant.existing.expiresAt;
  if (req.responseType === 'code') {
    const code = randomSecret(32);
    await write(ctx.store, async (tx) => {
      // Of two answers to one pushed request (two tabs, a replayed form), the first counts.
      await usePushed(tx, req, now);
      await insertCode(tx, {
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
        // A remembered authorization's code belongs to the existing grant from the start.
        grant_id: 'existing' in grant ? grant.existing.id : null,
        created_at: now,
        // What the ID token of this code's exchange says about the sign-in (OpenID Connect).
        nonce: req.nonce,
        auth_time: signedIn.authTime,
        sid: signedIn.sid,
        amr: JSON.stringify(signedIn.amr),
      });
    });
    audit(ctx, request.log, 'code.issued', { client_id: req.client.id, subject, scope: scope.join(' '), reason });
    return reply.redirect(redirectTo(ctx, req.redirectUri, 'code', { code, state: req.state }), 302);
  }

  await write(ctx.store, (tx) => usePushed(tx, req, now));
  const tokens = (await issueTokens(ctx, request.log, {
    grantType: 'implicit',
    client: req.client,
    subject,
    grant: 'existing' in grant ? grant : { new: { scope, expiresAt: grantExpiresAt } },
    scope,
    refreshScope: null,
    audit: { event: 'grant.issued' },
  }))!;
  return reply.redirect(
    redirectTo(ctx, req.redirectUri, 'token', {
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
