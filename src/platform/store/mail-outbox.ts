import { sql } from 'kysely';
import { sqlOf } from './sql.js';
import type { WriteTx } from './write-path.js';
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
