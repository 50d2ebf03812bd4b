import type { FastifyReply, FastifyRequest } from 'fastify';
import { issuerOf } from '../issuer.js';
import type { AppContext } from '../../contract/context.js';
import { CODE_CHALLENGE_METHODS } from '../pkce.js';
import { scopeUniverse } from '../../contract/scopes.js';
import { grantEnabled } from '../model/client.js';
import { GRANTS, RESPONSE_TYPES } from '../grants/registry.js';
import { DEVICE_CODE_GRANT } from '../device-authorization.js';
import { CLAIMS_SUPPORTED, IDENTITY_SCOPES } from '../oidc/claims.js';
import { ID_TOKEN_ALGS } from '../model/client.js';
import { DPOP_ALGS } from '../../platform/crypto/dpop-proof.js';

// Authorization server metadata (RFC 8414) at {publicUrl}/.well-known/oauth-authorization-server,
// and the OpenID Provider metadata at {publicUrl}/.well-known/openid-configuration (the issuer:
// issuer.ts).

export const METADATA_PATH = '/.well-known/oauth-authorization-server';
/** OpenID Connect Discovery 1.0 §4: `{issuer}/.well-known/openid-configuration`. */
export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';

export function authorizationServerMetadata(ctx: AppContext): Record<string, unknown> {
  const { config } = ctx;
  const auth = config.authUrl;
  return {
    issuer: issuerOf(config),
    authorization_endpoint: `${auth}/authorize`,
    token_endpoint: `${auth}/token`,
    revocation_endpoint: `${auth}/revocation`,
    introspection_endpoint: `${auth}/introspection`,
    // RFC 9126: pushed authorization requests; required of every client only with auth.requirePushedAuthorizationRequests.
    pushed_authorization_request_endpoint: `${auth}/par`,
    require_pushed_authorization_requests: config.auth.requirePushedAuthorizationRequests,
    userinfo_endpoint: `${auth}/userinfo`,
    jwks_uri: `${auth}/jwks`,
    end_session_endpoint: `${auth}/logout`,
    // RFC 8628 §4, while the grant is enabled.
    ...(grantEnabled(config, DEVICE_CODE_GRANT) ? { device_authorization_endpoint: `${auth}/device_authorization` } : {}),
    // Each listed only while its grant is enabled (auth.grants).
    response_types_supported: RESPONSE_TYPES.filter(([, grant]) => grantEnabled(config, grant)).map(([type]) => type),
    response_modes_supported: ['query', 'fragment'],
    // RFC 9207: every authorization response carries `iss` (authorize/request.ts, redirectTo).
    authorization_response_iss_parameter_supported: true,
    grant_types_supported: GRANTS.filter((g) => grantEnabled(config, g.grantType)).map((g) => g.grantType),
    scopes_supported: [...IDENTITY_SCOPES, ...scopeUniverse(ctx.collections)],
    code_challenge_methods_supported: [...CODE_CHALLENGE_METHODS],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    token_types_supported: ['bearer', 'mac'],
    // RFC 9449 §5.1: a token request with a DPoP proof gets tokens bound to its key.
    dpop_signing_alg_values_supported: [...DPOP_ALGS],
    // draft-ietf-oauth-client-id-metadata-document: an https client_id names its metadata document.
    ...(config.auth.clientMetadataDocuments ? { client_id_metadata_document_supported: true } : {}),
    // RFC 7591: only while registration is offered (auth.registration).
    ...(config.auth.registration !== 'closed' ? { registration_endpoint: `${auth}/register` } : {}),
  };
}

/** The OpenID Provider metadata (Discovery §3): the same document, with what OpenID Connect adds. */
export function openidConfiguration(ctx: AppContext): Record<string, unknown> {
  return {
    ...authorizationServerMetadata(ctx),
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [...ID_TOKEN_ALGS],
    claims_supported: CLAIMS_SUPPORTED,
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    prompt_values_supported: ['none', 'login', 'consent'],
  };
}

export function metadataEndpoint(ctx: AppContext, document: (ctx: AppContext) => Record<string, unknown> = authorizationServerMetadata) {
  return async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('cache-control', 'public, max-age=300');
    return reply.type('application/json; charset=utf-8').send(document(ctx));
  };
}
