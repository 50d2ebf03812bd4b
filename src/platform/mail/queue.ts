import type { Sealer } from '../crypto/sealed.js';
import { newTimeOrderedId } from '../crypto/secrets.js';
import { countMailTo, insertMail } from '../store/mail-outbox.js';
import type { Store } from '../store/store.js';
import type { WriteTx } from '../store/write-path.js';

// Queuing a mail (docs/users.md#mail): in the transaction of the change it tells about (the
// outbox), at most MAIL_QUOTA per address per hour, its parts sealed (a link's secret is never
// stored in the clear). The dispatcher (dispatcher.ts) is woken once the transaction commits.

/** A mail to send: a text and an HTML part, the link (if any) on a line of its own in both. */
export interface Mail {
  /** What it is (`verify`, `reset`, `invite`, `email-change`, `email-changed`, `password-reset`, `signup-taken`…): the admin's list shows it. */
  kind: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The link the mail carries: logged, its secret cut short, when mail goes to files. */
  link?: string;
}

/** Mails per address per hour. */
export const MAIL_QUOTA = 5;
export const MAIL_QUOTA_WINDOW_MS = 3_600_000;

/** What is sealed in `mail_outbox.body`. */
export interface MailBody {
  text: string;
  html: string;
  link: string | null;
}

const listeners = new WeakMap<Store, Set<() => void>>();

/** Calls `listener` whenever a write of this process that queued a mail has committed (the dispatcher). */
export function onMailQueued(store: Store, listener: () => void): () => void {
  let set = listeners.get(store);
  if (!set) listeners.set(store, (set = new Set()));
  set.add(listener);
  return () => set.delete(listener);
}

/** The address as counted by the quota: one mailbox however it is capitalised. */
export const quotaKey = (address: string) => address.trim().toLowerCase();

/**
 * Queues `mail` in `tx`: it is sent once `tx` commits. False when the address has had its
 * MAIL_QUOTA mails this hour: nothing is queued (the caller's change still stands).
 */
export async function queueMail(tx: WriteTx, store: Store, sealer: Sealer, mail: Mail, now = Date.now()): Promise<boolean> {
  if ((await countMailTo(tx, quotaKey(mail.to), now, MAIL_QUOTA_WINDOW_MS)) > MAIL_QUOTA) return false;
  const id = newTimeOrderedId();
  const body: MailBody = { text: mail.text, html: mail.html, link: mail.link ?? null };
  await insertMail(tx, {
    id,
    kind: mail.kind,
    recipient: mail.to,
    subject: mail.subject,
    body: await sealer.sealForStorageIn(tx, JSON.stringify(body), `mail:${id}`),
    status: 'pending',
    attempts: 0,
    created_at: now,
    next_at: now,
    lease_until: 0,
    lease_owner: null,
    sent_at: null,
    last_error: null,
  });
  tx.afterCommit(() => {
    for (const listener of listeners.get(store) ?? []) listener();
  });
  return true;
}
