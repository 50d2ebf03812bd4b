import { scopeName } from '../contract/scope-name.js';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../contract/context.js';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
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

  const document = () => (openapi ??= buildOpenApi(ctx.config, ctx.collections, morePaths()));
  routeMethods(app, `${v}/openapi.json`, { GET: async () => document() });

  // The API reference UI at /v1/docs: Swagger UI's own files from the npm package (no CDN), over
  // the same document. Its "Authorize" uses the document's oauth2 scheme (code + PKCE, client
  // credentials) against this server's endpoints; same origin, so no CORS is involved.
  await app.register(async (docs) => {
    // @fastify/swagger (static) is the UI's data source; the generated document replaces its
    // placeholder on every read (transformSpecification), so it is built once, lazily, like /openapi.json.
    await docs.register(swagger, { mode: 'static', specification: { document: { openapi: '3.1.0', info: { title: 'gatehouse', version: '1' }, paths: {} } } });
    // Pages for a browser: the JSON-only Accept rule does not apply to them.
    docs.addHook('onRoute', (route) => {
      route.config = { ...(route.config as object), html: true };
    });
    docs.addHook('onRequest', (_request, reply, done) => {
      reply.header('cache-control', 'no-store');
      reply.header('x-frame-options', 'DENY');
      done();
    });
    await docs.register(swaggerUi, {
      routePrefix: `${v}/docs`,
      staticCSP: DOCS_CSP,
      uiConfig: { deepLinking: false, persistAuthorization: false, tryItOutEnabled: true, displayRequestDuration: true },
      initOAuth: { usePkceWithAuthorizationCodeGrant: true, scopeSeparator: ' ' },
      theme: {
        title: 'gatehouse API reference',
        js: [{ filename: 'accessible-names.js', content: ACCESSIBLE_NAMES }],
        css: [{ filename: 'contrast.css', content: CONTRAST_CSS }],
      },
      transformSpecificationClone: false,
      transformSpecification: () => document() as Record<string, unknown>,
    });
  });
}

/**
 * Scripts only from this origin (Swagger UI's bundle and initializer files: no inline script);
 * styles from this origin plus inline style attributes, which Swagger UI's React components set
 * (docs/decisions.md); never framed.
 */
const DOCS_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * Swagger UI leaves a few controls without an accessible name (its logo image, the server and
 * content-type selects, parameter inputs): this file, served beside its own, names them.
 */
const ACCESSIBLE_NAMES = `(function () {
  function labelled(el) { return Array.prototype.some.call(el.labels || [], function (l) { return l.textContent.trim() !== ''; }); }
  function name(el, text) { if (!el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby') && !labelled(el)) el.setAttribute('aria-label', text); }
  function fix() {
    document.querySelectorAll('img:not([alt])').forEach(function (img) { img.setAttribute('alt', img.closest('a') ? 'Swagger UI' : ''); });
    document.querySelectorAll('select:not([aria-label])').forEach(function (el) { el.setAttribute('aria-label', el.closest('.servers') ? 'Server' : el.closest('.content-type-wrapper, .response-control-media-type') ? 'Media type' : 'Choice'); });
    document.querySelectorAll('input:not([type=hidden]), textarea').forEach(function (el) { name(el, el.getAttribute('placeholder') || el.getAttribute('name') || 'Value'); });
  }
  new MutationObserver(fix).observe(document.documentElement, { childList: true, subtree: true });
  document.addEventListener('DOMContentLoaded', fix);
})();
`;

/** Darker shades where Swagger UI's own colours fall below WCAG's 4.5:1 on the top bar and buttons. */
const CONTRAST_CSS = `.swagger-ui .topbar .download-url-wrapper .download-url-button{background:#2f6b12 !important}
.swagger-ui .info .title small pre, .swagger-ui .version-stamp pre{background:#3d5a00 !important}
.swagger-ui .info .url, .swagger-ui a.nostyle, .swagger-ui .info a{color:#1f5fae}
.swagger-ui .btn.authorize{color:#1a7a4c;border-color:#1a7a4c}
.swagger-ui .btn.authorize svg{fill:#1a7a4c}
.swagger-ui .opblock.opblock-get .opblock-summary-method{background:#1d5a9e}
.swagger-ui .opblock.opblock-post .opblock-summary-method{background:#1a7a4c}
.swagger-ui .opblock.opblock-put .opblock-summary-method{background:#9a4f00}
.swagger-ui .opblock.opblock-patch .opblock-summary-method{background:#0f6b63}
.swagger-ui .opblock.opblock-delete .opblock-summary-method{background:#b42318}
.swagger-ui .opblock.opblock-head .opblock-summary-method{background:#6b3fa0}
.swagger-ui .opblock.opblock-options .opblock-summary-method{background:#3d4a5c}
.swagger-ui .json-schema-2020-12-expand-deep-button{color:#4a4a4a !important}
.swagger-ui .json-schema-2020-12__attribute--muted{color:#555 !important}
.swagger-ui .json-schema-2020-12__attribute--primary{color:#4a2a8a !important}
.swagger-ui .json-schema-2020-12-keyword__name--secondary, .swagger-ui .json-schema-2020-12-keyword__value--secondary{color:#555 !important}
`;
