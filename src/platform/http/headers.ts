import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';
import { methodOverrideError } from './method-override.js';
import { requireJsonAccept } from './negotiation.js';
import type { Config } from '../config/load.js';

// Request rules that hold for every route, checked once in onRequest, and the headers every
// response carries.

/** Strict-Transport-Security on every response (docs/security.md): a year, subdomains included. */
export const HSTS = 'max-age=31536000; includeSubDomains';

export function registerHttpPolicy(app: FastifyInstance, config: Config): void {
  app.addHook('onRequest', (request, reply, done) => {
    try {
      checkRequest(request, reply);
      done();
    } catch (e) {
      done(e as Error);
    }
  });

  function checkRequest(request: FastifyRequest, reply: FastifyReply): void {
    reply.header('strict-transport-security', HSTS);
    reply.header('x-content-type-options', 'nosniff');
    const routeConfig = request.routeOptions.config;
    // JSON is never rendered: nothing may load or frame it. HTML pages set their own policy.
    if (routeConfig?.html !== true) reply.header('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
    // HTTP/1.1 requires Host (RFC 9112 §3.2); Node's own answer would not be JSON.
    if (!request.headers.host) throw new ApiError(400, 'The Host header is required', { host: 'is required' });
    const overrideProblem = methodOverrideError(request.raw);
    if (overrideProblem) throw overrideProblem;
    if (config.server.trustProxy && routeConfig?.anyProtocol !== true) {
      const proto = String(request.headers['x-forwarded-proto'] ?? '').split(',')[0].trim().toLowerCase();
      if (proto !== 'https')
        throw new ApiError(403, 'HTTPS is required', { 'x-forwarded-proto': 'the request did not arrive over HTTPS' });
    }
    if (routeConfig?.html !== true && routeConfig?.negotiates !== true) requireJsonAccept(request.headers.accept);
  }
}
