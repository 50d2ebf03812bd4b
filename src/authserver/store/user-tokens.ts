import { sqlOf, count, type On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';
import type { UserTokensTable } from '../../platform/store/schema.js';

// Owner of `user_tokens`: the single-use secrets of the links gatehouse mails (docs/users.md):
// e-mail verification, password reset, invitation, e-mail change. Only the SHA-256 of the secret
// is stored; the row's id is the link's public selector.

export type UserTokenRow = UserTokensTable;
export type UserTokenPurpose = 'verify' | 'reset' | 'invite' | 'email';

export async function insertUserToken(tx: WriteTx, row: UserTokenRow): Promise<void> {
  await sqlOf(tx).insertInto('user_tokens').values(row).execute();
}

export async function findUserToken(on: On, id: string): Promise<UserTokenRow | null> {
  return (await sqlOf(on).selectFrom('user_tokens').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

/** Marks the token used, once: false when it was used (or removed) already — the one that wins a race is the one that counts. */
export async function useUserToken(tx: WriteTx, id: string, now: number): Promise<boolean> {
  return count(await sqlOf(tx).updateTable('user_tokens').set({ used_at: now }).where('id', '=', id).where('used_at', 'is', null).where('expires_at', '>', now).executeTakeFirst()) === 1;
}

/** Ends the user's unused tokens of `purpose` (a newer link replaces them; a reset ends every reset link). */
export async function endUserTokens(tx: WriteTx, userId: string, purpose: UserTokenPurpose, now: number): Promise<number> {
  return count(await sqlOf(tx).updateTable('user_tokens').set({ used_at: now }).where('user_id', '=', userId).where('purpose', '=', purpose).where('used_at', 'is', null).executeTakeFirst());
}

export async function deleteUserTokensOfUser(tx: WriteTx, userId: string): Promise<number> {
  return count(await sqlOf(tx).deleteFrom('user_tokens').where('user_id', '=', userId).executeTakeFirst());
}

/** Invitations not used and not expired, newest first. */
export async function listOpenInvitations(on: On, now: number): Promise<UserTokenRow[]> {
  return sqlOf(on).selectFrom('user_tokens').selectAll().where('purpose', '=', 'invite').where('used_at', 'is', null).where('expires_at', '>', now).orderBy('created_at', 'desc').execute();
}

/** Removes an invitation (revoked by an operator); false when there is no such open invitation. */
export async function deleteInvitation(tx: WriteTx, id: string): Promise<boolean> {
  return count(await sqlOf(tx).deleteFrom('user_tokens').where('id', '=', id).where('purpose', '=', 'invite').where('used_at', 'is', null).executeTakeFirst()) === 1;
}

/** The sweeper: tokens past their expiry (or used) for more than a day. */
export async function purgeUserTokens(on: On, before: number): Promise<number> {
  return count(await sqlOf(on).deleteFrom('user_tokens').where('expires_at', '<', before).executeTakeFirst());
}

/** The newest live token of `purpose` for the user (the account page shows a pending e-mail change). */
export async function findLiveUserToken(on: On, userId: string, purpose: UserTokenPurpose, now: number): Promise<UserTokenRow | null> {
  return (
    (await sqlOf(on)
      .selectFrom('user_tokens')
      .selectAll()
      .where('user_id', '=', userId)
      .where('purpose', '=', purpose)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst()) ?? null
  );
}
