import { OAuthError } from '../../http/errors.js';
import { audit } from '../audit.js';
import { allowedScopes, resolveRequestedScope, scopeUniverse } from '../scopes.js';
import { mintTokens, saveTokens } from '../tokens.js';
import { clientSubject } from '../users.js';
import type { TokenGrant } from './grant.js';

// RFC 6749 §4.4: a confidential client acting in its own name. Its subject is `client:<id>`;
// the token stands alone (no grant row, no refresh token): one insert per token, committed
// together with the other token requests of the same moment.

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
      id: null,
      clientId: client.id,
      subject: clientSubject(client.id),
      scope: scope.join(' '),
      expiresAt: Date.now() + ctx.config.auth.accessTokenTtl * 1000,
    };
    const minted = await mintTokens(ctx, { client, grant, scope, refreshScope: null });
    await ctx.store.writes.run(async (trx) => void (await saveTokens(trx, minted)));
    const response = minted.response;
    audit(request.log, 'grant.issued', { grant_type: 'client_credentials', client_id: client.id, subject: grant.subject, scope: grant.scope });
    return response;
  },
};
