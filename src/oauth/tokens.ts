import type { Kysely } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { AppContext } from '../context.js';
import type { Database } from '../store/schema.js';
import { preparedInsert } from '../store/prepared-insert.js';
import { announceRevocation } from '../access/revocation-notices.js';
import type { KeyRing } from '../security/keys.js';
import { newAccessToken, randomSecret, sha256 } from '../security/secrets.js';
import type { Client, TokenType } from './clients.js';
import { formatScope } from './scopes.js';

// Grants and the tokens issued from them. Tokens are opaque random strings (256 bits; an access
// token also carries a non-secret selector, see newAccessToken); only their SHA-256 is stored.
// An access token issued under a grant is valid only while both are unrevoked and unexpired — so
// revoking a grant kills every token issued from it at once, on every instance.

/** The mac_key of a mac token, derived (never stored) from the server key it was issued under. */
export async function deriveMacKey(keys: KeyRing, keyId: string, accessToken: string): Promise<string | null> {
  return keys.macWith(keyId, `mac_key:${accessToken}`);
}

/** The access token response record of SPEC.md (plus the mac fields of draft-ietf-oauth-v2-http-mac-02). */
export interface TokenResponse {
  access_token: string;
  token_type: TokenType;
  expires_in: number;
  refresh_token?: string;
  scope: string;
  mac_key?: string;
  mac_algorithm?: 'hmac-sha-256';
}

export interface Grant {
  id: string;
  clientId: string;
  subject: string;
  scope: string;
  expiresAt: number;
}

export function newGrantId(): string {
  return uuidv7();
}

/** Records what a subject authorized a client to do, and until when. */
export async function createGrant(
  db: Kysely<Database>,
  grant: { id?: string; clientId: string; subject: string; scope: string[]; expiresAt: number },
): Promise<Grant> {
  const row = {
    id: grant.id ?? newGrantId(),
    client_id: grant.clientId,
    subject: grant.subject,
    scope: formatScope(grant.scope),
    expires_at: grant.expiresAt,
    revoked_at: null,
    revoked_reason: null,
    created_at: Date.now(),
  };
  await db.insertInto('grants').values(row).execute();
  return { id: row.id, clientId: row.client_id, subject: row.subject, scope: row.scope, expiresAt: row.expires_at };
}

export async function findGrant(db: Kysely<Database>, id: string) {
  return db.selectFrom('grants').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Revokes a grant and with it every access and refresh token issued from it, and announces it. */
export async function revokeGrant(ctx: AppContext, grantId: string, reason: string): Promise<boolean> {
  const r = await ctx.store.db
    .updateTable('grants')
    .set({ revoked_at: Date.now(), revoked_reason: reason })
    .where('id', '=', grantId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  const revoked = Number(r.numUpdatedRows) > 0;
  if (revoked) await announceRevocation(ctx);
  return revoked;
}

/** Whose grants and tokens to end: everything a client holds, or everything a subject authorized. */
export type Holder = { clientId: string } | { subject: string };

export interface Revoked {
  grants: number;
  accessTokens: number;
}

/**
 * Ends every grant and access token of a client or subject at once (client or user removal), and
 * deletes their unredeemed authorization codes. Refresh tokens die with their grants. Runs in the
 * caller's transaction; the resource side sees it within its revalidation interval.
 */
export async function revokeAllOf(db: Kysely<Database>, holder: Holder, reason: string): Promise<Revoked> {
  const now = Date.now();
  const [column, value] = 'clientId' in holder ? (['client_id', holder.clientId] as const) : (['subject', holder.subject] as const);
  const grants = await db.updateTable('grants').set({ revoked_at: now, revoked_reason: reason }).where(column, '=', value).where('revoked_at', 'is', null).executeTakeFirst();
  const tokens = await db.updateTable('access_tokens').set({ revoked_at: now }).where(column, '=', value).where('revoked_at', 'is', null).executeTakeFirst();
  // Codes not redeemed yet are deleted, not marked used: a later redemption is an unknown code, not a replay.
  await db.deleteFrom('authorization_codes').where(column, '=', value).where('used_at', 'is', null).execute();
  return { grants: Number(grants.numUpdatedRows), accessTokens: Number(tokens.numUpdatedRows) };
}

export interface IssueRequest {
  client: Client;
  /** The grant the tokens belong to; id null for a token that stands alone (client_credentials). */
  grant: Omit<Grant, 'id'> & { id: string | null };
  /** The access token's scope (may be narrower than the grant's). */
  scope: string[];
  /** Issue a refresh token carrying this scope (null: no refresh token). */
  refreshScope: string[] | null;
}

/** Tokens made but not yet stored: minted outside a transaction (the key ring may read the database). */
export interface MintedTokens {
  response: TokenResponse;
  access: Database['access_tokens'];
  refresh: Database['refresh_tokens'] | null;
}

/**
 * Makes an access token (and a refresh token when asked) under a grant. Neither outlives the
 * grant: expires_in is the smaller of the configured lifetime and what remains of the grant.
 */
export async function mintTokens(ctx: AppContext, req: IssueRequest): Promise<MintedTokens> {
  const now = Date.now();
  const { auth } = ctx.config;
  const accessExpiresAt = Math.min(now + auth.accessTokenTtl * 1000, req.grant.expiresAt);
  const { token: accessToken, id: accessId, hash: accessHash } = newAccessToken();
  const tokenType = req.client.tokenType;
  const response: TokenResponse = {
    access_token: accessToken,
    token_type: tokenType,
    expires_in: Math.max(0, Math.floor((accessExpiresAt - now) / 1000)),
    scope: formatScope(req.scope),
  };
  let keyId: string | null = null;
  if (tokenType === 'mac') {
    keyId = (await ctx.keys.currentKey()).id;
    response.mac_key = (await deriveMacKey(ctx.keys, keyId, accessToken))!;
    response.mac_algorithm = 'hmac-sha-256';
  }
  const access = {
    id: accessId,
    hash: accessHash,
    grant_id: req.grant.id,
    client_id: req.client.id,
    subject: req.grant.subject,
    scope: response.scope,
    token_type: tokenType,
    key_id: keyId,
    expires_at: accessExpiresAt,
    revoked_at: null,
    created_at: now,
  };
  let refresh: MintedTokens['refresh'] = null;
  if (req.refreshScope && req.grant.id !== null) {
    const refreshToken = randomSecret(32);
    refresh = {
      hash: sha256(refreshToken),
      grant_id: req.grant.id,
      client_id: req.client.id,
      scope: formatScope(req.refreshScope),
      expires_at: Math.min(now + auth.refreshTokenTtl * 1000, req.grant.expiresAt),
      used_at: null,
      created_at: now,
    };
    response.refresh_token = refreshToken;
  }
  return { response, access, refresh };
}

const insertAccessToken = preparedInsert('access_tokens', [
  'id',
  'hash',
  'grant_id',
  'client_id',
  'subject',
  'scope',
  'token_type',
  'key_id',
  'expires_at',
  'revoked_at',
  'created_at',
]);

export async function saveTokens(db: Kysely<Database>, minted: MintedTokens): Promise<TokenResponse> {
  await insertAccessToken(db, minted.access);
  if (minted.refresh) await db.insertInto('refresh_tokens').values(minted.refresh).execute();
  return minted.response;
}

export async function issueTokens(ctx: AppContext, db: Kysely<Database>, req: IssueRequest): Promise<TokenResponse> {
  return saveTokens(db, await mintTokens(ctx, req));
}

/** Whether the client gets refresh tokens: only when registered for the refresh_token grant. */
export function issuesRefreshTokens(client: Client): boolean {
  return client.grantTypes.includes('refresh_token');
}

/**
 * Deletes what can no longer matter: tokens and grants past their end, ended sessions, closed
 * throttle windows. Kept an hour longer than needed so a late request still gets the right error.
 */
export async function purgeExpired(ctx: AppContext): Promise<void> {
  const db = ctx.store.db;
  const cutoff = Date.now() - 3_600_000;
  await db.deleteFrom('access_tokens').where('expires_at', '<', cutoff).execute();
  await db.deleteFrom('refresh_tokens').where('expires_at', '<', cutoff).execute();
  await db.deleteFrom('grants').where('expires_at', '<', cutoff).execute();
  await db.deleteFrom('sessions').where('expires_at', '<', cutoff).execute();
  await db.deleteFrom('counters').where('key', 'like', 'login:%').where('window_start', '<', cutoff - ctx.config.auth.loginThrottle.window * 1000).execute();
}
