import { count, sqlOf, type On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';

// Owner of the second-factor tables: `user_factors` (TOTP authenticators and passkeys),
// `recovery_codes` (by their SHA-256, each usable once) and `webauthn_challenges` (by their
// SHA-256, single use). The rules are model/factors.ts's.

export type FactorKind = 'totp' | 'passkey';

export interface FactorRecord {
  id: string;
  userId: string;
  kind: FactorKind;
  label: string;
  /** TOTP: the sealed secret. */
  secret: string | null;
  lastStep: number | null;
  /** Passkey: the credential id (base64url), its public key (base64url COSE), signature counter and transports. */
  credentialId: string | null;
  publicKey: string | null;
  counter: number | null;
  transports: string[];
  createdAt: number;
  lastUsedAt: number | null;
  /** TOTP: wrong codes in a row. */
  failures: number;
}

type Row = {
  id: string;
  user_id: string;
  kind: string;
  label: string;
  secret: string | null;
  last_step: number | string | null;
  credential_id: string | null;
  public_key: string | null;
  counter: number | string | null;
  transports: string | null;
  created_at: number | string;
  last_used_at: number | string | null;
  failures: number | string | null;
};

const orNull = (v: number | string | null) => (v === null ? null : Number(v));

const fromRow = (r: Row): FactorRecord => ({
  id: r.id,
  userId: r.user_id,
  kind: r.kind as FactorKind,
  label: r.label,
  secret: r.secret,
  lastStep: orNull(r.last_step),
  credentialId: r.credential_id,
  publicKey: r.public_key,
  counter: orNull(r.counter),
  transports: r.transports ? r.transports.split(' ').filter(Boolean) : [],
  createdAt: Number(r.created_at),
  lastUsedAt: orNull(r.last_used_at),
  failures: Number(r.failures ?? 0),
});

export async function insertFactor(tx: WriteTx, f: Omit<FactorRecord, 'lastStep' | 'lastUsedAt' | 'failures'> & { lastStep?: number | null }): Promise<void> {
  await sqlOf(tx)
    .insertInto('user_factors')
    .values({
      id: f.id,
      user_id: f.userId,
      kind: f.kind,
      label: f.label,
      secret: f.secret,
      last_step: f.lastStep ?? null,
      credential_id: f.credentialId,
      public_key: f.publicKey,
      counter: f.counter,
      transports: f.transports.length ? f.transports.join(' ') : null,
      created_at: f.createdAt,
      last_used_at: null,
      failures: 0,
    })
    .execute();
}

export async function listFactorsOfUser(on: On, userId: string): Promise<FactorRecord[]> {
  return ((await sqlOf(on).selectFrom('user_factors').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute()) as Row[]).map(fromRow);
}

export async function findFactorByCredentialId(on: On, credentialId: string): Promise<FactorRecord | null> {
  const row = (await sqlOf(on).selectFrom('user_factors').selectAll().where('credential_id', '=', credentialId).executeTakeFirst()) as Row | undefined;
  return row ? fromRow(row) : null;
}

/**
 * Marks a TOTP step as used, only if it is later than the last one used: one statement, so of two
 * requests racing with one code (on any instances) exactly one succeeds.
 */
export async function useTotpStep(tx: WriteTx, factorId: string, step: number, now: number): Promise<boolean> {
  const result = await sqlOf(tx)
    .updateTable('user_factors')
    .set({ last_step: step, last_used_at: now })
    .where('id', '=', factorId)
    .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]))
    .executeTakeFirst();
  return count(result) === 1;
}

/** Counts a wrong TOTP code against the user's authenticators (`reset`: a right code or a recovery code clears the count). */
export async function countTotpFailure(tx: WriteTx, userId: string, reset: boolean): Promise<void> {
  await sqlOf(tx)
    .updateTable('user_factors')
    .set((eb) => ({ failures: reset ? 0 : eb('failures', '+', 1) }))
    .where('user_id', '=', userId)
    .where('kind', '=', 'totp')
    .execute();
}

/** Moves a passkey's signature counter on, only from the value it was read with (compare and set). */
export async function usePasskey(tx: WriteTx, factorId: string, from: number, to: number, now: number): Promise<boolean> {
  const result = await sqlOf(tx).updateTable('user_factors').set({ counter: to, last_used_at: now }).where('id', '=', factorId).where('counter', '=', from).executeTakeFirst();
  return count(result) === 1;
}

export async function deleteFactor(tx: WriteTx, userId: string, factorId: string): Promise<boolean> {
  return count(await sqlOf(tx).deleteFrom('user_factors').where('id', '=', factorId).where('user_id', '=', userId).executeTakeFirst()) > 0;
}

/** Replaces a user's recovery codes with these hashes. */
export async function replaceRecoveryCodes(tx: WriteTx, userId: string, hashes: string[], now: number): Promise<void> {
  await sqlOf(tx).deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
  if (hashes.length) await sqlOf(tx).insertInto('recovery_codes').values(hashes.map((hash) => ({ hash, user_id: userId, created_at: now, used_at: null }))).execute();
}

/** Uses a recovery code of this user once: true only for the one request that marks it used. */
export async function useRecoveryCode(tx: WriteTx, userId: string, hash: string, now: number): Promise<boolean> {
  const result = await sqlOf(tx)
    .updateTable('recovery_codes')
    .set({ used_at: now })
    .where('hash', '=', hash)
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return count(result) === 1;
}

export async function countUnusedRecoveryCodes(on: On, userId: string): Promise<number> {
  const row = await sqlOf(on).selectFrom('recovery_codes').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Everything of a user's second factors (the user is removed, or their last factor went). */
export async function deleteFactorsOfUser(tx: WriteTx, userId: string, options: { recoveryCodesOnly?: boolean } = {}): Promise<void> {
  if (!options.recoveryCodesOnly) await sqlOf(tx).deleteFrom('user_factors').where('user_id', '=', userId).execute();
  await sqlOf(tx).deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
}

/** Records a WebAuthn challenge as used (until it expires); false when it was used already (a replay). */
export async function markChallengeUsed(tx: WriteTx, c: { hash: string; purpose: string; userId: string | null; expiresAt: number }): Promise<boolean> {
  const r = await sqlOf(tx)
    .insertInto('webauthn_challenges')
    .values({ hash: c.hash, purpose: c.purpose, user_id: c.userId, expires_at: c.expiresAt })
    .onConflict((oc) => oc.column('hash').doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function purgeChallenges(on: On, before: number): Promise<number> {
  return count(await sqlOf(on).deleteFrom('webauthn_challenges').where('expires_at', '<=', before).executeTakeFirst());
}
