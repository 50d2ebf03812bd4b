import type { AppContext } from '../../contract/context.js';
import { InvalidInput } from '../../contract/errors.js';
import { constantTimeEqual, newTimeOrderedId, randomSecret, sha256 } from '../../platform/crypto/secrets.js';
import { write } from '../../platform/store/write-path.js';
import { clientSubject } from './users.js';
import { findClient, registerClient, removeClient, updateClient, type Client, type NewClient } from './clients.js';
import {
  deleteRegistrationToken,
  findClientRegistration,
  findRegistrationToken,
  insertClientRegistration,
  insertRegistrationToken,
  listLiveRegistrationTokens,
  registeredClientIds,
  spendRegistrationToken,
  updateClientRegistration,
  type ClientRegistrationRow,
  type RegistrationTokenRow,
} from '../store/registrations.js';
import type { Revoked } from '../tokens.js';

// Dynamic client registration (RFC 7591) and its management (RFC 7592), docs/oauth.md
// "Registering clients". The metadata becomes a NewClient and passes the very rules of
// `gatehouse client add` (checkNewClient, model/clients.ts); what this module adds is only what
// registration itself is about: the metadata's names and defaults, the methods of client
// authentication, `admin` never registrable, the initial access tokens (auth.registration: token)
// and the registration access token of each registered client. A registered client is never
// verified by registering.

export type RegistrationPolicy = 'closed' | 'token' | 'open';

export function registrationPolicy(ctx: AppContext): RegistrationPolicy {
  return ctx.config.auth.registration;
}

/** The token_endpoint_auth_method values a client may register with (RFC 7591 §2). */
export const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];

/**
 * The grants a client may register itself for (POST and RFC 7592 PUT): those where a user signs
 * in and consents. `client_credentials` (a token with no user), `password` (no consent page) and
 * `implicit` are not: an operator widens a registered client to them (admin API or console,
 * `grant_types`), and its own PUT may then keep them.
 */
export const REGISTRABLE_GRANTS = ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'] as const;

/** Each response type and the grant it needs (RFC 7591 §2.1). */
const RESPONSE_TYPE_GRANTS: ReadonlyMap<string, string> = new Map([['code', 'authorization_code'], ['token', 'implicit']]);

/** Bounds of what a registration may carry (an unbounded list or URI is stored and shown to operators). */
export const MAX_REDIRECT_URIS = 20;
export const MAX_URI_LENGTH = 2000;
export const MAX_CONTACTS = 10;
export const MAX_CLIENT_NAME_LENGTH = 100;
/** The largest registration request body, in bytes (413 beyond). */
export const REGISTRATION_BODY_LIMIT = 16 * 1024;

/** How many registrations one IP may attempt an hour (the public forms' windowed counters). */
export const REGISTRATIONS_PER_IP_HOUR = 20;

/** The metadata a client registers with, after its defaults (RFC 7591 §2), in the model's terms. */
export interface RegistrationMetadata {
  client: Omit<NewClient, 'id'>;
  authMethod: AuthMethod;
  contacts: string[];
}

const bad = (field: string, message: string): never => {
  throw new InvalidInput(`${field}: ${message}`, { [field]: message });
};

function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') bad(field, 'must be a string');
  return v as string;
}

function optionalStrings(body: Record<string, unknown>, field: string): string[] | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((item) => typeof item !== 'string')) bad(field, 'must be an array of strings');
  return v as string[];
}

/**
 * Reads the client metadata of a registration request (RFC 7591 §2) or of its replacement (RFC
 * 7592 §2.2): the fields it knows, their types and defaults; unknown fields are ignored. Throws
 * InvalidInput naming the metadata field; the client rules are checked after, by checkNewClient.
 * Grants: only REGISTRABLE_GRANTS, and `kept` (a PUT keeps grants an operator gave the client).
 */
export function readMetadata(body: Record<string, unknown>, kept: readonly string[] = []): RegistrationMetadata {
  const redirectUris = optionalStrings(body, 'redirect_uris') ?? [];
  if (redirectUris.length > MAX_REDIRECT_URIS) bad('redirect_uris', `at most ${MAX_REDIRECT_URIS}`);
  for (const r of redirectUris) if (r.length > MAX_URI_LENGTH) bad('redirect_uris', `each is at most ${MAX_URI_LENGTH} characters`);
  const name = optionalString(body, 'client_name');
  if (name !== undefined && name.length > MAX_CLIENT_NAME_LENGTH) bad('client_name', `at most ${MAX_CLIENT_NAME_LENGTH} characters`);
  const uri = optionalString(body, 'client_uri');
  if (uri !== undefined && uri.length > MAX_URI_LENGTH) bad('client_uri', `at most ${MAX_URI_LENGTH} characters`);
  const grantTypes = optionalStrings(body, 'grant_types') ?? ['authorization_code'];
  for (const grant of grantTypes)
    if (!(REGISTRABLE_GRANTS as readonly string[]).includes(grant) && !kept.includes(grant))
      bad('grant_types', `${grant} cannot be registered (registrable: ${REGISTRABLE_GRANTS.join(', ')}); ask the operator of this gatehouse`);
  // Absent: the response types of the grants asked for (RFC 7591 §2.1 says `code`, which only the code grant can use).
  const responseTypes = optionalStrings(body, 'response_types') ?? [...RESPONSE_TYPE_GRANTS].filter(([, grant]) => grantTypes.includes(grant)).map(([type]) => type);
  const method = optionalString(body, 'token_endpoint_auth_method') ?? 'client_secret_basic';
  if (!(AUTH_METHODS as readonly string[]).includes(method)) bad('token_endpoint_auth_method', `${method} is not supported (supported: ${AUTH_METHODS.join(', ')})`);
  for (const type of responseTypes) {
    // A Map: `__proto__` or `constructor` is an unknown type, not an object's property.
    const grant = RESPONSE_TYPE_GRANTS.get(type);
    if (!grant) bad('response_types', `${type} is not one of ${[...RESPONSE_TYPE_GRANTS.keys()].join(', ')}`);
    if (!grantTypes.includes(grant!)) bad('response_types', `${type} needs the grant ${grant} in grant_types`);
  }
  for (const [type, grant] of RESPONSE_TYPE_GRANTS)
    if (grantTypes.includes(grant) && !responseTypes.includes(type)) bad('response_types', `the grant ${grant} needs the response type ${type}`);
  const scope = optionalString(body, 'scope');
  if (scope !== undefined && scope.split(/\s+/).includes('admin')) bad('scope', 'admin cannot be registered: ask the operator of this gatehouse for a client with the admin scope');
  const requirePar = body.require_pushed_authorization_requests ?? false;
  if (typeof requirePar !== 'boolean') bad('require_pushed_authorization_requests', 'must be true or false');
  const contacts = optionalStrings(body, 'contacts') ?? [];
  if (contacts.length > MAX_CONTACTS) bad('contacts', `at most ${MAX_CONTACTS}`);
  for (const c of contacts) if (c.trim() === '' || c.length > 254) bad('contacts', 'each is 1-254 characters (an e-mail address)');
  return {
    client: {
      name,
      public: method === 'none',
      redirectUris,
      grantTypes,
      scope: scope ?? null,
      uri: uri ?? null,
      verified: false,
      requirePar: requirePar as boolean,
    },
    authMethod: method as AuthMethod,
    contacts,
  };
}

/** What a registered client's metadata looks like (RFC 7591 §3.2.1; RFC 7592 §3), never a secret. */
export function describeRegistration(client: Client, registration: Pick<ClientRegistrationRow, 'auth_method' | 'contacts'>): Record<string, unknown> {
  return {
    client_id: client.id,
    client_id_issued_at: Math.floor(client.createdAt / 1000),
    client_name: client.name,
    ...(client.uri ? { client_uri: client.uri } : {}),
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes,
    response_types: [...RESPONSE_TYPE_GRANTS].filter(([, grant]) => client.grantTypes.includes(grant as never)).map(([type]) => type),
    token_endpoint_auth_method: registration.auth_method,
    ...(client.scope !== null ? { scope: client.scope } : {}),
    ...(client.requirePar ? { require_pushed_authorization_requests: true } : {}),
    ...(JSON.parse(registration.contacts).length ? { contacts: JSON.parse(registration.contacts) as string[] } : {}),
  };
}

// ---- Initial access tokens (auth.registration: token) ----

export const REGISTRATION_TOKEN_TTL_S = 86_400;
export const MAX_REGISTRATION_TOKEN_TTL_S = 30 * 86_400;
export const MAX_REGISTRATION_TOKEN_USES = 1000;

export interface RegistrationToken {
  id: string;
  createdBy: string | null;
  createdAt: number;
  expiresAt: number;
  usesLeft: number;
}

const tokenOf = (r: RegistrationTokenRow): RegistrationToken => ({ id: r.id, createdBy: r.created_by, createdAt: Number(r.created_at), expiresAt: Number(r.expires_at), usesLeft: Number(r.uses_left) });

/** What an initial access token looks like to operators (CLI, admin API): never the token. */
export function describeRegistrationToken(t: RegistrationToken): Record<string, unknown> {
  return { id: t.id, created_by: t.createdBy, created_at: new Date(t.createdAt).toISOString(), expires_at: new Date(t.expiresAt).toISOString(), uses_left: t.usesLeft };
}

/**
 * Makes an initial access token: valid `ttl` seconds (default a day), for `uses` registrations
 * (default one). The token is returned this once; only its hash is kept.
 */
export async function createRegistrationToken(ctx: AppContext, options: { ttl?: number; uses?: number }, actor: string | null, now = Date.now()): Promise<{ token: string; registrationToken: RegistrationToken }> {
  const ttl = options.ttl ?? REGISTRATION_TOKEN_TTL_S;
  const uses = options.uses ?? 1;
  if (!Number.isInteger(ttl) || ttl < 60 || ttl > MAX_REGISTRATION_TOKEN_TTL_S) bad('ttl', `must be a whole number of seconds from 60 to ${MAX_REGISTRATION_TOKEN_TTL_S} (30 days)`);
  if (!Number.isInteger(uses) || uses < 1 || uses > MAX_REGISTRATION_TOKEN_USES) bad('uses', `must be a whole number from 1 to ${MAX_REGISTRATION_TOKEN_USES}`);
  const id = newTimeOrderedId().replaceAll('-', '');
  const token = `${id}.${randomSecret(32)}`;
  const row: RegistrationTokenRow = { id, hash: sha256(token), created_by: actor, created_at: now, expires_at: now + ttl * 1000, uses_left: uses };
  await write(ctx.store, (tx) => insertRegistrationToken(tx, row));
  return { token, registrationToken: tokenOf(row) };
}

export async function listRegistrationTokens(ctx: AppContext, now = Date.now()): Promise<RegistrationToken[]> {
  return (await listLiveRegistrationTokens(ctx.store, now)).map(tokenOf);
}

/** Revokes an initial access token; false when there is no such token. */
export async function revokeRegistrationToken(ctx: AppContext, id: string): Promise<boolean> {
  return write(ctx.store, (tx) => deleteRegistrationToken(tx, id));
}

/** The live initial access token `token` is, or null (unknown, wrong secret, expired, used up, revoked): never says which. */
export async function openRegistrationToken(ctx: AppContext, token: string, now = Date.now()): Promise<RegistrationToken | null> {
  const dot = token.indexOf('.');
  if (dot <= 0 || token.length > 200) return null;
  const row = await findRegistrationToken(ctx.store, token.slice(0, dot));
  if (!row || !constantTimeEqual(row.hash, sha256(token)) || Number(row.uses_left) <= 0 || Number(row.expires_at) <= now) return null;
  return tokenOf(row);
}

/** The initial access token was spent by a concurrent registration between its check and this one's write. */
export class RegistrationTokenSpent extends Error {}

// ---- Registering, reading, replacing and deleting (RFC 7591, RFC 7592) ----

export interface Registered {
  client: Client;
  secret: string | null;
  /** The registration access token, returned this once (only its hash is kept). */
  registrationAccessToken: string;
  metadata: Record<string, unknown>;
}

/**
 * Registers a client from its metadata under the rules of `client add`. `token`: the initial
 * access token presented (auth.registration: token), spent in the same transaction as the client
 * is made. The actor of the `client.created` event is `registration` (open) or
 * `registration-token:<id>`.
 */
export async function registerDynamicClient(ctx: AppContext, metadata: RegistrationMetadata, token: RegistrationToken | null, now = Date.now()): Promise<Registered> {
  const id = `reg-${randomSecret(16)}`;
  const registrationAccessToken = randomSecret(32);
  const actor = token ? `registration-token:${token.id}` : 'registration';
  let row: ClientRegistrationRow | null = null;
  const { client, secret } = await registerClient(ctx, { ...metadata.client, id }, actor, async (tx, made) => {
    if (token && !(await spendRegistrationToken(tx, token.id, now))) throw new RegistrationTokenSpent();
    row = { client_id: made.id, token_hash: sha256(registrationAccessToken), auth_method: metadata.authMethod, contacts: JSON.stringify(metadata.contacts), created_by: actor, created_at: now };
    await insertClientRegistration(tx, row);
  });
  return { client, secret, registrationAccessToken, metadata: describeRegistration(client, row!) };
}

/** The registered client this registration access token manages (RFC 7592 §2), or null: unknown client, not registered, wrong token. */
export async function openRegistration(ctx: AppContext, clientId: string, token: string): Promise<{ client: Client; registration: ClientRegistrationRow } | null> {
  const registration = await findClientRegistration(ctx.store, clientId);
  if (!registration || !constantTimeEqual(registration.token_hash, sha256(token))) return null;
  const client = await findClient(ctx, clientId, true);
  return client ? { client, registration } : null;
}

/**
 * RFC 7592 §2.2: replaces the client's metadata (what is omitted goes back to its default), under
 * the same rules, never wider than the client is (notWider: an operator's restriction stays). The
 * type (public or confidential) stays; a change by the client itself takes back the operator's
 * verification. Null when the client is gone meanwhile.
 */
export async function replaceRegistration(ctx: AppContext, current: { client: Client }, metadata: RegistrationMetadata): Promise<Record<string, unknown> | null> {
  if (metadata.client.public !== current.client.public)
    bad('token_endpoint_auth_method', current.client.public ? 'a public client (none) cannot become confidential: register a new client' : 'a confidential client cannot become public (none): register a new client');
  const c = { ...metadata.client, ...notWider(current.client, metadata.client) };
  const row: Pick<ClientRegistrationRow, 'auth_method' | 'contacts'> = { auth_method: metadata.authMethod, contacts: JSON.stringify(metadata.contacts) };
  const updated = await updateClient(
    ctx,
    current.client.id,
    { name: c.name ?? current.client.id, redirectUris: c.redirectUris, grantTypes: c.grantTypes, scope: c.scope, uri: c.uri, verified: false, requirePar: c.requirePar },
    clientSubject(current.client.id),
    async (tx, client) => updateClientRegistration(tx, client.id, row),
  );
  return updated ? describeRegistration(updated, row) : null;
}

/**
 * What a client's own replacement may not do: widen what it has, which the operator may have
 * narrowed. Its scope stays within the current one (omitted: the current one; none current: no
 * ceiling), its grants within its grants, and PAR (DPoP is not registration metadata: it stays)
 * stays required once required. A wider ask is InvalidInput naming the field.
 */
function notWider(current: Client, asked: RegistrationMetadata['client']): Pick<RegistrationMetadata['client'], 'scope' | 'requirePar'> {
  const wider = asked.grantTypes.filter((g) => !(current.grantTypes as readonly string[]).includes(g));
  if (wider.length) bad('grant_types', `${wider.join(', ')} is more than this client has (${current.grantTypes.join(', ')}); ask the operator of this gatehouse`);
  let scope = asked.scope ?? current.scope;
  if (current.scope !== null && scope !== null) {
    const has = new Set(current.scope.split(' '));
    const more = scope.trim().split(/\s+/).filter((s) => !has.has(s));
    if (more.length) bad('scope', `${more.join(' ')} is more than this client has (${current.scope}); ask the operator of this gatehouse`);
    scope = scope.trim();
  }
  return { scope, requirePar: current.requirePar || asked.requirePar === true };
}

/** RFC 7592 §2.2: a replacement may carry the client's secret, which must then be the current one (compared in constant time). */
export function isCurrentSecret(client: Client, secret: unknown): boolean {
  return typeof secret === 'string' && client.secretHash !== null && constantTimeEqual(client.secretHash, sha256(secret));
}

/** RFC 7592 §2.3: the client removes itself (its grants and tokens end). */
export async function deleteRegistration(ctx: AppContext, clientId: string): Promise<Revoked | null> {
  return removeClient(ctx, clientId, clientSubject(clientId));
}

/** The ids of the clients that registered themselves (the console marks them "registered by itself"). */
export async function selfRegisteredClientIds(ctx: AppContext): Promise<Set<string>> {
  return new Set(await registeredClientIds(ctx.store));
}

/**
 * The host of a client's home page as the consent page may show it, or null. A client that
 * registered itself chose its `client_uri` unchecked ("accounts.google.com"): it is shown only when
 * it is on the host of one of its redirect URIs — where the user's answer goes anyway — as for a
 * metadata document client (whose home page is checked against its document's host when read).
 */
export async function shownHomePageHost(ctx: AppContext, client: Client): Promise<string | null> {
  if (!client.uri || !URL.canParse(client.uri)) return null;
  const host = new URL(client.uri).host;
  if (!(await findClientRegistration(ctx.store, client.id))) return host;
  return client.redirectUris.some((uri) => URL.canParse(uri) && new URL(uri).host === host) ? host : null;
}
