import { OAuthError, tooManyRequests } from '../../http/errors.js';
import { audit } from '../audit.js';
import { allowedScopes, resolveRequestedScope, scopeUniverse } from '../scopes.js';
import { clearLoginFailures, loginRetryAfter, recordLoginFailure } from '../throttle.js';
import { createGrant, issuesRefreshTokens, mintTokens, newGrantId, saveTokens } from '../tokens.js';
import { userSubject, verifyUserCredentials } from '../users.js';
import type { TokenGrant } from './grant.js';

// RFC 6749 §4.3: only for clients registered with it. Failed attempts are throttled per user
// name and per IP. The grant lasts as long as its refresh token could (never past maxGrantTtl).

export function throttled(retryAfter: number): OAuthError {
  const err = tooManyRequests(retryAfter);
  return new OAuthError('too_many_requests', 'Too many failed login attempts; retry later', 429, { username: 'too many failed attempts' }, err.headers);
}

export const passwordGrant: TokenGrant = {
  grantType: 'password',
  parameters: ['username', 'password', 'scope'],
  async handler(ctx, request, { client }, params) {
    const username = params.require('username');
    const password = params.require('password');
    const universe = scopeUniverse(ctx.collections);
    const scope = resolveRequestedScope(params.get('scope'), allowedScopes(client.scope, universe), universe);

    const keys = { username, ip: request.ip };
    const wait = await loginRetryAfter(ctx, keys);
    if (wait > 0) {
      audit(request.log, 'login.throttled', { client_id: client.id, username, ip: request.ip, reason: 'password grant' });
      throw throttled(wait);
    }
    const user = await verifyUserCredentials(ctx, username, password);
    if (!user) {
      await recordLoginFailure(ctx, keys);
      audit(request.log, 'login.failed', { client_id: client.id, username, ip: request.ip, reason: 'password grant: bad credentials' });
      throw new OAuthError('invalid_grant', 'Invalid username or password', 400, { password: 'does not match the username' });
    }
    await clearLoginFailures(ctx, keys);

    const { auth } = ctx.config;
    const refresh = issuesRefreshTokens(client);
    const validity = Math.min(auth.maxGrantTtl, refresh ? auth.refreshTokenTtl : auth.accessTokenTtl);
    const grant = { id: newGrantId(), clientId: client.id, subject: userSubject(user.id), scope: scope.join(' '), expiresAt: Date.now() + validity * 1000 };
    const minted = await mintTokens(ctx, { client, grant, scope, refreshScope: refresh ? scope : null });
    const response = await ctx.store.db.transaction().execute(async (trx) => {
      await createGrant(trx, { ...grant, scope });
      return saveTokens(trx, minted);
    });
    audit(request.log, 'grant.issued', { grant_type: 'password', client_id: client.id, subject: grant.subject, grant_id: grant.id, scope: grant.scope });
    return response;
  },
};
