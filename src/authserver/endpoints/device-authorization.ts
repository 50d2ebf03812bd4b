import type { AppContext } from '../../contract/context.js';
import { TooManyRequests, UnauthorizedClient } from '../../platform/http/errors.js';
import { DEVICE_CODE_GRANT, startDeviceAuthorization } from '../device-authorization.js';
import { PUBLIC_CLIENT_REQUESTS, PUBLIC_CLIENT_WINDOW_MINUTES, publicClientAttempt } from '../login-throttle.js';
import { grantEnabled } from '../model/client.js';
import { resolveRequestedScope } from '../scope-request.js';
import { readAuthorizationResources, storedResources } from '../resource-request.js';
import { authenticateClientFor } from './client-auth.js';
import { oauthEndpoint } from './oauth-endpoint.js';

// POST {auth_url}/device_authorization (RFC 8628 §3.1): the client authenticated as at the token
// endpoint (a public client by its client_id), registered for the device code grant, with an
// optional scope → the device code, the user code and where the user types it.

export function deviceAuthorizationEndpoint(ctx: AppContext) {
  return oauthEndpoint(async (request, params) => {
    const { client } = await authenticateClientFor(ctx, request, params, DEVICE_CODE_GRANT);
    if (!grantEnabled(ctx.config, DEVICE_CODE_GRANT)) throw new UnauthorizedClient('The device authorization grant is turned off on this server', { grant_type: 'turned off (auth.grants)' });
    const requested = params.get('scope');
    const scope = resolveRequestedScope(requested, client, ctx.collections, { user: null, via: DEVICE_CODE_GRANT });
    // RFC 8707, as at /authorize: the resources the device code (and its refresh tokens) may be redeemed for.
    const resources = storedResources(readAuthorizationResources(ctx.config, params));
    // Anyone can be a public client: the device codes it makes are bounded per IP (a confidential one's secret bounds its own).
    if (client.public) {
      const attempt = await publicClientAttempt(ctx, 'device', request.ip);
      if ('retryAfter' in attempt)
        throw new TooManyRequests(attempt.retryAfter, `Too many device authorization requests from this address (at most ${PUBLIC_CLIENT_REQUESTS} in ${PUBLIC_CLIENT_WINDOW_MINUTES} minutes for public clients); retry later`, { ip: 'too many device authorization requests' });
    }
    return startDeviceAuthorization(ctx, client, scope, requested !== undefined, resources);
  });
}
