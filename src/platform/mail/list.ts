import { countMailsByStatus, listMailRows, type MailListRow } from '../store/mail-outbox.js';
import type { Store } from '../store/store.js';

// What an operator sees of the mail outbox (the admin API and console build on these): every
// mail but its body, which holds a link's secret until sent and is gone afterwards.

export type MailStatus = 'pending' | 'sent' | 'failed';
export const MAIL_STATUSES: readonly MailStatus[] = ['pending', 'sent', 'failed'];

/** A mail as listed: id, kind, recipient, subject, status, attempts, created_at, next_at, sent_at, last_error (times in ms). */
export type ListedMail = MailListRow;

/** Mails newest first; `before` is the id of the last mail of the previous page. */
export function listMails(store: Store, options: { status?: MailStatus; limit: number; before?: string }): Promise<ListedMail[]> {
  return listMailRows(store, options);
}

/** How many mails wait to be sent (retries included). */
export async function pendingMailCount(store: Store): Promise<number> {
  return (await mailCounts(store)).pending;
}

/** How many mails are in each status. */
export async function mailCounts(store: Store): Promise<Record<MailStatus, number>> {
  const counts = await countMailsByStatus(store);
  return { pending: counts.pending ?? 0, sent: counts.sent ?? 0, failed: counts.failed ?? 0 };
}
