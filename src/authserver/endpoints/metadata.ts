import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../platform/config/load.js';
import type { AppContext } from '../../contract/context.js';
import { CODE_CHALLENGE_METHODS } from '../pkce.js';
import { scopeUniverse } from '../../contract/scopes.js';
import { grantEnabled } from '../model/client.js';
import { GRANTS, RESPONSE_TYPES } from '../grants/registry.js';

// Authorization server metadata (RFC 8414) at {publicUrl}/.well-known/oauth-authorization-server.
// The issuer identifier is publicUrl: with a path-less publicUrl this is exactly the RFC 8414
// location; with a path (https://example.org/api) the document stays under that path like every
// other route, and docs/oauth.md says so.

export function issuerOf(config: Config): string {
  return config.publicUrl;
}

export const METADATA_PATH = '/.well-known/oauth-authorization-server';

export function authorizationServerMetadata(ctx: AppContext): Record<string, unknown> {
  const { config } = ctx;
  const auth = config.authUrl;
  return {
    issuer: issuerOf(config),
    authorization_endpoint: `${auth}/authorize`,
    token_endpoint: `${auth}/token`,
    revocation_endpoint: `${auth}/revocation`,
    introspection_endpoint: `${auth}/introspection`,
    // Each listed only while its grant is enabled (auth.grants).
    response_types_supported: RESPONSE_TYPES.filter(([, grant]) => grantEnabled(config, grant)).map(([type]) => type),
    response_modes_supported: ['query', 'fragment'],
    // RFC 9207: every authorization response carries `iss` (authorize/request.ts, redirectTo).
    authorization_response_iss_parameter_supported: true,
    grant_types_supported: GRANTS.filter((g) => grantEnabled(config, g.grantType)).map((g) => g.grantType),
    scopes_supported: scopeUniverse(ctx.collections),
    code_challenge_methods_supported: [...CODE_CHALLENGE_METHODS],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    token_types_supported: ['bearer', 'mac'],
  };
}

export function metadataEndpoint(ctx: AppContext) {
  return async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('cache-control', 'public, max-age=300');
    return reply.type('application/json; charset=utf-8').send(authorizationServerMetadata(ctx));
  };
}
