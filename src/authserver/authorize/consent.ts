import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { canonicalScope } from '../scope-request.js';
import { randomSecret, sha256 } from '../../platform/crypto/secrets.js';
import { write } from '../../platform/store/write-path.js';
import { audit } from '../audit.js';
import { userSubject, type User } from '../model/users.js';
import type { Params } from '../params.js';
import { insertCode } from '../store/grants.js';
import { issueTokens } from '../tokens.js';
import { pageHeaders, renderConsent } from './pages.js';
import { formTarget, redirectTo, type AuthorizationRequest } from './request.js';
import { describeDuration } from './views.js';

// The consent step: the user's decision becomes an authorization code (code grant) or tokens in
// the fragment (implicit grant, through the same token pipeline as every other grant).

export async function decide(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, req: AuthorizationRequest, user: User, form: Params) {
  const subject = userSubject(user.id);
  const decision = form.get('decision');
  pageHeaders(reply, [formTarget(req.redirectUri)]);
  if (decision === 'deny') {
    audit(ctx, request.log, 'grant.denied', { client_id: req.client.id, subject, reason: 'the user denied access' });
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
    await write(ctx.store, (tx) =>
      insertCode(tx, {
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
      }),
    );
    audit(ctx, request.log, 'code.issued', { client_id: req.client.id, subject, scope: scope.join(' '), reason: `valid for ${ttl}s` });
    return reply.redirect(redirectTo(req.redirectUri, 'code', { code, state: req.state }), 302);
  }

  const tokens = (await issueTokens(ctx, request.log, {
    grantType: 'implicit',
    client: req.client,
    subject,
    grant: { new: { scope, expiresAt: grantExpiresAt } },
    scope,
    refreshScope: null,
    audit: { event: 'grant.issued' },
  }))!;
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
