import { sql } from 'kysely';
import { count, sqlOf, type On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';

// Owner of the users table.

export interface UserRecord {
  id: string;
  username: string;
  admin: boolean;
  createdAt: number;
  /** OpenID Connect's `email`, `email_verified` and `name` claims. */
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  /** When the profile (username, e-mail, name) last changed; null: never since creation. */
  updatedAt: number | null;
}

/** The profile fields a user or an operator may change. */
export type UserProfile = Pick<UserRecord, 'email' | 'emailVerified' | 'name'>;

const PUBLIC_COLUMNS = ['id', 'username', 'admin', 'created_at', 'email', 'email_verified', 'name', 'updated_at'] as const;
type PublicRow = { id: string; username: string; admin: number; created_at: number; email: string | null; email_verified: number; name: string | null; updated_at: number | null };
const fromRow = (r: PublicRow): UserRecord => ({
  id: r.id,
  username: r.username,
  admin: Number(r.admin) === 1,
  createdAt: Number(r.created_at),
  email: r.email ?? null,
  emailVerified: Number(r.email_verified ?? 0) === 1,
  name: r.name ?? null,
  updatedAt: r.updated_at === null || r.updated_at === undefined ? null : Number(r.updated_at),
});

export async function insertUser(tx: WriteTx, user: UserRecord & { passwordHash: string; verificationPending?: boolean }): Promise<void> {
  await sqlOf(tx)
    .insertInto('users')
    .values({
      id: user.id,
      username: user.username,
      password_hash: user.passwordHash,
      admin: user.admin ? 1 : 0,
      created_at: user.createdAt,
      email: user.email,
      email_verified: user.emailVerified ? 1 : 0,
      name: user.name,
      updated_at: user.updatedAt,
      verification_pending: user.verificationPending ? 1 : 0,
    })
    .execute();
}

export async function updateUserProfile(tx: WriteTx, id: string, profile: UserProfile, now: number): Promise<void> {
  await sqlOf(tx)
    .updateTable('users')
    .set({ email: profile.email, email_verified: profile.emailVerified ? 1 : 0, name: profile.name, updated_at: now })
    .where('id', '=', id)
    .execute();
}

export async function findUserRecordById(on: On, id: string): Promise<UserRecord | null> {
  const row = await sqlOf(on).selectFrom('users').select(PUBLIC_COLUMNS).where('id', '=', id).executeTakeFirst();
  return row ? fromRow(row) : null;
}

export async function findUserRecordByUsername(on: On, username: string): Promise<UserRecord | null> {
  const row = await sqlOf(on).selectFrom('users').select(PUBLIC_COLUMNS).where('username', '=', username).executeTakeFirst();
  return row ? fromRow(row) : null;
}

/** The user with their password hash, for verifying a sign-in. */
export async function findUserCredentials(on: On, username: string): Promise<(UserRecord & { passwordHash: string }) | null> {
  const row = await sqlOf(on).selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
  return row ? { ...fromRow(row), passwordHash: row.password_hash } : null;
}

export async function listUserRecords(on: On): Promise<UserRecord[]> {
  return (await sqlOf(on).selectFrom('users').select(PUBLIC_COLUMNS).orderBy('created_at').execute()).map(fromRow);
}

export async function anyUser(on: On): Promise<boolean> {
  return (await sqlOf(on).selectFrom('users').select('id').limit(1).execute()).length > 0;
}

export async function deleteUser(tx: WriteTx, id: string): Promise<boolean> {
  return count(await sqlOf(tx).deleteFrom('users').where('id', '=', id).executeTakeFirst()) > 0;
}

export async function updateUserAdmin(tx: WriteTx, id: string, admin: boolean): Promise<void> {
  await sqlOf(tx).updateTable('users').set({ admin: admin ? 1 : 0 }).where('id', '=', id).execute();
}

export async function updateUserPassword(tx: WriteTx, id: string, passwordHash: string): Promise<void> {
  await sqlOf(tx).updateTable('users').set({ password_hash: passwordHash }).where('id', '=', id).execute();
}

/** The users with this e-mail address, in any case (addresses are not unique between users an operator made). */
export async function findUserRecordsByEmail(on: On, email: string, limit = 10): Promise<UserRecord[]> {
  return (
    await sqlOf(on)
      .selectFrom('users')
      .select(PUBLIC_COLUMNS)
      .where(sql`lower(email)`, '=', email.trim().toLowerCase())
      .orderBy('created_at')
      .limit(limit)
      .execute()
  ).map(fromRow);
}

/** Whether the user made by sign-up still waits for their address to be verified. */
export async function isVerificationPending(on: On, id: string): Promise<boolean> {
  const row = await sqlOf(on).selectFrom('users').select('verification_pending').where('id', '=', id).executeTakeFirst();
  return Number(row?.verification_pending ?? 0) === 1;
}

/** The address is verified (a link opened): the user may sign in. */
export async function markEmailVerified(tx: WriteTx, id: string, email: string, now: number): Promise<void> {
  await sqlOf(tx).updateTable('users').set({ email, email_verified: 1, verification_pending: 0, updated_at: now }).where('id', '=', id).execute();
}

/** Users made by sign-up who never verified their address, made before `before` (the sweeper removes them). */
export async function listStaleUnverifiedUsers(on: On, before: number, limit: number): Promise<UserRecord[]> {
  return (await sqlOf(on).selectFrom('users').select(PUBLIC_COLUMNS).where('verification_pending', '=', 1).where('created_at', '<', before).orderBy('created_at').limit(limit).execute()).map(fromRow);
}
