import { randomUUID } from 'node:crypto';
import type { Sealer } from '../crypto/sealed.js';
import { claimDueMails, recordMailAttempt, type ClaimedMail, type MailOutcome } from '../store/mail-outbox.js';
import type { Store } from '../store/store.js';
import { write } from '../store/write-path.js';
import { onMailQueued, type MailBody } from './queue.js';
import { openMailTransport, type MailLog, type MailSettings, type MailTransport } from './transport.js';

// Sends the mail outbox (docs/configuration.md#mail), on every instance that runs the
// authorization server: due mails are leased to one instance for one attempt (two instances never
// send the same attempt; a mail whose instance died is due again when its lease ends), opened,
// sent, and the outcome stored at once, mail by mail. A refusal or an unreachable server is tried
// again after 10 s, 1 min, 5 min, 30 min, 2 h, then every 2 h, until 24 h after the mail was
// queued; then it is `failed`. Woken when this process queues a mail and every TICK_MS (mails
// queued by other instances, retries).

export const MAIL_BACKOFF_MS = [10_000, 60_000, 300_000, 1_800_000, 7_200_000];
const EVERY_TWO_HOURS_MS = 7_200_000;
export const MAIL_GIVE_UP_AFTER_MS = 24 * 3_600_000;
const TICK_MS = 1_000;
// Longer than one attempt can take (nodemailer's connection, greeting and socket timeouts).
const LEASE_MS = 120_000;
// Mails are few; a modest number at once spares the SMTP server's connection limits.
const CONCURRENCY = 4;
const MAX_ERROR_TEXT = 200;

/** When a mail whose `attempt`-th attempt failed is tried again, or null: it has failed for good. */
export function nextMailAttemptAt(attempt: number, createdAt: number, now: number): number | null {
  const at = now + (MAIL_BACKOFF_MS[attempt - 1] ?? EVERY_TWO_HOURS_MS);
  return at > createdAt + MAIL_GIVE_UP_AFTER_MS ? null : at;
}

export interface MailDispatcherOptions {
  store: Store;
  /** `email` of the config and the data dir. */
  settings: MailSettings;
  sealer: Sealer;
  /** Each mail written to a file (no SMTP server). */
  info: MailLog;
  /** A round that failed (the database away): the timer tries again. */
  warn: MailLog;
  /** The clock (tests move it instead of waiting). */
  now?: () => number;
}

export class MailDispatcher {
  private readonly owner = randomUUID();
  private readonly transport: MailTransport;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(private readonly options: MailDispatcherOptions) {
    this.transport = openMailTransport(options.settings, options.info);
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.unsubscribe = onMailQueued(this.options.store, () => this.wake());
    this.timer = setInterval(() => this.wake(), TICK_MS);
    this.timer.unref();
    this.wake();
  }

  /** Stops waking and waits for the round under way (its mails are recorded). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.unsubscribe?.();
    await this.running;
    this.transport.close();
  }

  /** Runs a round now (or right after the one under way). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.round()
      .catch((e: Error) => this.options.warn(`mail delivery: ${oneLine(e.message)}`))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Resolves once no round is under way (tests). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** One round: send what is due, a few at a time, until nothing is. */
  private async round(): Promise<void> {
    while (!this.stopped) {
      const now = this.now();
      const claimed = await claimDueMails(this.options.store, this.owner, now, now + LEASE_MS, CONCURRENCY);
      // Every attempt ends before the round does (stop() waits for them), even if one's record failed.
      const failed = (await Promise.allSettled(claimed.map((mail) => this.attempt(mail)))).find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      if (claimed.length < CONCURRENCY) return;
    }
  }

  private async attempt(mail: ClaimedMail): Promise<void> {
    const outcome = await this.send(mail);
    await write(this.options.store, (tx) => recordMailAttempt(tx, mail.id, this.owner, outcome));
  }

  /** One attempt; never throws: the outcome says what happened. */
  private async send(mail: ClaimedMail): Promise<MailOutcome> {
    let body: MailBody;
    try {
      body = this.open(mail);
    } catch (e) {
      return { status: 'failed', error: short(`the mail cannot be opened: ${(e as Error).message}`) };
    }
    try {
      await this.transport.send({ id: mail.id, kind: mail.kind, to: mail.recipient, subject: mail.subject, ...body });
      return { status: 'sent', at: this.now() };
    } catch (e) {
      const error = short((e as Error).message);
      const nextAt = nextMailAttemptAt(mail.attempts + 1, mail.created_at, this.now());
      return nextAt === null ? { status: 'failed', error } : { status: 'pending', nextAt, error };
    }
  }

  private open(mail: ClaimedMail): MailBody {
    if (mail.body === null) throw new Error('it has no body');
    return JSON.parse(this.options.sealer.open(mail.body, `mail:${mail.id}`)) as MailBody;
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** An error as stored for the admin: one line, short. SMTP errors name the server's answer, not the mail's parts. */
function short(text: string): string {
  const line = oneLine(text);
  return line.length > MAX_ERROR_TEXT ? `${line.slice(0, MAX_ERROR_TEXT - 1)}…` : line;
}
