import type { Store } from '../store/store.js';
import { purgeMail } from '../store/mail-outbox.js';
import { MAIL_QUOTA_WINDOW_MS } from './queue.js';

/** How long sent and failed mails stay listed for the operator. */
export const MAIL_KEPT_MS = 30 * 86_400_000;

/** The sweeper's: sent and failed mails after 30 days, quota rows whose hour has passed. */
export function sweepMail(store: Store, now = Date.now()): Promise<number> {
  return purgeMail(store, now - MAIL_KEPT_MS, now - MAIL_QUOTA_WINDOW_MS);
}
