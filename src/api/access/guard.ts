import type { FastifyInstance } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { AppContext } from '../../contract/context.js';
import { observersOf, type Observers } from '../../contract/observers.js';
import { ApiError, tooManyRequests } from '../../platform/http/errors.js';
import { allowCallerOrigin } from './cors.js';
import type { Authenticator } from './authenticate.js';
import { quotaStore } from './quota-store.js';

// The gate in front of a resource server's routes, one rule for both faces (/v1 and /mcp): who is
// calling (the token, for this resource), CORS (cors.ts), the quota per token (per IP
// before authentication), the 401 before the body is read, a MAC's bodyhash once it has been.

/** Told of every request the quota (api.rateLimit) refuses with 429 (the metrics count them). */
export function quotaRejectionObservers(ctx: AppContext): Observers<[]> {
  return observersOf(ctx, 'quota-rejections');
}

/** Adds the gate's hooks to an encapsulated scope (Fastify plugin) of a resource server. */
export async function guardResourceScope(api: FastifyInstance, ctx: AppContext, authenticator: Authenticator): Promise<void> {
  const { config } = ctx;
  // Declared up front: every request object has the same shape (Fastify's decorateRequest).
  api.decorateRequest('caller', null);
  api.decorateRequest('authFailure', null);
  api.decorateRequest('macBodyHash', null);
  // 1. Who is calling (401 deferred so that the rate limit below also counts bad tokens per IP).
  api.addHook('onRequest', async (request) => {
    const who = await authenticator.identify(request);
    if (who instanceof ApiError) request.authFailure = who;
    else request.caller = who;
  });
  // CORS for an actual request: a refusal to any origin, an answer to the token's client's origins
  // (preflights never get this far).
  api.addHook('onRequest', (request, reply, done) => {
    if (request.headers.origin !== undefined) allowCallerOrigin(request, reply);
    done();
  });
  // 2. Quota per access token, per IP before authentication.
  if (config.api.rateLimit) {
    await api.register(rateLimit, {
      global: true,
      hook: 'onRequest',
      max: config.api.rateLimit.max,
      timeWindow: config.api.rateLimit.window * 1000,
      enableDraftSpec: true,
      store: quotaStore(ctx, 'gatehouse:rate:'),
      keyGenerator: (request) => (request.caller ? `t:${request.caller.tokenHash}` : `ip:${request.ip}`),
      onExceeded: () => quotaRejectionObservers(ctx).notify(),
      errorResponseBuilder: (_request, context) =>
        tooManyRequests(Math.ceil(context.ttl / 1000), 'Request quota exceeded', {
          quota: `${context.max} requests per ${config.api.rateLimit!.window} s`,
        }),
    });
  }
  // 3. No valid token: 401 now, before the body is even read. (Callback hooks: no promise per request.)
  api.addHook('preParsing', (request, _reply, payload, done) => (request.authFailure ? done(request.authFailure) : done(null, payload)));
  // 4. A MAC that covers the body (bodyhash) is checked once the body has arrived.
  api.addHook('preHandler', (request, _reply, done) => done(authenticator.checkBodyHash(request) ?? undefined));
}
