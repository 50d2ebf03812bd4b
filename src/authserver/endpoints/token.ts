import { oauthEndpoint } from './oauth-endpoint.js';
import type { AppContext } from '../../contract/context.js';
import { OAuthError } from '../../platform/http/errors.js';
import { audit } from '../audit.js';
import { grantEnabled, type GrantType } from '../model/client.js';
import { authenticateClient, claimedClientId } from './client-auth.js';
import type { TokenGrant } from '../grants/grant.js';
import { authorizationCodeGrant } from '../grants/authorization-code.js';
import { passwordGrant } from '../grants/password.js';
import { clientCredentialsGrant } from '../grants/client-credentials.js';
import { refreshTokenGrant } from '../grants/refresh-token.js';

// POST {auth_url}/token, one pipeline for every grant: no-cache headers → parameters (JSON or
// form, no repeats) → grant type known → client authenticated → client registered for the
// grant → the grant's handler → the access token response record.

export const TOKEN_GRANTS: ReadonlyMap<string, TokenGrant> = new Map(
  [authorizationCodeGrant, passwordGrant, clientCredentialsGrant, refreshTokenGrant].map((g) => [g.grantType, g]),
);


export function tokenEndpoint(ctx: AppContext) {
  return oauthEndpoint(async (request, params) => {
    const grantType = params.require('grant_type');
    const grant = TOKEN_GRANTS.get(grantType);
    // A grant the deployment turned off (auth.grants) is answered as one it does not know.
    if (!grant || !grantEnabled(ctx.config, grantType))
      throw new OAuthError('unsupported_grant_type', `Unsupported grant_type: ${grantType}`, 400, {
        grant_type: `must be one of ${[...TOKEN_GRANTS.keys()].filter((g) => grantEnabled(ctx.config, g)).join(', ')}`,
      });
    let caller;
    try {
      caller = await authenticateClient(ctx, request, params);
    } catch (e) {
      if (e instanceof OAuthError && e.code === 'invalid_client')
        audit(ctx, request.log, 'client.auth_failed', { client_id: claimedClientId(request, params), grant_type: grantType, ip: request.ip, reason: e.description });
      throw e;
    }
    if (!caller.client.grantTypes.includes(grantType as GrantType))
      throw new OAuthError('unauthorized_client', `The client is not registered for ${grantType}`, 400, {
        grant_type: `not allowed for this client (registered: ${caller.client.grantTypes.join(', ')})`,
      });
    return grant.handler(ctx, request, caller, params);
  });
}
