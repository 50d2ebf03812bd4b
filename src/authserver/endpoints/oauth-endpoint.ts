import type { FastifyReply, FastifyRequest } from 'fastify';
import { setNoStore } from '../../platform/http/html/index.js';
import { bodyParams, type Params } from '../params.js';

// The steps every endpoint that clients call directly shares (token, revocation, introspection),
// written once: no-cache headers (RFC 6749 §5.1) → parameters from a JSON or form body, none
// repeated (but `resource`) → the endpoint's own steps → its answer as JSON with 200.

export function oauthEndpoint(steps: (request: FastifyRequest, params: Params) => Promise<object>) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    setNoStore(reply);
    const params = bodyParams(request);
    // RFC 8707 §2: `resource` may be repeated (the grants read it: resource-request.ts).
    if (params.repeated.size + params.malformed.size) params.requireSingle([...[...params.repeated].filter((name) => name !== 'resource'), ...params.malformed]);
    const answer = await steps(request, params);
    return reply.code(200).type('application/json; charset=utf-8').send(answer);
  };
}
