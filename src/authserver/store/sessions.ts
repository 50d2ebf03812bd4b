import { count, sqlOf, type On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';

// Owner of the sessions table: browser sign-ins, stored by the hash of the cookie value.

/** A live session: whose, since when (the sign-in), and its public id (null for one from before OpenID Connect). */
export interface SessionRow {
  userId: string;
  createdAt: number;
  sid: string | null;
  /** RFC 8176 authentication methods of the sign-in (a session from before they were kept: `pwd`). */
  amr: string[];
}

export async function findSession(on: On, hash: string, now: number): Promise<SessionRow | null> {
  const row = await sqlOf(on).selectFrom('sessions').select(['user_id', 'created_at', 'sid', 'amr']).where('hash', '=', hash).where('expires_at', '>', now).executeTakeFirst();
  return row ? { userId: row.user_id, createdAt: Number(row.created_at), sid: row.sid ?? null, amr: row.amr ? (JSON.parse(row.amr) as string[]) : ['pwd'] } : null;
}

export async function insertSession(tx: WriteTx, session: { hash: string; userId: string; sid: string; amr: readonly string[]; expiresAt: number; createdAt: number }): Promise<void> {
  await sqlOf(tx)
    .insertInto('sessions')
    .values({ hash: session.hash, user_id: session.userId, sid: session.sid, amr: JSON.stringify(session.amr), expires_at: session.expiresAt, created_at: session.createdAt })
    .execute();
}

/** Ends the session with this public id when it is this user's (RP-initiated logout names it by the ID token's `sid`). */
export async function deleteSessionBySid(tx: WriteTx, sid: string, userId: string): Promise<boolean> {
  return count(await sqlOf(tx).deleteFrom('sessions').where('sid', '=', sid).where('user_id', '=', userId).executeTakeFirst()) > 0;
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
