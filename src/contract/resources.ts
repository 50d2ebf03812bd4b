import type { Config } from '../platform/config/load.js';
import { InvalidTarget } from '../platform/http/errors.js';

// The deployment's protected resources (RFC 8707 resource indicators, RFC 9728 metadata), in one
// place: the resource API `{publicUrl}/v1` and the MCP server `{publicUrl}/mcp`. An access token
// is for exactly one of them (its audience); the authorization server names them in tokens and
// introspection, each resource server checks a token's audience against the resource it serves.
//
// An audience is stored as the resource's path under publicUrl (`/v1`, `/mcp`), made absolute
// when shown (introspection's and a JWT's `aud`): a token survives a changed publicUrl as it did
// before resource indicators, and tokens stored before them (no audience) count as the API's.

export type ResourceName = 'api' | 'mcp';

export interface Resource {
  name: ResourceName;
  /** Its path under publicUrl: what an access token stores as its audience. */
  path: string;
}

const listed = new WeakMap<object, readonly Resource[]>();

/** Every resource of the deployment, the resource API first (the audience of a request that names none). Made once per config: every token issued reads it. */
export function deploymentResources(config: Config): readonly Resource[] {
  let resources = listed.get(config.api);
  if (!resources) {
    resources = Object.freeze([
      { name: 'api', path: `/v${config.api.version}` },
      { name: 'mcp', path: '/mcp' },
    ] as const);
    listed.set(config.api, resources);
  }
  return resources;
}

export function resourceNamed(config: Config, name: ResourceName): Resource {
  return deploymentResources(config).find((r) => r.name === name)!;
}

/** The resource indicator (absolute URI) of a resource, or of a stored audience (null: the API). */
export function resourceUrl(config: Config, resourceOrAudience: Resource | string | null): string {
  const path = resourceOrAudience === null ? resourceNamed(config, 'api').path : typeof resourceOrAudience === 'string' ? resourceOrAudience : resourceOrAudience.path;
  return config.publicUrl + path;
}

/** Where the resource's RFC 9728 metadata is (the `resource_metadata` of its 401s). */
export function protectedResourceMetadataUrl(config: Config, resource: Resource): string {
  return `${config.publicUrl}/.well-known/oauth-protected-resource${resource.path}`;
}

/** Whether a token with this stored audience is for `resource` (a token stored before audiences is the API's). On every token check: a comparison. */
export function isAudienceOf(audience: string | null, resource: Resource): boolean {
  return audience === null ? resource.name === 'api' : audience === resource.path;
}

/**
 * The resource a `resource` parameter names (RFC 8707 §2): an absolute URI without a fragment
 * that is one of the deployment's (compared as URLs: case of scheme and host, default port).
 * Anything else is invalid_target.
 */
export function resourceOfIndicator(config: Config, indicator: string): Resource {
  const detail = (why: string) => ({ resource: why });
  if (indicator.includes('#')) throw new InvalidTarget('The resource must not contain a fragment', detail('must not contain a fragment'));
  let url: URL;
  try {
    url = new URL(indicator);
  } catch {
    throw new InvalidTarget('The resource must be an absolute URI', detail('must be an absolute URI'));
  }
  const found = deploymentResources(config).find((r) => new URL(resourceUrl(config, r)).href === url.href);
  if (!found)
    throw new InvalidTarget(`Unknown resource: ${indicator}`, detail(`must be one of ${deploymentResources(config).map((r) => resourceUrl(config, r)).join(', ')}`));
  return found;
}
