import { count, sqlOf, type On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';

// Owner of the sessions table: browser sign-ins, stored by the hash of the cookie value.

export async function findSessionUserId(on: On, hash: string, now: number): Promise<string | null> {
  const row = await sqlOf(on).selectFrom('sessions').select('user_id').where('hash', '=', hash).where('expires_at', '>', now).executeTakeFirst();
  return row?.user_id ?? null;
}

export async function insertSession(tx: WriteTx, session: { hash: string; userId: string; expiresAt: number; createdAt: number }): Promise<void> {
  await sqlOf(tx)
    .insertInto('sessions')
    .values({ hash: session.hash, user_id: session.userId, expires_at: session.expiresAt, created_at: session.createdAt })
    .execute();
}

export async function deleteSession(tx: WriteTx, hash: string): Promise<void> {
  await sqlOf(tx).deleteFrom('sessions').where('hash', '=', hash).execute();
}

/** Ends every session of a user (removal); returns how many there were. */
export async function deleteSessionsOfUser(tx: WriteTx, userId: string): Promise<number> {
  return count(await sqlOf(tx).deleteFrom('sessions').where('user_id', '=', userId).executeTakeFirst());
}

/** Deletes sessions that ended before `before`; returns how many. */
export async function purgeSessions(on: On, before: number): Promise<number> {
  return count(await sqlOf(on).deleteFrom('sessions').where('expires_at', '<=', before).executeTakeFirst());
}
