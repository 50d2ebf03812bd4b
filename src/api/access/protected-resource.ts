import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import type { Config } from '../../platform/config/load.js';
import { routeMethods } from '../../platform/http/routes.js';
import { scopeUniverse } from '../../contract/scopes.js';
import { DPOP_ALGS } from '../../platform/crypto/dpop-proof.js';

// RFC 9728 protected resource metadata: which authorization server issues tokens for this API,
// which scopes exist and how tokens are presented.

/** The issuer of the authorization server in front of this API (its publicUrl). */
export function authorizationServerIssuer(config: Config): string {
  if (config.servesAuth) return config.publicUrl;
  const url = config.authUrl;
  return url.endsWith(config.auth.path) ? url.slice(0, -config.auth.path.length) : new URL(url).origin;
}

export function registerProtectedResourceMetadata(app: FastifyInstance, ctx: AppContext): void {
  routeMethods(app, '/.well-known/oauth-protected-resource', {
    GET: async (_request, reply) => {
      const c = ctx.config;
      reply.header('cache-control', 'public, max-age=300');
      return {
        resource: c.publicUrl,
        authorization_servers: [authorizationServerIssuer(c)],
        scopes_supported: scopeUniverse(ctx.collections),
        bearer_methods_supported: ['header'],
        resource_name: 'gatehouse resource API',
        resource_documentation: `${c.publicUrl}/v${c.api.version}/openapi.json`,
        token_types_supported: ['bearer', 'mac'],
        // RFC 9728 §2: DPoP-bound tokens are accepted (with a proof), bearer ones too.
        dpop_signing_alg_values_supported: [...DPOP_ALGS],
        dpop_bound_access_tokens_required: false,
      };
    },
  });
}
