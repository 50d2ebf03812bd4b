import { oauthEndpoint } from './oauth-endpoint.js';
import type { AppContext } from '../../contract/context.js';
import { UnsupportedGrantType } from '../../platform/http/errors.js';
import { grantEnabled } from '../model/client.js';
import { authenticateClientFor } from './client-auth.js';
import { TOKEN_GRANTS } from '../grants/registry.js';
import { proofOfPossession } from './dpop.js';

// POST {auth_url}/token, one pipeline for every grant of the registry (grants/registry.ts):
// no-cache headers → parameters (JSON or form, no repeats) → grant type known → client
// authenticated → client registered for the grant → the grant's handler, reading only its
// declared parameters → the access token response record. A DPoP proof, checked once the client
// is known, binds the tokens of whatever grant to its key (dpop.ts).

export function tokenEndpoint(ctx: AppContext) {
  return oauthEndpoint(async (request, params) => {
    const grantType = params.require('grant_type');
    const grant = TOKEN_GRANTS.get(grantType);
    // A grant the deployment turned off (auth.grants) is answered as one it does not know.
    if (!grant || !grantEnabled(ctx.config, grantType))
      throw new UnsupportedGrantType(`Unsupported grant_type: ${grantType}`, {
        grant_type: `must be one of ${[...TOKEN_GRANTS.keys()].filter((g) => grantEnabled(ctx.config, g)).join(', ')}`,
      });
    const caller = await proofOfPossession(ctx, request, await authenticateClientFor(ctx, request, params, grant.grantType));
    params.restrictTo(grant.parameters);
    return grant.handler(ctx, request, caller, params);
  });
}
