import type { AppContext } from '../context.js';
import { RevalidatingCache } from './revalidating-cache.js';
import { accessTokenKey, constantTimeEqual, type AccessTokenKey } from '../security/secrets.js';
import type { CompiledQuery, InferResult, Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import type { Caller } from './caller.js';

// Access token verification for the resource side: one indexed lookup of the token's selector
// joined with its client and grant. Results are cached for at most REVALIDATE_MS, so a revocation
// anywhere (any instance, or the separate auth process) is honoured everywhere within a second —
// at once where it is announced (revocation-notices.ts: this process, and every instance with Redis).

export const REVALIDATE_MS = 500;
const MAX_CACHED = 10_000;

export interface VerifiedToken extends Caller {
  keyId: string | null;
  issuedAt: number;
}

export class TokenVerifier {
  private readonly cache: RevalidatingCache<VerifiedToken | null>;

  constructor(private readonly ctx: AppContext) {
    this.cache = new RevalidatingCache(ctx, REVALIDATE_MS, MAX_CACHED);
  }

  /** The caller the token stands for, or null when it is unknown, expired or revoked. */
  async verify(token: string): Promise<VerifiedToken | null> {
    const key = accessTokenKey(token);
    const now = Date.now();
    const hit = this.cache.get(key.hash, now);
    if (hit !== undefined) return hit && hit.expiresAt > now ? hit : null;
    const found = await activeAccessToken(this.ctx.store.db, key, now);
    this.cache.set(key.hash, found, now);
    return found;
  }
}

/**
 * The one definition of an active access token: known, not revoked, not expired, its client still
 * registered, and — when it came from a grant (every grant but client_credentials) — its grant
 * neither revoked nor past the validity the user chose. Used by the resource side and by
 * introspection.
 */
export async function activeAccessToken(db: Kysely<Database>, key: AccessTokenKey, now = Date.now()): Promise<VerifiedToken | null> {
  return activeFrom(await storedAccessToken(db, key), now);
}

/** activeAccessToken for a row already read (introspection tells "unknown" from "inactive"). */
export function activeFrom(row: TokenRow | null, now = Date.now()): VerifiedToken | null {
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
    tokenType: row.token_type === 'mac' ? 'mac' : 'bearer',
    expiresAt,
    keyId: row.key_id,
    issuedAt: Number(row.created_at),
  };
}

/** The stored row of an access token (whatever its state), found by selector and checked against the hash. */
export async function storedAccessToken(db: Kysely<Database>, key: AccessTokenKey): Promise<TokenRow | null> {
  let query = tokenQueries.get(db);
  if (!query) tokenQueries.set(db, (query = tokenQuery(db, '')));
  const row = (await db.executeQuery<TokenRow>({ ...query, parameters: [key.id] })).rows[0];
  return row && constantTimeEqual(row.hash, key.hash) ? row : null;
}

/** Verification runs on every request: the query is built and compiled once per database. */
const tokenQueries = new WeakMap<Kysely<Database>, CompiledQuery<TokenRow>>();
type TokenRow = InferResult<ReturnType<typeof tokenQuery>>[number];

function tokenQuery(db: Kysely<Database>, id: string) {
  return db
    .selectFrom('access_tokens as a')
    // A removed client's tokens die with it, even one issued by an instance that still had it cached.
    .innerJoin('clients as c', 'c.id', 'a.client_id')
    .leftJoin('grants as g', 'g.id', 'a.grant_id')
    .select([
      'a.id',
      'a.hash',
      'a.grant_id',
      'a.client_id',
      'a.subject',
      'a.scope',
      'a.token_type',
      'a.key_id',
      'a.expires_at',
      'a.revoked_at',
      'a.created_at',
      'g.id as grant_found',
      'g.expires_at as grant_expires_at',
      'g.revoked_at as grant_revoked_at',
    ])
    .where('a.id', '=', id)
    .compile();
}
