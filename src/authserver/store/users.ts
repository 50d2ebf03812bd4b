import { count, sqlOf, type On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';

// Owner of the users table.

export interface UserRecord {
  id: string;
  username: string;
  admin: boolean;
  createdAt: number;
}

const PUBLIC_COLUMNS = ['id', 'username', 'admin', 'created_at'] as const;
const fromRow = (r: { id: string; username: string; admin: number; created_at: number }): UserRecord => ({
  id: r.id,
  username: r.username,
  admin: Number(r.admin) === 1,
  createdAt: Number(r.created_at),
});

export async function insertUser(tx: WriteTx, user: UserRecord & { passwordHash: string }): Promise<void> {
  await sqlOf(tx)
    .insertInto('users')
    .values({ id: user.id, username: user.username, password_hash: user.passwordHash, admin: user.admin ? 1 : 0, created_at: user.createdAt })
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
