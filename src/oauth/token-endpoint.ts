import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { OAuthError } from '../http/errors.js';
import { audit } from './audit.js';
import { authenticateClient, claimedClientId, type GrantType } from './clients.js';
import { bodyParams } from './params.js';
import type { TokenGrant } from './grants/grant.js';
import { authorizationCodeGrant } from './grants/authorization-code.js';
import { passwordGrant } from './grants/password.js';
import { clientCredentialsGrant } from './grants/client-credentials.js';
import { refreshTokenGrant } from './grants/refresh-token.js';

// POST {auth_url}/token, one pipeline for every grant: no-cache headers → parameters (JSON or
// form, no repeats) → grant type known → client authenticated → client registered for the
// grant → the grant's handler → the access token response record.

export const TOKEN_GRANTS: ReadonlyMap<string, TokenGrant> = new Map(
  [authorizationCodeGrant, passwordGrant, clientCredentialsGrant, refreshTokenGrant].map((g) => [g.grantType, g]),
);

/** RFC 6749 §5.1: token responses (and errors) must not be cached. */
export function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store');
  reply.header('pragma', 'no-cache');
}

export function tokenEndpoint(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    noStore(reply);
    const params = bodyParams(request);
    params.requireSingle();
    const grantType = params.require('grant_type');
    const grant = TOKEN_GRANTS.get(grantType);
    if (!grant)
      throw new OAuthError('unsupported_grant_type', `Unsupported grant_type: ${grantType}`, 400, {
        grant_type: `must be one of ${[...TOKEN_GRANTS.keys()].join(', ')}`,
      });
    let caller;
    try {
      caller = await authenticateClient(ctx, request, params);
    } catch (e) {
      if (e instanceof OAuthError && e.code === 'invalid_client')
        audit(request.log, 'client.auth_failed', { client_id: claimedClientId(request, params), grant_type: grantType, ip: request.ip, reason: e.description });
      throw e;
    }
    if (!caller.client.grantTypes.includes(grantType as GrantType))
      throw new OAuthError('unauthorized_client', `The client is not registered for ${grantType}`, 400, {
        grant_type: `not allowed for this client (registered: ${caller.client.grantTypes.join(', ')})`,
      });
    const response = await grant.handler(ctx, request, caller, params);
    return reply.code(200).type('application/json; charset=utf-8').send(response);
  };
}
