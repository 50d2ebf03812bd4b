import type { FastifyReply, FastifyRequest } from 'fastify';
import { CORS_EXPOSED_HEADERS } from '../../platform/http/cors.js';

/** What a page may read of a refusal that names no one: the challenge and when to try again. */
const CORS_REFUSAL_EXPOSED_HEADERS = 'WWW-Authenticate, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset';

/**
 * An actual resource request from a browser (not a preflight; platform/http/cors.ts answers those
 * and sets `Vary: Origin`). Without a valid token the answer can only be a refusal — the 401 and
 * its challenge, or the per-IP quota's 429 before it —, which any page may read: it tells what the
 * public metadata tells, and an MCP host in a page learns from it where to sign in
 * (docs/decisions.md, Resources and bodies). With a token, the answer may carry data: readable only where the
 * token's own client lists the page's origin. Never credentials mode: `*` forbids it.
 */
export function allowCallerOrigin(request: FastifyRequest, reply: FastifyReply): void {
  const origin = request.headers.origin;
  if (origin === undefined) return;
  if (request.authFailure !== null) {
    reply.header('access-control-allow-origin', '*');
    reply.header('access-control-expose-headers', CORS_REFUSAL_EXPOSED_HEADERS);
  } else if (request.caller?.origins.includes(origin)) {
    reply.header('access-control-allow-origin', origin);
    reply.header('access-control-expose-headers', CORS_EXPOSED_HEADERS);
  }
}
