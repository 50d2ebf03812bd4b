import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { InvalidClient, TooManyRequests } from '../../platform/http/errors.js';
import { setNoStore } from '../../platform/http/html/index.js';
import { audit } from '../audit.js';
import { PUBLIC_CLIENT_REQUESTS, PUBLIC_CLIENT_WINDOW_MINUTES, publicClientAttempt } from '../login-throttle.js';
import { bodyParams, parseUrlEncoded, type Params } from '../params.js';
import { pushAuthorizationRequest } from '../authorize/pushed.js';
import { AUTHORIZATION_PARAMETERS, PageError, RedirectError, readAuthorizationRequest } from '../authorize/request.js';
import { authenticateClient, claimedClientId } from './client-auth.js';

// POST {auth_url}/par: pushed authorization requests (RFC 9126). The client authenticates as at
// the token endpoint; the rest of the body is an authorization request, checked by the same code
// as /authorize's (authorize/request.ts) and refused here as a JSON OAuth error (400) — nothing is
// stored then. A good one is stored (authorize/pushed.ts) and named by a request_uri, 201.

/** The largest pushed request body, in bytes (413 beyond). */
export const PAR_BODY_LIMIT = 16 * 1024;

/**
 * The parameters of the pushed request: those an authorization request is read for
 * (AUTHORIZATION_PARAMETERS; others are dropped, never stored), client_id the authenticated client's.
 */
function requestOf(body: Params, clientId: string): Params {
  const pairs: [string, string][] = [['client_id', clientId]];
  for (const [name, values] of body.multi) if (name !== 'client_id' && AUTHORIZATION_PARAMETERS.has(name)) for (const v of values) pairs.push([name, v]);
  return parseUrlEncoded(new URLSearchParams(pairs).toString());
}

export function parEndpoint(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    setNoStore(reply);
    const body = bodyParams(request);
    // Repeats of the request's own parameters are request.ts's to judge; a JSON value that is not text is refused here.
    body.requireSingle(['client_id', 'client_secret', ...body.malformed]);
    let caller;
    try {
      caller = await authenticateClient(ctx, request, body);
    } catch (e) {
      if (e instanceof InvalidClient) audit(ctx, request.log, 'client.auth_failed', { client_id: claimedClientId(request, body), ip: request.ip, reason: `pushed authorization request: ${e.description}` });
      throw e;
    }
    // Anyone can be a public client: what its pushes store is bounded per IP. A confidential
    // client is not throttled (a web backend pushes for all its users from one address).
    const attempt = caller.client.public ? await publicClientAttempt(ctx, 'par', request.ip) : null;
    if (attempt && 'retryAfter' in attempt)
      throw new TooManyRequests(attempt.retryAfter, `Too many pushed authorization requests from this address (at most ${PUBLIC_CLIENT_REQUESTS} in ${PUBLIC_CLIENT_WINDOW_MINUTES} minutes for public clients); retry later`, { ip: 'too many pushed requests' });
    const params = requestOf(body, caller.client.id);
    try {
      (await readAuthorizationRequest(ctx, params, '', { kind: 'push' }, request)).complete();
    } catch (e) {
      if (attempt) await attempt.giveBack(); // refused: nothing stored, so it does not count
      if (e instanceof PageError) throw e.asOAuthError();
      if (e instanceof RedirectError) throw e.error;
      throw e;
    }
    return reply.code(201).type('application/json; charset=utf-8').send(await pushAuthorizationRequest(ctx, caller.client, params));
  };
}
