import { sql } from 'kysely';
import { sqlOf } from './sql.js';
import type { On, WriteTx } from './write-path.js';
import type { Store } from './store.js';
import type { MailOutboxTable } from './schema.js';

// Owner of the mail outbox (`mail_outbox`) and the per-address mail quota (`mail_quota`):
// docs/users.md#mail. A mail is inserted in the transaction of the change it tells about, so it
// exists exactly when that change was committed; platform/mail/dispatcher.ts sends it.

export type MailRow = MailOutboxTable;

export async function insertMail(tx: WriteTx, row: MailRow): Promise<void> {
  await sqlOf(tx).insertInto('mail_outbox').values(row).execute();
}

/**
 * Counts one more mail to `recipient` in its hour (the window starts with the first mail and
 * lasts `windowMs`): one atomic upsert, so that two requests racing cannot both take the last
 * place. Returns the count including this mail.
 */
export async function countMailTo(tx: WriteTx, recipient: string, now: number, windowMs: number): Promise<number> {
  const fresh = now - windowMs;
  const row = await sqlOf(tx)
    .insertInto('mail_quota')
    .values({ recipient, window_start: now, count: 1 })
    .onConflict((oc) =>
      oc.column('recipient').doUpdateSet({
        count: sql<number>`case when mail_quota.window_start <= ${fresh} then 1 else mail_quota.count + 1 end`,
        window_start: sql<number>`case when mail_quota.window_start <= ${fresh} then ${now} else mail_quota.window_start end`,
      }),
    )
    .returning('count')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** A mail leased to one instance for one attempt. */
export interface ClaimedMail {
  id: string;
  kind: string;
  recipient: string;
  subject: string;
  body: string | null;
  attempts: number;
  created_at: number;
}

/**
 * Leases up to `limit` due pending mails to `owner` until `leaseUntil`: of two instances asking
 * at once, each mail goes to one (the update re-checks the lease row by row). A mail whose
 * instance died is due again when its lease ends. Not through write(): a lease is not a change
 * of the mail, only who tries it now.
 */
export async function claimDueMails(store: Store, owner: string, now: number, leaseUntil: number, limit: number): Promise<ClaimedMail[]> {
  const db = sqlOf(store);
  const due = await db
    .selectFrom('mail_outbox')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_at', '<=', now)
    .where('lease_until', '<=', now)
    .orderBy('next_at')
    .orderBy('id')
    .limit(limit)
    .execute();
  if (due.length === 0) return [];
  const ids = due.map((d) => d.id);
  await db
    .updateTable('mail_outbox')
    .set({ lease_until: leaseUntil, lease_owner: owner })
    .where('id', 'in', ids)
    .where('status', '=', 'pending')
    .where('lease_until', '<=', now)
    .execute();
  const claimed = await db
    .selectFrom('mail_outbox')
    .select(['id', 'kind', 'recipient', 'subject', 'body', 'attempts', 'created_at'])
    .where('id', 'in', ids)
    .where('lease_owner', '=', owner)
    .where('lease_until', '=', leaseUntil)
    .orderBy('id')
    .execute();
  return claimed.map((r) => ({ ...r, attempts: Number(r.attempts), created_at: Number(r.created_at) }));
}

/** What became of a leased mail after its attempt. */
export type MailOutcome =
  | { status: 'sent'; at: number }
  | { status: 'pending'; nextAt: number; error: string }
  | { status: 'failed'; error: string };

/**
 * Records the attempt of `owner` on mail `id` and ends its lease. A sent or failed mail loses its
 * body: the link's secret is not kept once it can no longer be sent. False when the lease was
 * lost (another instance holds the mail now).
 */
export async function recordMailAttempt(tx: WriteTx, id: string, owner: string, outcome: MailOutcome): Promise<boolean> {
  const done = outcome.status !== 'pending';
  const result = await sqlOf(tx)
    .updateTable('mail_outbox')
    .set((eb) => ({
      status: outcome.status,
      attempts: eb('attempts', '+', 1),
      next_at: outcome.status === 'pending' ? outcome.nextAt : eb.ref('next_at'),
      sent_at: outcome.status === 'sent' ? outcome.at : null,
      last_error: outcome.status === 'sent' ? eb.ref('last_error') : outcome.error,
      body: done ? null : eb.ref('body'),
      lease_until: 0,
      lease_owner: null,
    }))
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** A mail as the admin sees it: never its body. */
export type MailListRow = Omit<MailOutboxTable, 'body' | 'lease_until' | 'lease_owner'>;

/** Mails newest first (by id, which is time-ordered); `before`: an id, for the next page. */
export async function listMailRows(on: On, options: { status?: string; limit: number; before?: string }): Promise<MailListRow[]> {
  let q = sqlOf(on).selectFrom('mail_outbox').select(['id', 'kind', 'recipient', 'subject', 'status', 'attempts', 'created_at', 'next_at', 'sent_at', 'last_error']);
  if (options.status !== undefined) q = q.where('status', '=', options.status);
  if (options.before !== undefined) q = q.where('id', '<', options.before);
  const rows = await q.orderBy('id', 'desc').limit(options.limit).execute();
  return rows.map((r) => ({
    ...r,
    attempts: Number(r.attempts),
    created_at: Number(r.created_at),
    next_at: Number(r.next_at),
    sent_at: r.sent_at === null ? null : Number(r.sent_at),
  }));
}

/** How many mails are in each status. */
export async function countMailsByStatus(on: On): Promise<Record<string, number>> {
  const rows = await sqlOf(on).selectFrom('mail_outbox').select(['status', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('status').execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

/**
 * The sweeper's: sent and failed mails created before `before` (they have no body left), and the
 * quota rows whose window started before `windowStartedBefore`. Returns the rows removed.
 */
export async function purgeMail(store: Store, before: number, windowStartedBefore: number): Promise<number> {
  const db = sqlOf(store);
  const mails = await db.deleteFrom('mail_outbox').where('status', '!=', 'pending').where('created_at', '<', before).executeTakeFirst();
  const quota = await db.deleteFrom('mail_quota').where('window_start', '<=', windowStartedBefore).executeTakeFirst();
  return Number(mails.numDeletedRows) + Number(quota.numDeletedRows);
}
