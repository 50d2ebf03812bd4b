import { OAuthError } from '../../http/errors.js';
import { audit } from '../audit.js';
import { allowedScopes, resolveRequestedScope, scopeUniverse } from '../scopes.js';
import { createGrant, mintTokens, saveTokens, newGrantId } from '../tokens.js';
import { clientSubject } from '../users.js';
import type { TokenGrant } from './grant.js';

// RFC 6749 §4.4: a confidential client acting in its own name. Its subject is `client:<id>`;
// each request is a grant of its own that lasts as long as the access token (no refresh token).

export const clientCredentialsGrant: TokenGrant = {
  grantType: 'client_credentials',
  parameters: ['scope'],
  async handler(ctx, request, { client }, params) {
    if (client.public)
      throw new OAuthError('unauthorized_client', 'A public client cannot use client_credentials', 400, {
        grant_type: 'needs a confidential client',
      });
    const universe = scopeUniverse(ctx.collections);
    const scope = resolveRequestedScope(params.get('scope'), allowedScopes(client.scope, universe), universe);
    const grant = {
      id: newGrantId(),
      clientId: client.id,
      subject: clientSubject(client.id),
      scope: scope.join(' '),
      expiresAt: Date.now() + ctx.config.auth.accessTokenTtl * 1000,
    };
    const minted = await mintTokens(ctx, { client, grant, scope, refreshScope: null });
    // No transaction needed: a grant row whose token insert failed has no token and harms nothing.
    await createGrant(ctx.store.db, { ...grant, scope });
    const response = await saveTokens(ctx.store.db, minted);
    audit(request.log, 'grant.issued', { grant_type: 'client_credentials', client_id: client.id, subject: grant.subject, grant_id: grant.id, scope: grant.scope });
    return response;
  },
};
