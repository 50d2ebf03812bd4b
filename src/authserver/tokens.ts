import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../contract/context.js';
import { deriveMacKey } from '../contract/mac-key.js';
import { announceRevocation } from '../contract/revocation-notices.js';
import { formatScope } from './scope-request.js';
import { newAccessToken, newTimeOrderedId, randomSecret, sha256 } from '../platform/crypto/secrets.js';
import { write, writeGrouped, type WriteTx } from '../platform/store/write-path.js';
import { audit, type AuditEvent, type AuditFields } from './audit.js';
import { OPENID_SCOPE } from './oidc/claims.js';
import { mintIdToken, type SignInFacts } from './oidc/id-token.js';
import { mintJwtAccessToken } from './oidc/jwt-access-token.js';
import { resourceNamed } from '../contract/resources.js';
import { grantEnabled, type Client, type GrantType, type TokenType } from './model/client.js';
import {
  findGrantRow,
  saveGrant,
  endTokensBeyond,
  insertTokens,
  revokeAccessTokenRow,
  revokeAllRowsOf,
  revokeGrantRow,
  revokeGrantRowsWithScope,
  listLiveGrantRows,
  type AccessTokenRow,
  type GrantRow,
  type Holder,
  type RefreshTokenRow,
  type RevokedGrant,
} from './store/grants.js';

// Grants and the tokens issued from them. Tokens are opaque random strings (256 bits; an access
// token also carries a non-secret selector, see newAccessToken); only their SHA-256 is stored.
// An access token issued under a grant is valid only while both are unrevoked and unexpired — so
// revoking a grant kills every token issued from it at once, on every instance.
//
// issueTokens is the one pipeline of all five grants: mint → persist (the grant saved, its own
// claim, the tokens, in one transaction) → audit. A user has one grant per client: a new
// authorization (consent, password grant) replaces the live one's scope and validity, and the
// tokens issued under it beyond the new scope end. revokeAfterReplay is the one answer to a replayed code or refresh
// token: revoke the grant → audit.

export type { Holder } from './store/grants.js';

/** The access token response (docs/oauth.md#tokens, plus the mac fields of draft-ietf-oauth-v2-http-mac-02). */
export interface TokenResponse {
  access_token: string;
  token_type: TokenType | 'DPoP';
  expires_in: number;
  refresh_token?: string;
  scope: string;
  mac_key?: string;
  mac_algorithm?: 'hmac-sha-256';
  /** OpenID Connect: when the scope holds `openid` and the tokens come from a user's sign-in. */
  id_token?: string;
}

export interface Grant {
  id: string;
  clientId: string;
  subject: string;
  scope: string;
  expiresAt: number;
}

export interface Revoked {
  grants: number;
  accessTokens: number;
}

export async function findGrant(ctx: AppContext, id: string): Promise<(Grant & { revokedAt: number | null }) | null> {
  const row = await findGrantRow(ctx.store, id);
  return row
    ? { id: row.id, clientId: row.client_id, subject: row.subject, scope: row.scope, expiresAt: Number(row.expires_at), revokedAt: row.revoked_at === null ? null : Number(row.revoked_at) }
    : null;
}

export interface GrantView {
  id: string;
  subject: string;
  client_id: string;
  scope: string;
  created_at: string;
  expires_at: string;
  /** When a token was last issued from it (sign-in, code exchange or refresh); null when never. */
  last_used_at: string | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The live grants (neither revoked nor past their validity) of a subject and/or a client, newest first. */
export async function listGrants(ctx: AppContext, filter: { subject?: string; clientId?: string }, limit = 1000): Promise<GrantView[]> {
  const rows = await listLiveGrantRows(ctx.store, filter, Date.now(), limit);
  return rows.map((r) => ({
    id: r.id,
    subject: r.subject,
    client_id: r.client_id,
    scope: r.scope,
    created_at: iso(Number(r.created_at)),
    expires_at: iso(Number(r.expires_at)),
    last_used_at: r.last_used_at === null ? null : iso(r.last_used_at),
  }));
}

/** The `grant.revoked` events of grants revoked in this write (docs/events.md#types). */
function grantsRevoked(tx: WriteTx, grants: readonly RevokedGrant[], actor: string | null, reason: string): void {
  for (const g of grants)
    tx.emit({
      type: 'grant.revoked',
      record_id: g.id,
      owner: g.subject,
      actor,
      data: JSON.stringify({ id: g.id, client_id: g.client_id, subject: g.subject, scope: g.scope, reason }),
    });
}

/** Revokes a subject's grants that hold `scope` (e.g. `admin` when the right is taken away), inside the caller's write. */
export async function revokeGrantsWithScope(ctx: AppContext, tx: WriteTx, subject: string, scope: string, reason: string, actor: string | null = null): Promise<number> {
  const grants = await revokeGrantRowsWithScope(tx, subject, scope, reason, Date.now());
  grantsRevoked(tx, grants, actor, reason);
  if (grants.length) tx.afterCommit(() => announceRevocation(ctx));
  return grants.length;
}

/** Revokes a grant and with it every access and refresh token issued from it, and announces it. */
export async function revokeGrant(ctx: AppContext, grantId: string, reason: string, actor: string | null = null): Promise<boolean> {
  return write(ctx.store, async (tx) => {
    const revoked = await revokeGrantRow(tx, grantId, reason, Date.now());
    if (revoked) {
      grantsRevoked(tx, [revoked], actor, reason);
      tx.afterCommit(() => announceRevocation(ctx));
    }
    return revoked !== null;
  });
}

/** Ends one access token (RFC 7009 revocation by its client). */
export async function revokeAccessToken(ctx: AppContext, id: string): Promise<void> {
  await write(ctx.store, async (tx) => {
    const token = await revokeAccessTokenRow(tx, id, Date.now());
    if (token)
      tx.emit({
        type: 'token.revoked',
        record_id: id,
        owner: token.subject,
        actor: `client:${token.client_id}`,
        data: JSON.stringify({ id, client_id: token.client_id, subject: token.subject, grant_id: token.grant_id }),
      });
    tx.afterCommit(() => announceRevocation(ctx));
  });
}

/**
 * Ends every grant and access token of a client or subject at once (client or user removal), and
 * deletes their unredeemed authorization codes, inside the caller's write; announced once committed.
 */
export async function revokeAllOf(ctx: AppContext, tx: WriteTx, holder: Holder, reason: string, actor: string | null = null): Promise<Revoked> {
  const revoked = await revokeAllRowsOf(tx, holder, reason, Date.now());
  grantsRevoked(tx, revoked.grants, actor, reason);
  tx.afterCommit(() => announceRevocation(ctx));
  return { grants: revoked.grants.length, accessTokens: revoked.accessTokens };
}

/** A replayed code or refresh token: whoever holds it now, the tokens issued from its grant are no longer trusted. */
export async function revokeAfterReplay(
  ctx: AppContext,
  log: FastifyBaseLogger,
  grantId: string | null,
  event: Extract<AuditEvent, 'code.replayed' | 'refresh.reused'>,
  fields: AuditFields,
): Promise<void> {
  if (grantId) await revokeGrant(ctx, grantId, event === 'code.replayed' ? 'code replayed' : 'refresh token reused');
  audit(ctx, log, event, { ...fields, grant_id: grantId });
}

/** Whether the client gets refresh tokens: only when registered for the refresh_token grant and the deployment offers it (auth.grants). */
export function issuesRefreshTokens(ctx: AppContext, client: Client): boolean {
  return client.grantTypes.includes('refresh_token') && grantEnabled(ctx.config, 'refresh_token');
}

/**
 * A client as it asks for tokens in one request: `proofKey` is the SHA-256 thumbprint of the key
 * of the DPoP proof the token endpoint verified (RFC 9449), set there for every grant; the tokens
 * are bound to it.
 */
export type RequestingClient = Client & { readonly proofKey?: string };

/** The DPoP key the tokens of this request are to be bound to, if any. */
export const proofKeyOf = (client: RequestingClient): string | null => client.proofKey ?? null;

export interface IssueRequest {
  grantType: GrantType;
  client: RequestingClient;
  subject: string;
  /**
   * The grant the tokens belong to: a new authorization (stored with the tokens: it replaces this
   * subject's live grant to this client, or creates it), an existing grant (refresh, remembered
   * consent), or none for a token that stands alone (client_credentials: the configured lifetime).
   * A new authorization ends at a moment already chosen (consent, a code's grant) or after a
   * lifetime counted, like the tokens', from the moment they are minted.
   */
  grant: { new: { scope: string[] } & ({ expiresAt: number } | { lifetimeSeconds: number }) } | { existing: Grant } | { none: true };
  /** The access token's scope (may be narrower than the grant's). */
  scope: string[];
  /** Issue a refresh token carrying this scope (null: no refresh token). */
  refreshScope: string[] | null;
  /** Runs in the transaction once the grant is known (claim the code or refresh token); false: nothing is stored. */
  claim?: (tx: WriteTx, grantId: string | null) => Promise<boolean>;
  /** Share a commit with other token requests of the same moment (no claim, no new grant). */
  grouped?: boolean;
  /**
   * The user's sign-in behind these tokens (a code's, carried by the refresh token): with `openid`
   * in the scope, the response carries an ID token. Null: none known (password grant, a refresh
   * token from before OpenID Connect).
   */
  signIn?: SignInFacts | null;
  /** RFC 8707: the access token's audience, a resource's path (contract/resources.ts; resource-request.ts `audienceOf`); default the resource API. */
  audience?: string;
  /** RFC 8707: the resources the refresh token may be redeemed for (stored form; null or absent: the resource API). */
  refreshResources?: string | null;
  /** The audit line written once the tokens are stored. */
  audit: { event: Extract<AuditEvent, 'grant.issued' | 'token.refreshed'>; fields?: AuditFields };
}

/**
 * The token pipeline. Neither token outlives the grant: expires_in is the smaller of the configured
 * lifetime and what remains of the grant. Null when the claim failed (nothing was stored).
 */
export async function issueTokens(ctx: AppContext, log: FastifyBaseLogger, req: IssueRequest): Promise<TokenResponse | null> {
  const now = Date.now();
  const grant: Grant | null =
    'new' in req.grant
      ? {
          id: newTimeOrderedId(),
          clientId: req.client.id,
          subject: req.subject,
          scope: formatScope(req.grant.new.scope),
          expiresAt: 'expiresAt' in req.grant.new ? req.grant.new.expiresAt : now + req.grant.new.lifetimeSeconds * 1000,
        }
      : 'existing' in req.grant
        ? req.grant.existing
        : null;
  const endsAt = grant?.expiresAt ?? Number.POSITIVE_INFINITY;
  // Minted outside the transaction: the key ring may read the database.
  const minted = await mint(ctx, req, grant?.id ?? null, endsAt, now);
  let replaced = false;
  const persist = async (tx: WriteTx): Promise<void> => {
    if (grant && 'new' in req.grant) {
      const saved = await saveGrant(tx, grantRow(grant, now), now);
      replaced = !saved.created;
      grant.id = saved.id;
      minted.access.grant_id = saved.id;
      if (minted.refresh) minted.refresh.grant_id = saved.id;
      if (replaced) {
        // The user's new decision stands: nothing issued before keeps a scope it no longer grants.
        // (A decision that covers the previous one takes nothing back: no token to look at.)
        const scope = req.grant.new.scope;
        const covers = saved.previousScope !== null && saved.previousScope.split(' ').every((s) => s === '' || scope.includes(s));
        if (!covers && (await endTokensBeyond(tx, saved.id, scope, now))) tx.afterCommit(() => announceRevocation(ctx));
      } else
        tx.emit({
          type: 'grant.created',
          record_id: grant.id,
          owner: grant.subject,
          actor: grant.subject,
          data: JSON.stringify({ id: grant.id, client_id: grant.clientId, subject: grant.subject, scope: grant.scope, expires_at: new Date(grant.expiresAt).toISOString() }),
        });
    }
    // A lost claim rolls the whole write back (the grant's change included).
    if (req.claim && !(await req.claim(tx, grant?.id ?? null))) throw new ClaimLost();
    await insertTokens(tx, minted.access, minted.refresh);
  };
  if (req.grouped && !req.claim && !('new' in req.grant)) await writeGrouped(ctx.store, persist);
  else
    try {
      await write(ctx.store, persist);
    } catch (e) {
      if (e instanceof ClaimLost) return null;
      throw e;
    }
  audit(ctx, log, req.audit.event, {
    grant_type: req.audit.event === 'grant.issued' ? req.grantType : undefined,
    client_id: req.client.id,
    subject: req.subject,
    grant_id: grant?.id,
    scope: minted.response.scope,
    ...(replaced ? { reason: 'replaced the earlier authorization of this client' } : {}),
    ...req.audit.fields,
  });
  return minted.response;
}

/** The claim of a code or refresh token was lost to a concurrent request: nothing is stored. */
class ClaimLost extends Error {}

function grantRow(grant: Grant, now: number): GrantRow {
  return {
    id: grant.id,
    client_id: grant.clientId,
    subject: grant.subject,
    scope: grant.scope,
    expires_at: grant.expiresAt,
    revoked_at: null,
    revoked_reason: null,
    created_at: now,
  };
}

async function mint(ctx: AppContext, req: IssueRequest, grantId: string | null, endsAt: number, now: number) {
  const { auth } = ctx.config;
  const accessExpiresAt = Math.min(now + auth.accessTokenTtl * 1000, endsAt);
  const tokenType = req.client.tokenType;
  const jkt = proofKeyOf(req.client);
  const audience = req.audience ?? resourceNamed(ctx.config, 'api').path;
  let { token: accessToken, id: accessId, hash: accessHash } = newAccessToken();
  if (auth.accessTokenFormat === 'jwt' && tokenType === 'bearer') {
    // RFC 9068: the same row, found by its selector, which the JWT carries as its `jti`.
    accessToken = await mintJwtAccessToken(ctx, { jti: accessId, subject: req.subject, clientId: req.client.id, audience, scope: formatScope(req.scope), issuedAt: now, expiresAt: accessExpiresAt, authTime: req.signIn?.authTime, jkt });
    accessHash = sha256(accessToken);
  }
  const response: TokenResponse = {
    access_token: accessToken,
    token_type: jkt ? 'DPoP' : tokenType,
    expires_in: Math.max(0, Math.floor((accessExpiresAt - now) / 1000)),
    scope: formatScope(req.scope),
  };
  let keyId: string | null = null;
  if (tokenType === 'mac') {
    keyId = (await ctx.keys.currentKey()).id;
    response.mac_key = (await deriveMacKey(ctx.keys, keyId, accessToken))!;
    response.mac_algorithm = 'hmac-sha-256';
  }
  const access: AccessTokenRow = {
    id: accessId,
    hash: accessHash,
    grant_id: grantId,
    client_id: req.client.id,
    subject: req.subject,
    scope: response.scope,
    token_type: tokenType,
    key_id: keyId,
    expires_at: accessExpiresAt,
    revoked_at: null,
    created_at: now,
    jkt,
    audience,
  };
  let refresh: RefreshTokenRow | null = null;
  if (req.refreshScope && grantId !== null) {
    const refreshToken = randomSecret(32);
    refresh = {
      hash: sha256(refreshToken),
      grant_id: grantId,
      client_id: req.client.id,
      scope: formatScope(req.refreshScope),
      expires_at: Math.min(now + auth.refreshTokenTtl * 1000, endsAt),
      used_at: null,
      created_at: now,
      auth_time: req.signIn?.authTime ?? null,
      sid: req.signIn?.sid ?? null,
      amr: req.signIn?.amr ? JSON.stringify(req.signIn.amr) : null,
      // RFC 9449 §5: a public client's refresh token is bound too; a confidential client's is held by its secret.
      jkt: req.client.public ? jkt : null,
      resources: req.refreshResources ?? null,
    };
    response.refresh_token = refreshToken;
  }
  if (req.signIn && req.scope.includes(OPENID_SCOPE))
    response.id_token = await mintIdToken(ctx, { client: req.client, subject: req.subject, facts: req.signIn, accessToken, claims: {} });
  return { response, access, refresh };
}
