import type { AppContext } from '../../contract/context.js';
import { contextCache } from '../../contract/context-cache.js';
import { AlreadyExists, InvalidInput, NotApplicable } from '../../contract/errors.js';
import { RevalidatingCache } from '../../contract/revalidating-cache.js';
import { announceRevocation } from '../../contract/revocation-notices.js';
import { canonicalScope, grantableUniverse, parseScope } from '../scope-request.js';
import { randomSecret, sha256 } from '../../platform/crypto/secrets.js';
import { write, type WriteTx } from '../../platform/store/write-path.js';
import { GRANT_TYPES, ID_TOKEN_ALGS, TOKEN_TYPES, grantEnabled, type Client, type GrantType, type IdTokenAlg, type TokenType } from './client.js';
import { originProblem } from '../../platform/http/origins.js';
import { anyClient, clientExists, originsOf, deleteClient, findClientRecord, insertClient, listClientRecords, updateClientRecord, updateClientSecret, type ClientRecord } from '../store/clients.js';
import { revokeAllOf, type Revoked } from '../tokens.js';
import { isMetadataDocumentId, metadataDocumentClient, type FetchOrigin } from './client-metadata-document.js';
import { deleteClientRegistration } from '../store/registrations.js';

// Registered clients and their rules. The CLI, the demo and the admin API create and change
// clients only through this module, so a rule holds whoever asks.

export { GRANT_TYPES, ID_TOKEN_ALGS, TOKEN_TYPES, grantEnabled, mayIntrospect, parRequired, pkceRequired, type Client, type GrantType, type TokenType } from './client.js';

/** Secrets are stored as SHA-256, which is sound only for high-entropy secrets. */
export const MIN_CLIENT_SECRET_LENGTH = 32;
/** A client id: what `checkNewClient` accepts, and what the admin API's schema documents. */
export const CLIENT_ID = /^[A-Za-z0-9._~-]{1,128}$/;

function toClient(r: ClientRecord): Client {
  return { ...r, grantTypes: r.grantTypes as GrantType[], tokenType: r.tokenType === 'mac' ? 'mac' : 'bearer', idTokenSignedResponseAlg: r.idTokenSignedResponseAlg === 'ES256' ? 'ES256' : 'RS256' };
}

export interface NewClient {
  id: string;
  name?: string;
  public?: boolean;
  /** A chosen secret; a strong one is generated for confidential clients when absent. */
  secret?: string;
  redirectUris?: string[];
  grantTypes: string[];
  /** Space-separated; absent or null: every collection scope of the deployment (never admin, which must be named). */
  scope?: string | null;
  tokenType?: string;
  /** Browser origins beyond those of the redirect URIs (CORS), e.g. an SPA that uses client_credentials' sibling flows. */
  origins?: string[];
  /** Its home page (https or loopback http), shown to users on the consent and account pages. */
  uri?: string | null;
  /** The operator vouches for it (no "not verified" note on the consent page). */
  verified?: boolean;
  /** A resource server: it may introspect every client's tokens (confidential clients only). */
  introspect?: boolean;
  /** Its authorization code requests must carry a PKCE challenge (public clients always must). */
  requirePkce?: boolean;
  /** OpenID Connect: how its ID tokens are signed (RS256 by default). */
  idTokenSignedResponseAlg?: string;
  /** OpenID Connect: where RP-initiated logout may send the browser back (absolute, no fragment). */
  postLogoutRedirectUris?: string[];
  /** RFC 9126: its authorization requests must be pushed to {auth_url}/par first (`--require-par`). */
  requirePar?: boolean;
  /** Its token requests must carry a DPoP proof (RFC 9449): its tokens are always bound to a key. */
  dpopBound?: boolean;
}

/** A redirect URI must be absolute and exact (no fragment); plain http only for the loopback interface (RFC 8252). */
export function redirectUriProblem(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `${uri} is not an absolute URI`;
  }
  if (url.hash || uri.includes('#')) return `${uri} must not contain a fragment`;
  if (/^(javascript|data|vbscript|file):$/i.test(url.protocol)) return `${uri}: scheme ${url.protocol} is not allowed`;
  if (url.protocol === 'http:' && !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname))
    return `${uri}: plain http is only allowed for 127.0.0.1, [::1] and localhost`;
  return null;
}

export function clientSecretProblem(secret: string): string | null {
  return secret.length < MIN_CLIENT_SECRET_LENGTH
    ? `must have at least ${MIN_CLIENT_SECRET_LENGTH} characters (it is stored as a SHA-256 hash, sound only for a high-entropy secret); omit it to get a generated one`
    : null;
}

/**
 * Checks a new client against every rule; throws InvalidInput naming the first broken field.
 * `kept`: grants the client already had, which stay registered even when the deployment has
 * turned them off since (they stay unusable; only adding a turned-off grant is refused).
 */
export function checkNewClient(ctx: AppContext, input: NewClient, kept: readonly string[] = []): Omit<Client, 'createdAt' | 'secretHash'> & { secret: string | null } {
  const bad = (field: string, message: string): never => {
    throw new InvalidInput(`${field}: ${message}`, { [field]: message });
  };
  if (!CLIENT_ID.test(input.id)) bad('client_id', 'a client id is 1-128 letters, digits or . _ ~ -');
  const isPublic = input.public === true;
  if (isPublic && input.secret !== undefined) bad('client_secret', 'a public client has no secret');
  if (input.secret !== undefined) {
    const problem = clientSecretProblem(input.secret);
    if (problem) bad('client_secret', problem);
  }
  const tokenType = input.tokenType ?? 'bearer';
  if (!(TOKEN_TYPES as readonly string[]).includes(tokenType)) bad('token_type', `must be ${TOKEN_TYPES.join(' or ')}`);
  if (input.grantTypes.length === 0) bad('grant_types', `give at least one grant (${GRANT_TYPES.join(', ')})`);
  for (const g of input.grantTypes) if (!(GRANT_TYPES as readonly string[]).includes(g)) bad('grant_types', `${g} is not one of ${GRANT_TYPES.join(', ')}`);
  const grantTypes = [...new Set(input.grantTypes)] as GrantType[];
  for (const g of grantTypes)
    if (!grantEnabled(ctx.config, g) && !kept.includes(g))
      bad('grant_types', `${g} is turned off in this deployment (auth.grants: ${ctx.config.auth.grants.join(', ')})`);
  if (input.introspect === true && isPublic) bad('introspect', 'a public client cannot introspect tokens (it has no secret to authenticate with)');
  if (isPublic && grantTypes.includes('client_credentials')) bad('grant_types', 'a public client cannot use client_credentials');
  const redirectUris = [...new Set(input.redirectUris ?? [])];
  if ((grantTypes.includes('authorization_code') || grantTypes.includes('implicit')) && redirectUris.length === 0)
    bad('redirect_uris', 'authorization_code and implicit need at least one redirect URI');
  for (const uri of redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) bad('redirect_uris', problem);
  }
  const origins = [...new Set(input.origins ?? [])];
  for (const origin of origins) {
    const problem = originProblem(origin);
    if (problem) bad('origins', problem);
  }
  const uri = input.uri ?? null;
  if (uri !== null) {
    const problem = redirectUriProblem(uri);
    if (problem || !/^https?:$/.test(new URL(uri).protocol)) bad('uri', problem ?? `${uri}: a home page is an http(s) URL`);
  }
  const postLogoutRedirectUris = [...new Set(input.postLogoutRedirectUris ?? [])];
  for (const uri of postLogoutRedirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) bad('post_logout_redirect_uris', problem);
  }
  if (input.dpopBound === true && tokenType === 'mac') bad('dpop_bound_access_tokens', 'a MAC client cannot use DPoP (its tokens are MAC tokens)');
  // The implicit grant's tokens leave /authorize in a redirect, with no proof to bind them to.
  if (input.dpopBound === true && grantTypes.includes('implicit')) bad('dpop_bound_access_tokens', 'a client that must use DPoP cannot use the implicit grant (its tokens come without a proof)');
  const idTokenAlg = input.idTokenSignedResponseAlg ?? 'RS256';
  if (!(ID_TOKEN_ALGS as readonly string[]).includes(idTokenAlg)) bad('id_token_signed_response_alg', `must be ${ID_TOKEN_ALGS.join(' or ')}`);
  const name = input.name?.trim();
  if (input.name !== undefined && (name === '' || input.name.length > 100)) bad('name', 'must be 1-100 characters');
  let scope: string | null = null;
  if (input.scope !== undefined && input.scope !== null) {
    const parsed = parseScope(input.scope.trim().replace(/\s+/g, ' '));
    const universe = grantableUniverse(ctx.collections);
    if (!parsed || parsed.length === 0) bad('scope', 'must list scope values separated by spaces');
    const unknown = parsed!.filter((s) => !universe.includes(s));
    if (unknown.length) bad('scope', `unknown scope ${unknown.join(' ')} (known: ${universe.join(' ')})`);
    scope = canonicalScope(parsed!, universe).join(' ');
  }
  const secret = isPublic ? null : (input.secret ?? randomSecret(32));
  return { id: input.id, name: name ?? input.id, public: isPublic, secret, redirectUris, grantTypes, scope, tokenType: tokenType as TokenType, origins, uri, verified: input.verified === true, introspect: input.introspect === true, requirePkce: input.requirePkce === true, idTokenSignedResponseAlg: idTokenAlg as IdTokenAlg, postLogoutRedirectUris, requirePar: input.requirePar === true, dpopBound: input.dpopBound === true };
}

/**
 * Stores a client after checking every rule; returns it with the plain secret, which is never retrievable again.
 * `within`: more of the same change, in the same transaction (dynamic registration's token and record).
 */
export async function registerClient(ctx: AppContext, input: NewClient, actor: string | null = null, within?: (tx: WriteTx, client: Client) => Promise<void>): Promise<{ client: Client; secret: string | null }> {
  const { secret, ...checked } = checkNewClient(ctx, input);
  const client: Client = { ...checked, secretHash: secret === null ? null : sha256(secret), createdAt: Date.now() };
  try {
    await write(ctx.store, async (tx) => {
      if (await findClientRecord(tx, client.id)) throw new AlreadyExists(`a client "${client.id}" already exists`);
      await insertClient(tx, client);
      await within?.(tx, client);
      clientEvent(tx, 'client.created', client, actor);
    });
  } catch (e) {
    if (!(e instanceof AlreadyExists) && (await clientExists(ctx.store, client.id))) throw new AlreadyExists(`a client "${client.id}" already exists`);
    throw e;
  }
  return { client, secret };
}

// Registered clients are read on every token request; a one-second cache spares the database the
// repeats while keeping a change made on another instance visible within a second.
const CLIENT_CACHE_MS = 1000;
const CLIENT_CACHE_MAX = 1000;

/**
 * The registered client, or the one an https client_id's metadata document describes (throws
 * MetadataDocumentRefused when it cannot be used). `fresh` reads the stored registration past the
 * cache (a secret that does not match the cached one may be new; the operators' views): a
 * metadata document client has none, so it is null there.
 */
export async function findClient(ctx: AppContext, id: string, fresh = false, origin?: FetchOrigin): Promise<Client | null> {
  // An https client_id names its client ID metadata document (throws MetadataDocumentRefused).
  if (isMetadataDocumentId(id)) return ctx.config.auth.clientMetadataDocuments && !fresh ? metadataDocumentClient(ctx, id, origin) : null;
  const now = Date.now();
  const cache = contextCache(ctx, 'clients', () => new RevalidatingCache<Client>(ctx, CLIENT_CACHE_MS, CLIENT_CACHE_MAX));
  const cached = fresh ? undefined : cache.get(id, now);
  if (cached !== undefined) return cached;
  const record = await findClientRecord(ctx.store, id);
  if (!record) return null; // not remembered: a client added a moment later is usable at once
  const client = toClient(record);
  cache.set(id, client, now);
  return client;
}

export async function listClients(ctx: AppContext): Promise<Client[]> {
  return (await listClientRecords(ctx.store)).map(toClient);
}

export async function anyClientRegistered(ctx: AppContext): Promise<boolean> {
  return anyClient(ctx.store);
}

/** What a PATCH may change; the id, the type (public or confidential) and the secret stay (rotate the secret apart). */
export type ClientChanges = Partial<
  Pick<NewClient, 'name' | 'redirectUris' | 'grantTypes' | 'scope' | 'tokenType' | 'origins' | 'uri' | 'verified' | 'introspect' | 'requirePkce' | 'idTokenSignedResponseAlg' | 'postLogoutRedirectUris' | 'requirePar' | 'dpopBound'>
>;

/**
 * Changes a client under the same rules as registering one (checked on the result). Every
 * instance sees the change within the client cache's second, at once where the notice reaches.
 * Null when there is no such client.
 */
export async function updateClient(ctx: AppContext, id: string, changes: ClientChanges, actor: string | null = null, within?: (tx: WriteTx, client: Client) => Promise<void>): Promise<Client | null> {
  return write(ctx.store, async (tx) => {
    const record = await findClientRecord(tx, id);
    if (!record) return null;
    const checked = checkNewClient(ctx, {
      id,
      public: record.public,
      name: changes.name ?? record.name,
      redirectUris: changes.redirectUris ?? record.redirectUris,
      grantTypes: changes.grantTypes ?? record.grantTypes,
      scope: changes.scope === undefined ? record.scope : changes.scope,
      tokenType: changes.tokenType ?? record.tokenType,
      origins: changes.origins ?? record.origins,
      uri: changes.uri === undefined ? record.uri : changes.uri,
      verified: changes.verified ?? record.verified,
      introspect: changes.introspect ?? record.introspect,
      requirePkce: changes.requirePkce ?? record.requirePkce,
      idTokenSignedResponseAlg: changes.idTokenSignedResponseAlg ?? record.idTokenSignedResponseAlg,
      postLogoutRedirectUris: changes.postLogoutRedirectUris ?? record.postLogoutRedirectUris,
      requirePar: changes.requirePar ?? record.requirePar,
      dpopBound: changes.dpopBound ?? record.dpopBound,
    }, record.grantTypes);
    const updated: Client = {
      ...toClient(record),
      name: checked.name,
      redirectUris: checked.redirectUris,
      grantTypes: checked.grantTypes,
      scope: checked.scope,
      tokenType: checked.tokenType,
      origins: checked.origins,
      uri: checked.uri,
      verified: checked.verified,
      introspect: checked.introspect,
      requirePkce: checked.requirePkce,
      idTokenSignedResponseAlg: checked.idTokenSignedResponseAlg,
      postLogoutRedirectUris: checked.postLogoutRedirectUris,
      requirePar: checked.requirePar,
      dpopBound: checked.dpopBound,
    };
    await updateClientRecord(tx, updated);
    await within?.(tx, updated);
    clientEvent(tx, 'client.updated', updated, actor);
    tx.afterCommit(() => announceRevocation(ctx));
    return updated;
  });
}

/** Removes a client: its grants and tokens end, its credentials stop working. Null when there is no such client. */
export async function removeClient(ctx: AppContext, id: string, actor: string | null = null): Promise<Revoked | null> {
  return write(ctx.store, async (tx) => {
    if (!(await deleteClient(tx, id))) return null;
    await deleteClientRegistration(tx, id); // a registration access token (RFC 7592) ends with its client
    const revoked = await revokeAllOf(ctx, tx, { clientId: id }, 'client removed', actor);
    tx.emit({ type: 'client.removed', record_id: id, actor, data: null });
    return revoked;
  });
}

/**
 * Gives a confidential client a new secret. The old one stops working within the client cache's
 * second on every instance, at once where the notice reaches it (this process; every instance
 * with Redis), as for a revocation. Tokens already issued stay valid: to end them too, remove
 * the client. Null when there is no such client.
 */
export async function rotateClientSecret(ctx: AppContext, id: string, chosen?: string, actor: string | null = null): Promise<{ client: Client; secret: string } | null> {
  if (chosen !== undefined) {
    const problem = clientSecretProblem(chosen);
    if (problem) throw new InvalidInput(`client_secret: ${problem}`, { client_secret: problem });
  }
  const secret = chosen ?? randomSecret(32);
  const secretHash = sha256(secret);
  return write(ctx.store, async (tx) => {
    const record = await findClientRecord(tx, id);
    if (!record) return null;
    if (record.public) throw new NotApplicable(`client "${id}" is public: it has no secret`, 'client_secret');
    await updateClientSecret(tx, id, secretHash);
    const client = toClient({ ...record, secretHash });
    clientEvent(tx, 'client.updated', client, actor);
    tx.afterCommit(() => announceRevocation(ctx));
    return { client, secret };
  });
}

/** A client's event (docs/events.md, admin side): `data` is the client as its owner sees it, never a secret. */
function clientEvent(tx: WriteTx, type: 'client.created' | 'client.updated', client: Client, actor: string | null): void {
  tx.emit({ type, record_id: client.id, actor, data: JSON.stringify(describeClient(client)) });
}

/** What a client looks like to its owner (CLI output, admin API): never the secret hash. */
export function describeClient(client: Client): Record<string, unknown> {
  return {
    client_id: client.id,
    name: client.name,
    type: client.public ? 'public' : 'confidential',
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes,
    scope: client.scope,
    token_type: client.tokenType,
    origins: originsOf(client),
    uri: client.uri,
    verified: client.verified,
    introspect: client.introspect,
    require_pkce: client.requirePkce,
    id_token_signed_response_alg: client.idTokenSignedResponseAlg,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    require_pushed_authorization_requests: client.requirePar,
    dpop_bound_access_tokens: client.dpopBound,
    created_at: new Date(client.createdAt).toISOString(),
  };
}
