import { sqlOf, count, type On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';
import type { PushedRequestsTable } from '../../platform/store/schema.js';

// Owner of `pushed_requests` (RFC 9126, docs/oauth.md#pushed-authorization-requests): the
// parameters a client pushed to {auth_url}/par, under the SHA-256 of its request_uri's random part.
// Every change is conditional (opened once, used once, never past its expiry): of two browsers
// racing one request_uri, the one whose UPDATE counts is the one that wins.

export type PushedRequestRow = PushedRequestsTable;

export async function insertPushedRequest(tx: WriteTx, row: PushedRequestRow): Promise<void> {
  await sqlOf(tx).insertInto('pushed_requests').values(row).execute();
}

export async function findPushedRequest(on: On, id: string): Promise<PushedRequestRow | null> {
  return (await sqlOf(on).selectFrom('pushed_requests').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

/** The first time /authorize shows it: from then on it lasts until `until`. False when it was opened, used or expired already. */
export async function openPushedRequest(tx: WriteTx, id: string, now: number, until: number): Promise<boolean> {
  return (
    count(
      await sqlOf(tx)
        .updateTable('pushed_requests')
        .set({ opened_at: now, expires_at: until })
        .where('id', '=', id)
        .where('opened_at', 'is', null)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst(),
    ) === 1
  );
}

/** Replaces the parameters of a live, unused request (what a sign-in has met is taken out). */
export async function rewritePushedParams(tx: WriteTx, id: string, params: string, now: number): Promise<boolean> {
  return count(await sqlOf(tx).updateTable('pushed_requests').set({ params }).where('id', '=', id).where('used_at', 'is', null).where('expires_at', '>', now).executeTakeFirst()) === 1;
}

/** Marks it used, once: false when it was used already or has expired. */
export async function usePushedRequest(tx: WriteTx, id: string, now: number): Promise<boolean> {
  return count(await sqlOf(tx).updateTable('pushed_requests').set({ used_at: now }).where('id', '=', id).where('used_at', 'is', null).where('expires_at', '>', now).executeTakeFirst()) === 1;
}

/** The sweeper: requests past their expiry (used ones included) since before `before`. */
export async function purgePushedRequests(on: On, before: number): Promise<number> {
  return count(await sqlOf(on).deleteFrom('pushed_requests').where('expires_at', '<', before).executeTakeFirst());
}
