import { sql } from 'kysely';
import type { CompiledQuery, InferResult, Kysely } from 'kysely';
import type { AccessTokensTable, AuthorizationCodesTable, Database, GrantsTable, RefreshTokensTable } from '../../platform/store/schema.js';
import { preparedInsert } from '../../platform/store/prepared-insert.js';
import { compiledOnce, count, rowsOf, sqlOf, type On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';

// Owner of a grant and everything issued under it: the grants, access_tokens, refresh_tokens and
// authorization_codes tables. Only hashes of tokens and codes are stored (access tokens are found
// by their non-secret selector, then checked against the hash by the caller).

export type GrantRow = GrantsTable;
export type AccessTokenRow = AccessTokensTable;
export type RefreshTokenRow = RefreshTokensTable;
export type CodeRow = AuthorizationCodesTable;

/**
 * Stores a user's authorization of a client: one live grant per subject and client (a partial
 * unique index, migration 0010). When one is live it keeps its id and takes this row's scope,
 * validity and moment (`created_at`: when the authorization standing now was given); when the
 * live one has expired it is retired and this row becomes the grant. Two authorizations racing
 * end in one row (the insert and the update are one statement). `previousScope` is the replaced
 * grant's scope, read under the row's lock (null when none was seen).
 */
export async function saveGrant(tx: WriteTx, row: GrantRow, now: number): Promise<{ id: string; created: boolean; previousScope: string | null }> {
  const db = sqlOf(tx);
  await db
    .updateTable('grants')
    .set({ revoked_at: now, revoked_reason: 'expired' })
    .where('subject', '=', row.subject)
    .where('client_id', '=', row.client_id)
    .where('revoked_at', 'is', null)
    .where('expires_at', '<=', now)
    .execute();
  // Locks the live grant (PostgreSQL) so that its scope cannot change before the upsert below.
  const previous = await db
    .updateTable('grants')
    .set((eb) => ({ scope: eb.ref('scope') }))
    .where('subject', '=', row.subject)
    .where('client_id', '=', row.client_id)
    .where('revoked_at', 'is', null)
    .returning('scope')
    .executeTakeFirst();
  const saved = await db
    .insertInto('grants')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['subject', 'client_id']).where('revoked_at', 'is', null).doUpdateSet({ scope: row.scope, expires_at: row.expires_at, created_at: row.created_at }),
    )
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: saved.id, created: saved.id === row.id, previousScope: previous?.scope ?? null };
}

/**
 * Ends what was issued under a grant beyond `scope` (the grant was just narrowed): its access
 * tokens are revoked, its refresh tokens expire. Returns how many access tokens ended.
 */
export async function endTokensBeyond(tx: WriteTx, grantId: string, scope: readonly string[], now: number): Promise<number> {
  const db = sqlOf(tx);
  const inside = (tokenScope: string) => tokenScope.split(' ').every((s) => s === '' || scope.includes(s));
  const access = await db.selectFrom('access_tokens').select(['id', 'scope']).where('grant_id', '=', grantId).where('revoked_at', 'is', null).where('expires_at', '>', now).execute();
  const accessIds = access.filter((t) => !inside(t.scope)).map((t) => t.id);
  if (accessIds.length) await db.updateTable('access_tokens').set({ revoked_at: now }).where('id', 'in', accessIds).execute();
  const refresh = await db.selectFrom('refresh_tokens').select(['hash', 'scope']).where('grant_id', '=', grantId).where('used_at', 'is', null).where('expires_at', '>', now).execute();
  const refreshHashes = refresh.filter((t) => !inside(t.scope)).map((t) => t.hash);
  if (refreshHashes.length) await db.updateTable('refresh_tokens').set({ expires_at: now }).where('hash', 'in', refreshHashes).execute();
  return accessIds.length;
}

export async function findGrantRow(on: On, id: string): Promise<GrantRow | null> {
  return (await sqlOf(on).selectFrom('grants').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

/** Marks the grant revoked (its tokens die with it); false when it already was, or is unknown. */
/** A grant that was just revoked: what its `grant.revoked` event says. */
export interface RevokedGrant {
  id: string;
  client_id: string;
  subject: string;
  scope: string;
}

const REVOKED_GRANT = ['id', 'client_id', 'subject', 'scope'] as const;

export async function revokeGrantRow(tx: WriteTx, id: string, reason: string, now: number): Promise<RevokedGrant | null> {
  const r = await sqlOf(tx)
    .updateTable('grants')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .returning(REVOKED_GRANT)
    .executeTakeFirst();
  return r ?? null;
}

/** Whose grants and tokens to end: everything a client holds, or everything a subject authorized. */
export type Holder = { clientId: string } | { subject: string };

/**
 * Ends every grant and access token of a client or subject, and deletes their unredeemed codes
 * (a later redemption is an unknown code, not a replay). Refresh tokens die with their grants.
 */
export async function revokeAllRowsOf(tx: WriteTx, holder: Holder, reason: string, now: number): Promise<{ grants: RevokedGrant[]; accessTokens: number }> {
  const db = sqlOf(tx);
  const [column, value] = 'clientId' in holder ? (['client_id', holder.clientId] as const) : (['subject', holder.subject] as const);
  const grants = await db
    .updateTable('grants')
    .set({ revoked_at: now, revoked_reason: reason })
    .where(column, '=', value)
    .where('revoked_at', 'is', null)
    .returning(REVOKED_GRANT)
    .execute();
  const tokens = await db.updateTable('access_tokens').set({ revoked_at: now }).where(column, '=', value).where('revoked_at', 'is', null).executeTakeFirst();
  await db.deleteFrom('authorization_codes').where(column, '=', value).where('used_at', 'is', null).execute();
  return { grants, accessTokens: count(tokens) };
}

/** Revokes a subject's live grants whose scope holds `scope` (a removed admin right). */
export async function revokeGrantRowsWithScope(tx: WriteTx, subject: string, scope: string, reason: string, now: number): Promise<RevokedGrant[]> {
  return sqlOf(tx)
    .updateTable('grants')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('subject', '=', subject)
    .where('revoked_at', 'is', null)
    .where(sql<string>`' ' || scope || ' '`, 'like', `% ${scope} %`)
    .returning(REVOKED_GRANT)
    .execute();
}

/** A grant with when a token was last issued from it. */
export type GrantListRow = GrantRow & { last_used_at: number | null };

/** The live grants (not revoked, not expired), newest first, of a subject and/or a client. */
export async function listLiveGrantRows(on: On, filter: { subject?: string; clientId?: string }, now: number, limit: number): Promise<GrantListRow[]> {
  let q = sqlOf(on)
    .selectFrom('grants as g')
    .selectAll('g')
    .select((eb) => eb.selectFrom('access_tokens as a').whereRef('a.grant_id', '=', 'g.id').select((e) => e.fn.max('a.created_at').as('m')).as('last_used_at'))
    .where('g.revoked_at', 'is', null)
    .where('g.expires_at', '>', now);
  if (filter.subject !== undefined) q = q.where('g.subject', '=', filter.subject);
  if (filter.clientId !== undefined) q = q.where('g.client_id', '=', filter.clientId);
  const rows = await q.orderBy('g.created_at', 'desc').orderBy('g.id', 'desc').limit(limit).execute();
  return rows.map((r) => ({ ...r, last_used_at: r.last_used_at === null ? null : Number(r.last_used_at) })) as GrantListRow[];
}

const insertAccessTokenRow = preparedInsert('access_tokens', [
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
  'jkt',
  'audience',
]);

export async function insertTokens(tx: WriteTx, access: AccessTokenRow, refresh: RefreshTokenRow | null): Promise<void> {
  await insertAccessTokenRow(sqlOf(tx), access);
  if (refresh) await sqlOf(tx).insertInto('refresh_tokens').values(refresh).execute();
}

/** An access token row with the state of its grant (null columns when it has none or it is gone). */
export type AccessTokenWithGrant = InferResult<ReturnType<typeof accessTokenQuery>>[number];

function accessTokenQuery(db: Kysely<Database>) {
  return db
    .selectFrom('access_tokens as a')
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
      'a.jkt',
      'a.expires_at',
      'a.revoked_at',
      'a.created_at',
      'a.audience',
      'g.id as grant_found',
      'g.expires_at as grant_expires_at',
      'g.revoked_at as grant_revoked_at',
    ])
    .where('a.id', '=', '');
}

/** The access token with this selector, whatever its state. Runs on every token check: compiled once. */
export async function findAccessTokenWithGrant(on: On, selector: string): Promise<AccessTokenWithGrant | null> {
  const db = sqlOf(on);
  const query = compiledOnce(db, 'access-token-with-grant', () => accessTokenQuery(db).compile()) as CompiledQuery<AccessTokenWithGrant>;
  return (await rowsOf<AccessTokenWithGrant>(on, { ...query, parameters: [selector] }))[0] ?? null;
}

/** Revokes one access token; returns whose it was (null when it was not live). */
export async function revokeAccessTokenRow(tx: WriteTx, id: string, now: number): Promise<{ client_id: string; subject: string; grant_id: string | null } | null> {
  const r = await sqlOf(tx)
    .updateTable('access_tokens')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .returning(['client_id', 'subject', 'grant_id'])
    .executeTakeFirst();
  return r ?? null;
}

export async function findRefreshTokenRow(on: On, hash: string): Promise<RefreshTokenRow | null> {
  return (await sqlOf(on).selectFrom('refresh_tokens').selectAll().where('hash', '=', hash).executeTakeFirst()) ?? null;
}

/** Retires a refresh token; of two racing claims exactly one gets true. */
export async function claimRefreshToken(tx: WriteTx, hash: string, now: number): Promise<boolean> {
  return count(await sqlOf(tx).updateTable('refresh_tokens').set({ used_at: now }).where('hash', '=', hash).where('used_at', 'is', null).executeTakeFirst()) === 1;
}

export async function insertCode(tx: WriteTx, row: CodeRow): Promise<void> {
  await sqlOf(tx).insertInto('authorization_codes').values(row).execute();
}

export async function findCodeRow(on: On, hash: string): Promise<CodeRow | null> {
  return (await sqlOf(on).selectFrom('authorization_codes').selectAll().where('hash', '=', hash).executeTakeFirst()) ?? null;
}

/** Marks a code used and ties it to the grant it becomes; of two racing redemptions exactly one gets true. */
export async function claimCode(tx: WriteTx, hash: string, grantId: string, now: number): Promise<boolean> {
  const r = await sqlOf(tx).updateTable('authorization_codes').set({ used_at: now, grant_id: grantId }).where('hash', '=', hash).where('used_at', 'is', null).executeTakeFirst();
  return count(r) === 1;
}

/** Deletes what can no longer matter (ended before `cutoff`); used codes stay while their grant can live, so a late replay still revokes it. */
export async function purgeEndedGrants(on: On, cutoff: number): Promise<Record<string, number>> {
  const db = sqlOf(on);
  return {
    access_tokens: count(await db.deleteFrom('access_tokens').where('expires_at', '<', cutoff).executeTakeFirst()),
    refresh_tokens: count(await db.deleteFrom('refresh_tokens').where('expires_at', '<', cutoff).executeTakeFirst()),
    grants: count(await db.deleteFrom('grants').where('expires_at', '<', cutoff).executeTakeFirst()),
    authorization_codes: count(
      await db.deleteFrom('authorization_codes').where('expires_at', '<=', cutoff).where('grant_expires_at', '<=', cutoff).executeTakeFirst(),
    ),
  };
}
