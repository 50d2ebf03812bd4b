import type { Config } from '../platform/config/load.js';
import { InvalidTarget } from '../platform/http/errors.js';
import { deploymentResources, resourceNamed, resourceOfIndicator, resourceUrl, type Resource } from '../contract/resources.js';
import type { Params } from './params.js';

// The `resource` parameter (RFC 8707, docs/oauth.md#resource-indicators), like scope-request.ts
// for `scope`. At /authorize it may be repeated: the code (and the refresh tokens that follow)
// may be redeemed for any of them. At /token it names the one resource the access token is for:
// gatehouse issues a token for one audience, so more than one is invalid_target.

/** The resources an authorization request names (deduplicated, in the deployment's order); null when it names none. Throws InvalidTarget. */
export function readAuthorizationResources(config: Config, params: Params): Resource[] | null {
  const given = params.all('resource');
  if (given.length === 0) return null;
  const named = new Set(given.map((indicator) => resourceOfIndicator(config, indicator).name));
  return deploymentResources(config).filter((r) => named.has(r.name));
}

/** The resource a token request names, or null. More than one (distinct) is invalid_target: one resource per token. */
export function readTokenResource(config: Config, params: Params): Resource | null {
  if (params.get('resource') === undefined) return null;
  const resources = readAuthorizationResources(config, params)!;
  if (resources.length > 1)
    throw new InvalidTarget('One resource per token: send a single resource parameter (ask again with the other for a second token)', {
      resource: 'one resource per token',
    });
  return resources[0];
}

/** The stored form of a set of resources (a code's, a refresh token's): their paths; null when none was named. */
export function storedResources(resources: readonly Resource[] | null): string | null {
  return resources === null ? null : resources.map((r) => r.path).join(' ');
}

/**
 * The audience of an access token redeemed from what `granted` (a code's or refresh token's stored
 * resources; null: the API alone) covers, narrowed by the token request's `requested` (RFC 8707
 * §2.2). When several were granted and none is requested, the request must name one.
 */
export function audienceOf(config: Config, granted: string | null, requested: Resource | null): string {
  const paths = granted === null ? [resourceNamed(config, 'api').path] : granted.split(' ').filter(Boolean);
  if (requested) {
    if (!paths.includes(requested.path))
      throw new InvalidTarget(`The resource was not authorized: ${resourceUrl(config, requested)}`, {
        resource: `not granted (granted: ${paths.map((p) => resourceUrl(config, p)).join(', ')})`,
      });
    return requested.path;
  }
  if (paths.length > 1)
    throw new InvalidTarget('Several resources were authorized: name the one this token is for (resource)', {
      resource: `required: one of ${paths.map((p) => resourceUrl(config, p)).join(', ')}`,
    });
  return paths[0];
}
