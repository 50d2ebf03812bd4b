import type { FastifyReply, FastifyRequest } from 'fastify';
import { CORS_EXPOSED_HEADERS } from '../../platform/http/cors.js';

/**
 * An actual resource request from a browser (not a preflight) may read its answer only when the
 * token's own client lists the page's origin (platform/http/cors.ts answers preflights and sets
 * `Vary: Origin`). Without a valid token nothing is allowed: the browser sees a network error.
 */
export function allowCallerOrigin(request: FastifyRequest, reply: FastifyReply): void {
  const origin = request.headers.origin;
  if (origin === undefined || !request.caller || !request.caller.origins.includes(origin)) return;
  reply.header('access-control-allow-origin', origin);
  reply.header('access-control-expose-headers', CORS_EXPOSED_HEADERS);
}
