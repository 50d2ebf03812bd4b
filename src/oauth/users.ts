import { v7 as uuidv7 } from 'uuid';
import type { AppContext } from '../context.js';
import { decoyPasswordHash, hashPassword, verifyPassword } from '../security/secrets.js';
import { revokeAllOf, type Revoked } from './tokens.js';
import { announceRevocation } from '../access/revocation-notices.js';

// Resource owners. A user's subject (the owner of what their tokens create) is `user:<id>`.

export interface User {
  id: string;
  username: string;
  createdAt: number;
}

export const userSubject = (userId: string) => `user:${userId}`;
export const clientSubject = (clientId: string) => `client:${clientId}`;

export async function createUser(ctx: AppContext, username: string, password: string): Promise<User> {
  const user = { id: uuidv7(), username, password_hash: await hashPassword(password), created_at: Date.now() };
  await ctx.store.db.insertInto('users').values(user).execute();
  return { id: user.id, username, createdAt: user.created_at };
}

export async function findUserById(ctx: AppContext, id: string): Promise<User | null> {
  const row = await ctx.store.db.selectFrom('users').select(['id', 'username', 'created_at']).where('id', '=', id).executeTakeFirst();
  return row ? { id: row.id, username: row.username, createdAt: Number(row.created_at) } : null;
}

export async function findUserByUsername(ctx: AppContext, username: string): Promise<User | null> {
  const row = await ctx.store.db.selectFrom('users').select(['id', 'username', 'created_at']).where('username', '=', username).executeTakeFirst();
  return row ? { id: row.id, username: row.username, createdAt: Number(row.created_at) } : null;
}

export async function listUsers(ctx: AppContext): Promise<User[]> {
  const rows = await ctx.store.db.selectFrom('users').select(['id', 'username', 'created_at']).orderBy('created_at').execute();
  return rows.map((r) => ({ id: r.id, username: r.username, createdAt: Number(r.created_at) }));
}

/**
 * Removes a user: the grants they gave and their tokens end, their sign-in sessions close. The
 * records they own stay (owned by their subject, which no new user can take: ids are never reused).
 */
export async function removeUser(ctx: AppContext, username: string): Promise<(Revoked & { user: User; sessions: number }) | null> {
  const removed = await ctx.store.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('users').select(['id', 'username', 'created_at']).where('username', '=', username).executeTakeFirst();
    if (!row) return null;
    await trx.deleteFrom('users').where('id', '=', row.id).execute();
    const sessions = await trx.deleteFrom('sessions').where('user_id', '=', row.id).executeTakeFirst();
    const revoked = await revokeAllOf(trx, { subject: userSubject(row.id) }, 'user removed');
    return { ...revoked, sessions: Number(sessions.numDeletedRows), user: { id: row.id, username: row.username, createdAt: Number(row.created_at) } };
  });
  if (removed) await announceRevocation(ctx);
  return removed;
}

/** The user whose password this is, or null; an unknown user costs the same argon2 work. */
export async function verifyUserCredentials(ctx: AppContext, username: string, password: string): Promise<User | null> {
  const row = await ctx.store.db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
  const ok = await verifyPassword(row?.password_hash ?? (await decoyPasswordHash()), password);
  return row && ok ? { id: row.id, username: row.username, createdAt: Number(row.created_at) } : null;
}
