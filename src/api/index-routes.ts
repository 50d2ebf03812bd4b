import { scopeName } from '../contract/scope-name.js';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../contract/context.js';
import { routeMethods } from '../platform/http/routes.js';
import type { Links } from './links.js';
import { buildOpenApi } from './openapi.js';
import { authorizationServerIssuer } from './access/protected-resource.js';

// The public entry points of the resource API: GET / (versions), GET /v1 (collections),
// GET /v1/openapi.json. They need no token.

export async function registerIndexRoutes(app: FastifyInstance, ctx: AppContext, links: Links, morePaths: () => Record<string, unknown> = () => ({})): Promise<void> {
  const v = `/v${ctx.config.api.version}`;
  const link = (href: string, title: string) => ({ href, title, type: 'application/json' });
  let openapi: unknown = null;

  routeMethods(app, '/', {
    GET: async () => {
      const c = ctx.config;
      return {
        name: 'gatehouse',
        versions: [
          { version: `v${c.api.version}`, status: 'current', link: { self: link(`${c.publicUrl}${v}`, `API v${c.api.version}`) } },
          ...c.api.retiredVersions.map((r) => ({ version: `v${r}`, status: 'retired' })),
        ],
        link: {
          self: link(`${c.publicUrl}/`, 'This document'),
          current: link(`${c.publicUrl}${v}`, `API v${c.api.version}`),
          openapi: link(`${c.publicUrl}${v}/openapi.json`, 'OpenAPI description'),
          authorization_server: link(`${authorizationServerIssuer(c)}/.well-known/oauth-authorization-server`, 'OAuth 2.0 authorization server metadata'),
          protected_resource: link(`${c.publicUrl}/.well-known/oauth-protected-resource`, 'OAuth 2.0 protected resource metadata'),
          health: link(`${c.publicUrl}/health`, 'Service health'),
        },
      };
    },
  });

  routeMethods(app, v, {
    GET: async () => ({
      version: `v${ctx.config.api.version}`,
      collections: [...ctx.collections.values()].map((m) => ({
        name: m.name,
        access: m.access,
        parent: m.parent?.collection ?? null,
        scopes: [scopeName(m.name, 'read'), scopeName(m.name, 'write')],
        link: { self: links.link(`/${m.name}`, `The ${m.title} collection`) },
      })),
      link: links.forCollections(),
    }),
  });

  routeMethods(app, `${v}/openapi.json`, {
    GET: async () => (openapi ??= buildOpenApi(ctx.config, ctx.collections, morePaths())),
  });
}
