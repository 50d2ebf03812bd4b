import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { forbidden } from './errors.js';

// CORS (docs/oauth.md#a-browser-app-step-by-step), decided per request by @fastify/cors's
// delegator at onRequest, before anything else reads the request:
// - `/.well-known/*`: any origin (public metadata).
// - the token, revocation, userinfo and JWKS endpoints: the origins of registered clients.
// - `/v<n>/*` preflights (OPTIONS with Access-Control-Request-Method, no token): 204 when some
//   client lists the Origin, else 403 JSON. `/mcp` preflights: 204 for any origin, since an MCP
//   host in a page must send its first POST (answered 401, where the MCP authorization flow
//   starts) before it can have registered. A preflight allows sending, never reading: what the
//   page may read is decided by the actual answer, which the resource server gives its headers
//   itself once the token is checked (api/access/cors.ts): a refusal without a valid token to
//   any origin, an answer to a token to its own client's origins, with CORS_EXPOSED_HEADERS.
// Never credentials mode: browser apps send bearer tokens, not cookies.

export const CORS_ALLOWED_HEADERS = 'Authorization, Content-Type, If-Match, Idempotency-Key, X-HTTP-Method-Override, Last-Event-ID, DPoP, Mcp-Protocol-Version, Mcp-Session-Id';
export const CORS_EXPOSED_HEADERS =
  'Location, ETag, Link, X-Total-Count, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, WWW-Authenticate, Mcp-Session-Id';
/** How long a browser may reuse a preflight's answer (seconds). */
export const CORS_MAX_AGE = 600;

export interface CorsPaths {
  /** The path prefix of the resource API, e.g. `/v1` (with the base path). */
  api: string;
  /** The MCP server's path, `/mcp` (with the base path): CORS as the resource API's. */
  mcp?: string;
  /** Exact paths of the OAuth endpoints browsers call: token, revocation, userinfo, JWKS, PAR (with the base path). */
  oauth: string[];
  /** `/.well-known/` (with the base path). */
  wellKnown: string;
  /**
   * Dynamic client registration (RFC 7591/7592: `{auth_url}/register` and `…/register/{id}`, with
   * the base path): any origin, since the client registering itself has no registered origin yet.
   */
  registration?: string;
}

const SKIP: FastifyCorsOptions = { origin: false };
const WELL_KNOWN: FastifyCorsOptions = { origin: '*', methods: 'GET, HEAD', maxAge: CORS_MAX_AGE };
const API_PREFLIGHT: FastifyCorsOptions = {
  origin: true,
  methods: 'GET, HEAD, POST, PUT, PATCH, DELETE',
  allowedHeaders: CORS_ALLOWED_HEADERS,
  exposedHeaders: CORS_EXPOSED_HEADERS,
  maxAge: CORS_MAX_AGE,
};
const OAUTH: FastifyCorsOptions = {
  origin: true,
  methods: 'GET, POST',
  allowedHeaders: 'Authorization, Content-Type, DPoP',
  exposedHeaders: 'WWW-Authenticate, Retry-After',
  maxAge: CORS_MAX_AGE,
};

/** Registration: any origin (no credentials mode; its tokens are bearer tokens the caller holds), the methods of RFC 7591/7592. */
const REGISTRATION: FastifyCorsOptions = {
  origin: '*',
  methods: 'GET, POST, PUT, DELETE',
  allowedHeaders: 'Authorization, Content-Type',
  exposedHeaders: 'Location, WWW-Authenticate, Retry-After',
  maxAge: CORS_MAX_AGE,
};

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** `originRegistered`: whether some registered client lists the origin (fresh across instances within a second). */
export async function registerCors(app: FastifyInstance, paths: CorsPaths, originRegistered: (origin: string) => Promise<boolean>): Promise<void> {
  const oauth = new Set(paths.oauth);
  const apiRoot = paths.api;
  const apiPrefix = `${paths.api}/`;
  type Decision = { options: FastifyCorsOptions } | { ask: 'api' | 'oauth'; origin: string; preflight: boolean };
  /** What the request needs from CORS, decided without I/O: fixed options, or asking whether the origin is registered. */
  const decide = (request: FastifyRequest): Decision => {
    const origin = request.headers.origin;
    if (origin === undefined) return { options: SKIP };
    const preflight = request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
    // An OPTIONS that is not a preflight is an ordinary request (answered as before: 401, 405).
    if (request.method === 'OPTIONS' && !preflight) return { options: SKIP };
    const path = pathOf(request.url);
    if (path.startsWith(paths.wellKnown)) return { options: WELL_KNOWN };
    if (paths.registration !== undefined && (path === paths.registration || path.startsWith(`${paths.registration}/`))) return { options: REGISTRATION };
    const api = path === apiRoot || path.startsWith(apiPrefix) || path === paths.mcp;
    if (!api && !oauth.has(path)) return { options: SKIP };
    if (api && !preflight) return { options: SKIP }; // the token decides: api/access/cors.ts
    if (path === paths.mcp) return { options: API_PREFLIGHT }; // any origin: see above
    return { ask: api ? 'api' : 'oauth', origin, preflight };
  };
  const delegator = (request: FastifyRequest, callback: (error: Error | null, options?: FastifyCorsOptions) => void) => {
    const d = decide(request);
    if ('options' in d) return callback(null, d.options);
    originRegistered(d.origin).then(
      (known) => {
        if (known) callback(null, d.ask === 'api' ? API_PREFLIGHT : OAUTH);
        else if (d.preflight) callback(forbidden('Origin not allowed', { origin: `${d.origin} is not an origin of any registered client` }));
        else callback(null, SKIP);
      },
      (error: Error) => callback(error),
    );
  };
  const skipped = (request: FastifyRequest) => {
    const d = decide(request);
    return 'options' in d && d.options === SKIP;
  };
  // Called as a function on the root instance (what `register` does for this plugin, which does
  // not encapsulate), so that it adds its hook through unlessSkipped.
  await new Promise<void>((resolve, reject) =>
    (cors as unknown as (app: FastifyInstance, options: FastifyCorsOptions, done: (error?: Error) => void) => void)(
      unlessSkipped(app, skipped),
      { delegator, hideOptionsRoute: true, hook: 'onRequest' },
      (error) => (error ? reject(error) : resolve()),
    ),
  );
}

/**
 * @fastify/cors, heard only by the requests it has something to do for: preflights, and requests
 * with `Origin` to /.well-known/ and the token and revocation endpoints. Every other request
 * (no `Origin`: every server-to-server call; an actual /v1 request, whose CORS headers come from
 * its token's client in api/access/cors.ts) gets `Vary: Origin`, as every answer does whose CORS
 * headers depend on the origin (Fetch standard, "CORS protocol and HTTP caches"), and goes on: the
 * plugin's per-request work is measurable on a GET by id (docs/benchmarks.md, "Why the code is as
 * it is": "CORS only where it has work"). Its hook is the only one it adds; its preflight route
 * and request decoration are registered as they are.
 */
function unlessSkipped(app: FastifyInstance, skipped: (request: FastifyRequest) => boolean): FastifyInstance {
  type Hook = (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void;
  const addHook = (name: 'onRequest', hook: Hook) =>
    app.addHook(name, function (request, reply, done) {
      if (!skipped(request)) return hook.call(this, request, reply, done);
      reply.header('vary', varyWithOrigin(reply.getHeader('vary')));
      done();
    });
  return new Proxy(app, {
    get(target, key) {
      if (key === 'addHook') return addHook;
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function varyWithOrigin(vary: unknown): string {
  if (vary === undefined || vary === '') return 'Origin';
  const text = String(vary);
  return /(^|,)\s*(origin|\*)\s*(,|$)/i.test(text) ? text : `${text}, Origin`;
}
