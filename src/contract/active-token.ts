import type { AppContext } from './context.js';
import { RevalidatingCache } from './revalidating-cache.js';
import { accessTokenKey, constantTimeEqual, type AccessTokenKey } from '../platform/crypto/secrets.js';
import type { Caller } from './caller.js';
import type { StoredAccessToken } from './access-token-source.js';
import { JwtAccessTokenCheck, isJwt } from './jwt-access-token.js';

export type { AccessTokenSource, StoredAccessToken } from './access-token-source.js';

// The active-token check, shared by both servers: the resource side verifies every request's
// token with it, introspection describes tokens with it. The authorization server owns the token
// tables and provides the lookup (AccessTokenSource, wired into the context at start-up): one
// indexed read of the token's selector joined with its grant, and whether its client is still
// registered. Results are cached for at most REVALIDATE_MS, so a revocation
// anywhere (any instance, or the separate auth process) is honoured everywhere within a second —
// at once where it is announced (revocation-notices.ts: this process, and every instance with Redis).

export const REVALIDATE_MS = 500;
const MAX_CACHED = 10_000;

export interface VerifiedToken extends Caller {
  keyId: string | null;
  /** DPoP: the thumbprint of the key the token is bound to (tokenType `dpop`); else null. */
  jkt: string | null;
  issuedAt: number;
  /** RFC 8707: the resource the token is for, as its path under publicUrl (contract/resources.ts `isAudienceOf`); null: stored before audiences, the resource API. */
  audience: string | null;
}

export interface TokenVerifierOptions {
  /** The issuer a JWT access token must name (default publicUrl; the resource role names its authorization server's). */
  issuer?: () => string;
}

export class TokenVerifier {
  private readonly cache: RevalidatingCache<VerifiedToken | null>;
  private readonly jwt: JwtAccessTokenCheck;
  private readonly issuer: () => string;

  constructor(
    private readonly ctx: AppContext,
    options: TokenVerifierOptions = {},
  ) {
    this.cache = new RevalidatingCache(ctx, REVALIDATE_MS, MAX_CACHED);
    this.issuer = options.issuer ?? (() => ctx.config.publicUrl);
    this.jwt = new JwtAccessTokenCheck(ctx.accessTokens, this.issuer);
  }

  /** The caller the token stands for, or null when it is unknown, expired or revoked. */
  async verify(token: string): Promise<VerifiedToken | null> {
    const key = accessTokenKey(token);
    const now = Date.now();
    const hit = this.cache.get(key.hash, now);
    if (hit !== undefined) return hit && hit.expiresAt > now ? hit : null;
    const source = this.ctx.accessTokens;
    // A JWT access token (RFC 9068): its signature, typ, iss and exp first; then its row like any token's.
    const claims = isJwt(token) ? await this.jwt.verify(token, now) : undefined;
    let found = claims === null ? null : activeFrom(matchingToken(await source.find(key.id), key), now);
    if (found && claims && (claims.jti !== key.id || claims.aud !== this.issuer() + found.audience)) found = null;
    if (found) {
      // Even one issued by an instance that still had a removed client cached.
      const origins = await source.clientOrigins(found.clientId);
      found = origins === null ? null : { ...found, origins };
    }
    this.cache.set(key.hash, found, now);
    return found;
  }
}

/** The row, if its hash is the presented token's (constant-time). */
export function matchingToken(row: StoredAccessToken | null, key: AccessTokenKey): StoredAccessToken | null {
  return row && constantTimeEqual(row.hash, key.hash) ? row : null;
}

/**
 * The one definition of an active access token: known, not revoked, not expired, and — when it
 * came from a grant (every grant but client_credentials) — its grant neither revoked nor past the
 * validity the user chose. (Its client must also still be registered: see TokenVerifier.)
 */
export function activeFrom(row: StoredAccessToken | null, now = Date.now()): VerifiedToken | null {
  if (!row || row.revoked_at !== null) return null;
  if (row.grant_id !== null && (row.grant_found === null || row.grant_revoked_at !== null)) return null;
  const expiresAt = row.grant_id !== null ? Math.min(Number(row.expires_at), Number(row.grant_expires_at)) : Number(row.expires_at);
  if (expiresAt <= now) return null;
  return {
    subject: row.subject,
    clientId: row.client_id,
    scopes: new Set(row.scope.split(' ').filter(Boolean)),
    tokenHash: row.hash,
    grantId: row.grant_id,
    tokenType: row.jkt ? 'dpop' : row.token_type === 'mac' ? 'mac' : 'bearer',
    expiresAt,
    origins: [],
    keyId: row.key_id,
    jkt: row.jkt ?? null,
    issuedAt: Number(row.created_at),
    audience: row.audience ?? null,
  };
}
