import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { InvalidClient, InvalidRequest, UnauthorizedClient } from '../../platform/http/errors.js';
import { audit } from '../audit.js';
import type { GrantType } from '../model/client.js';
import { constantTimeEqual, sha256 } from '../../platform/crypto/secrets.js';
import type { Params } from '../params.js';
import { findClient, type Client } from '../model/clients.js';

// Client authentication at the token, revocation and introspection endpoints (RFC 6749 §2.3).

/** How the caller identified itself at an endpoint that authenticates clients. */
export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

export interface AuthenticatedClient {
  client: Client;
  method: ClientAuthMethod;
}

/** RFC 6749 §2.3.1: the Basic user name and password are form-urlencoded before base64. */
function parseBasic(header: string): { id: string; secret: string } | null {
  const m = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!m) return null;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  try {
    const unform = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: unform(decoded.slice(0, colon)), secret: unform(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}

/** The client id a request claims (HTTP Basic user name, else client_id), for the audit trail. */
export function claimedClientId(request: FastifyRequest, params: Params): string | null {
  const authorization = request.headers.authorization;
  if (authorization !== undefined && /^Basic\s/i.test(authorization)) return parseBasic(authorization)?.id ?? null;
  return params.get('client_id') ?? null;
}

/**
 * Client authentication (RFC 6749 §2.3): HTTP Basic or client_id + client_secret in the body
 * for confidential clients; client_id alone for public clients. Exactly one method per request.
 */
export async function authenticateClient(ctx: AppContext, request: FastifyRequest, params: Params): Promise<AuthenticatedClient> {
  const authorization = request.headers.authorization;
  const bodyId = params.get('client_id');
  const bodySecret = params.get('client_secret');
  let id: string;
  let secret: string | undefined;
  let method: ClientAuthMethod;
  if (authorization !== undefined && /^Basic\s/i.test(authorization)) {
    const basic = parseBasic(authorization);
    if (!basic) throw new InvalidClient('Malformed HTTP Basic credentials', { authorization: 'malformed Basic credentials' });
    if (bodySecret !== undefined)
      throw new InvalidRequest('Use one client authentication method, not two', {
        client_secret: 'must not be sent together with HTTP Basic authentication',
      });
    if (bodyId !== undefined && bodyId !== basic.id)
      throw new InvalidRequest('client_id does not match the authenticated client', {
        client_id: 'differs from the HTTP Basic user name',
      });
    ({ id, secret } = basic);
    method = 'client_secret_basic';
  } else if (bodyId !== undefined) {
    id = bodyId;
    secret = bodySecret;
    method = secret === undefined ? 'none' : 'client_secret_post';
  } else {
    throw new InvalidClient('Client authentication is required', { client_id: 'is required (or HTTP Basic authentication)' });
  }

  const client = await findClient(ctx, id, false, request);
  // Hash even for unknown clients so that timing does not reveal which ids exist.
  const presented = secret === undefined ? null : sha256(secret);
  if (!client) {
    if (presented) constantTimeEqual(presented, presented);
    throw new InvalidClient('Unknown client or bad credentials');
  }
  if (client.public) {
    if (method !== 'none') throw new InvalidClient('A public client has no secret', { client_secret: 'a public client has none' });
    return { client, method };
  }
  if (presented !== null) {
    const matches = (c: Client) => c.secretHash !== null && constantTimeEqual(presented, c.secretHash);
    if (matches(client)) return { client, method };
    // The cached client may predate a secret rotation: the new secret works at once.
    const current = await findClient(ctx, id, true);
    if (current && matches(current)) return { client: current, method };
  }
  throw new InvalidClient('Unknown client or bad credentials');
}

/**
 * Client authentication for a grant (the token endpoint, /device_authorization): a failure is
 * audited as `client.auth_failed` naming the grant; then the client must be registered for it
 * (`unauthorized_client`).
 */
export async function authenticateClientFor(ctx: AppContext, request: FastifyRequest, params: Params, grantType: GrantType): Promise<AuthenticatedClient> {
  let caller: AuthenticatedClient;
  try {
    caller = await authenticateClient(ctx, request, params);
  } catch (e) {
    if (e instanceof InvalidClient)
      audit(ctx, request.log, 'client.auth_failed', { client_id: claimedClientId(request, params), grant_type: grantType, ip: request.ip, reason: e.description });
    throw e;
  }
  if (!caller.client.grantTypes.includes(grantType))
    throw new UnauthorizedClient(`The client is not registered for ${grantType}`, {
      grant_type: `not allowed for this client (registered: ${caller.client.grantTypes.join(', ')})`,
    });
  return caller;
}
