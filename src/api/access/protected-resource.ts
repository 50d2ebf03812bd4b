import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import type { Config } from '../../platform/config/load.js';
import { routeMethods } from '../../platform/http/routes.js';
import { scopeUniverse } from '../../contract/scopes.js';
import { DPOP_ALGS } from '../../platform/crypto/dpop-proof.js';
import { resourceNamed, resourceUrl, type Resource } from '../../contract/resources.js';

// RFC 9728 protected resource metadata: which authorization server issues tokens for this API,
// which scopes exist and how tokens are presented — one document per resource of the deployment
// (contract/resources.ts), at the well-known URL with the resource's path appended.

/** The issuer of the authorization server in front of this API (its publicUrl). */
export function authorizationServerIssuer(config: Config): string {
  if (config.servesAuth) return config.publicUrl;
  const url = config.authUrl;
  return url.endsWith(config.auth.path) ? url.slice(0, -config.auth.path.length) : new URL(url).origin;
}

/** What a resource's metadata says beyond `resource` and `authorization_servers`. */
export type ResourceDescription = Record<string, unknown>;

/**
 * Serves a resource's RFC 9728 metadata at `/.well-known/oauth-protected-resource{path}` (§3.1),
 * the URL its 401s name. The resource API's is registered below; the MCP server registers its own.
 */
export function registerResourceMetadata(app: FastifyInstance, ctx: AppContext, resource: Resource, describe: () => ResourceDescription): void {
  routeMethods(app, `/.well-known/oauth-protected-resource${resource.path}`, {
    GET: async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return { resource: resourceUrl(ctx.config, resource), authorization_servers: [authorizationServerIssuer(ctx.config)], ...describe() };
    },
  });
}

export function registerProtectedResourceMetadata(app: FastifyInstance, ctx: AppContext): void {
  const api = resourceNamed(ctx.config, 'api');
  const describeApi = (): ResourceDescription => {
    const c = ctx.config;
    return {
      scopes_supported: scopeUniverse(ctx.collections),
      bearer_methods_supported: ['header'],
      resource_name: 'gatehouse resource API',
      resource_documentation: `${c.publicUrl}/v${c.api.version}/openapi.json`,
      token_types_supported: ['bearer', 'mac'],
      // RFC 9728 §2: DPoP-bound tokens are accepted (with a proof), bearer ones too.
      dpop_signing_alg_values_supported: [...DPOP_ALGS],
      dpop_bound_access_tokens_required: false,
    };
  };
  // The resource API as an RFC 8707 resource ({publicUrl}/v1): what its 401s name.
  registerResourceMetadata(app, ctx, api, describeApi);
  // The document from before resource indicators, kept: the resource it names is publicUrl itself.
  routeMethods(app, '/.well-known/oauth-protected-resource', {
    GET: async (_request, reply) => {
      const c = ctx.config;
      reply.header('cache-control', 'public, max-age=300');
      return { resource: c.publicUrl, authorization_servers: [authorizationServerIssuer(c)], ...describeApi() };
    },
  });
}
