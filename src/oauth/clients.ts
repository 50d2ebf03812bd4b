import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { ClientsTable } from '../store/schema.js';
import { OAuthError } from '../http/errors.js';
import { constantTimeEqual, randomSecret, sha256 } from '../security/secrets.js';
import type { Params } from './params.js';
import { revokeAllOf, type Revoked } from './tokens.js';
import { announceRevocation } from '../access/revocation-notices.js';
import { RevalidatingCache } from '../access/revalidating-cache.js';

// Registered clients: who they are, where they may be redirected, which grants they may use,
// and how they prove their identity at the token, revocation and introspection endpoints.

export const GRANT_TYPES = ['authorization_code', 'implicit', 'password', 'client_credentials', 'refresh_token'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];
export type TokenType = 'bearer' | 'mac';

export interface Client {
  id: string;
  name: string;
  public: boolean;
  secretHash: string | null;
  redirectUris: string[];
  grantTypes: GrantType[];
  /** Registered scope; null means every scope of the deployment. */
  scope: string | null;
  tokenType: TokenType;
  createdAt: number;
}

export function clientFromRow(row: ClientsTable): Client {
  return {
    id: row.id,
    name: row.name,
    public: row.public === 1,
    secretHash: row.secret_hash,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    grantTypes: JSON.parse(row.grant_types) as GrantType[],
    scope: row.scope,
    tokenType: row.token_type === 'mac' ? 'mac' : 'bearer',
    createdAt: Number(row.created_at),
  };
}

// Registered clients are read on every token request; a one-second cache spares the database the
// repeats while keeping a change made on another instance visible within a second.
const CLIENT_CACHE_MS = 1000;
const CLIENT_CACHE_MAX = 1000;
const clientCaches = new WeakMap<AppContext, RevalidatingCache<Client>>();

/** The registered client; `fresh` reads past the cache (a secret that does not match the cached one may be new). */
export async function findClient(ctx: AppContext, id: string, fresh = false): Promise<Client | null> {
  const now = Date.now();
  let cache = clientCaches.get(ctx);
  if (!cache) clientCaches.set(ctx, (cache = new RevalidatingCache(ctx, CLIENT_CACHE_MS, CLIENT_CACHE_MAX)));
  const cached = fresh ? undefined : cache.get(id, now);
  if (cached !== undefined) return cached;
  const row = await ctx.store.db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) return null; // not remembered: a client added a moment later is usable at once
  const client = clientFromRow(row);
  cache.set(id, client, now);
  return client;
}

/** Removes a client: its grants and tokens end, its credentials stop working. Null when there is no such client. */
export async function removeClient(ctx: AppContext, id: string): Promise<Revoked | null> {
  const revoked = await ctx.store.db.transaction().execute(async (trx) => {
    const gone = await trx.deleteFrom('clients').where('id', '=', id).executeTakeFirst();
    if (Number(gone.numDeletedRows) === 0) return null;
    return revokeAllOf(trx, { clientId: id }, 'client removed');
  });
  if (revoked) await announceRevocation(ctx);
  return revoked;
}

export async function listClients(ctx: AppContext): Promise<Client[]> {
  const rows = await ctx.store.db.selectFrom('clients').selectAll().orderBy('created_at').execute();
  return rows.map(clientFromRow);
}

export interface NewClient {
  id: string;
  name?: string;
  public: boolean;
  /** A chosen secret; a strong one is generated for confidential clients when absent. */
  secret?: string;
  redirectUris: string[];
  grantTypes: GrantType[];
  scope: string | null;
  tokenType: TokenType;
}

/** Stores a client; returns it with the plain secret, which is never retrievable again. */
export async function registerClient(ctx: AppContext, input: NewClient): Promise<{ client: Client; secret: string | null }> {
  const secret = input.public ? null : (input.secret ?? randomSecret(32));
  const row: ClientsTable = {
    id: input.id,
    name: input.name ?? input.id,
    secret_hash: secret === null ? null : sha256(secret),
    public: input.public ? 1 : 0,
    redirect_uris: JSON.stringify(input.redirectUris),
    grant_types: JSON.stringify(input.grantTypes),
    scope: input.scope,
    token_type: input.tokenType,
    created_at: Date.now(),
  };
  await ctx.store.db.insertInto('clients').values(row).execute();
  return { client: clientFromRow(row), secret };
}

/**
 * Gives a confidential client a new secret. The old one stops working within the client cache's
 * second on every instance, at once where the notice reaches it (this process; every instance
 * with Redis), as for a revocation. Tokens already issued stay valid: to end them too, remove
 * the client. Null when there is no such client.
 */
export async function rotateClientSecret(ctx: AppContext, id: string, chosen?: string): Promise<{ client: Client; secret: string } | null> {
  const row = await ctx.store.db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) return null;
  if (row.public === 1) throw new PublicClientError(id);
  const secret = chosen ?? randomSecret(32);
  const secretHash = sha256(secret);
  await ctx.store.db.updateTable('clients').set({ secret_hash: secretHash }).where('id', '=', id).execute();
  await announceRevocation(ctx);
  return { client: clientFromRow({ ...row, secret_hash: secretHash }), secret };
}

export class PublicClientError extends Error {
  constructor(readonly clientId: string) {
    super(`client "${clientId}" is public: it has no secret`);
  }
}

/** What a client looks like to its owner (CLI output): never the secret hash. */
export function describeClient(client: Client): Record<string, unknown> {
  return {
    client_id: client.id,
    name: client.name,
    type: client.public ? 'public' : 'confidential',
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes,
    scope: client.scope,
    token_type: client.tokenType,
    created_at: new Date(client.createdAt).toISOString(),
  };
}

/** How the caller identified itself at an endpoint that authenticates clients. */
export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

export interface AuthenticatedClient {
  client: Client;
  method: ClientAuthMethod;
}

const BASIC_CHALLENGE = 'Basic realm="gatehouse", charset="UTF-8"';

export function invalidClient(description: string, detail: Record<string, string> = { client: 'authentication failed' }): OAuthError {
  return new OAuthError('invalid_client', description, 401, detail, { 'www-authenticate': BASIC_CHALLENGE });
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
    if (!basic) throw invalidClient('Malformed HTTP Basic credentials', { authorization: 'malformed Basic credentials' });
    if (bodySecret !== undefined)
      throw new OAuthError('invalid_request', 'Use one client authentication method, not two', 400, {
        client_secret: 'must not be sent together with HTTP Basic authentication',
      });
    if (bodyId !== undefined && bodyId !== basic.id)
      throw new OAuthError('invalid_request', 'client_id does not match the authenticated client', 400, {
        client_id: 'differs from the HTTP Basic user name',
      });
    ({ id, secret } = basic);
    method = 'client_secret_basic';
  } else if (bodyId !== undefined) {
    id = bodyId;
    secret = bodySecret;
    method = secret === undefined ? 'none' : 'client_secret_post';
  } else {
    throw invalidClient('Client authentication is required', { client_id: 'is required (or HTTP Basic authentication)' });
  }

  const client = await findClient(ctx, id);
  // Hash even for unknown clients so that timing does not reveal which ids exist.
  const presented = secret === undefined ? null : sha256(secret);
  if (!client) {
    if (presented) constantTimeEqual(presented, presented);
    throw invalidClient('Unknown client or bad credentials');
  }
  if (client.public) {
    if (method !== 'none') throw invalidClient('A public client has no secret', { client_secret: 'a public client has none' });
    return { client, method };
  }
  if (presented !== null) {
    const matches = (c: Client) => c.secretHash !== null && constantTimeEqual(presented, c.secretHash);
    if (matches(client)) return { client, method };
    // The cached client may predate a secret rotation: the new secret works at once.
    const current = await findClient(ctx, id, true);
    if (current && matches(current)) return { client: current, method };
  }
  throw invalidClient('Unknown client or bad credentials');
}
