import https from 'node:https';
import { randomUUID } from 'node:crypto';
import { Webhook as Signer } from 'standardwebhooks';
import type { AppContext } from '../contract/context.js';
import { eventBus, eventJson, type StoredEvent } from '../contract/event-bus.js';
import { eventsByIds, latestEventId, readEvents } from '../platform/store/outbox.js';
import { write } from '../platform/store/write-path.js';
import { guardedLookup, literalAddressProblem } from '../platform/http/outbound.js';
import { claimDueDeliveries, listWebhookRows, queueDeliveries, recordAttempts, type AttemptRow, type DeliveryOutcome, type DeliveryRow, type WebhookRow } from './store/webhooks.js';

// Delivers the outbox to webhooks (docs/events.md#webhooks), on every instance:
// 1. queue: each webhook's cursor moves over the new events, and a delivery row is written for
//    each one it subscribes to (an instance that moved the cursor first wins; the others skip);
// 2. deliver: due deliveries are leased to this instance (one instance per attempt), POSTed signed
//    per Standard Webhooks (the `standardwebhooks` package), and their attempts stored; a failure
//    is retried after 5 s, 30 s, 2 min, 10 min, 1 h, then hourly, until 24 h after the first
//    attempt, then it is `failed`. At least once: a delivery whose instance died is leased again
//    when its lease ends.
// Woken by the event bus's signal as soon as an event is committed here or announced by another
// instance (Redis), and every TICK_MS for retries and for instances without Redis.

export const BACKOFF_MS = [5_000, 30_000, 120_000, 600_000, 3_600_000];
const HOURLY_MS = 3_600_000;
const GIVE_UP_AFTER_MS = 24 * 3_600_000;
const TIMEOUT_MS = 10_000;
const LEASE_MS = 30_000;
const TICK_MS = 500;
const BATCH = 200;
const CONCURRENCY = 64;
const MAX_ERROR_TEXT = 300;

/** When a delivery that failed its `attempt`-th attempt is tried again, or null: it has failed for good. */
export function nextAttemptAt(attempt: number, firstAt: number, now: number): number | null {
  const at = now + (BACKOFF_MS[attempt - 1] ?? HOURLY_MS);
  return at > firstAt + GIVE_UP_AFTER_MS ? null : at;
}

interface Result {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export class WebhookDispatcher {
  private readonly owner = randomUUID();
  private readonly agent: https.Agent;
  private readonly lookup: ReturnType<typeof guardedLookup>;
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  /** When the last round found no webhook (0: it found some). */
  private noneSince = 0;

  constructor(
    private readonly ctx: AppContext,
    private readonly onProblem: (message: string) => void,
  ) {
    const allow = ctx.config.events.webhooks.allowPrivateNetworks;
    this.lookup = guardedLookup(allow);
    this.agent = new https.Agent({ keepAlive: true, maxSockets: CONCURRENCY, timeout: TIMEOUT_MS });
  }

  async start(): Promise<void> {
    // New events wake a round at once — unless there was no webhook a moment ago: the tick finds
    // one added since (within a second), and writes cost no webhook query when there is none.
    this.unsubscribe = eventBus(this.ctx).onSignal(() => {
      if (Date.now() - this.noneSince >= TICK_MS) this.wake();
    });
    this.timer = setInterval(() => this.wake(), TICK_MS);
    this.timer.unref();
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.unsubscribe?.();
    await this.running;
    this.agent.destroy();
  }

  /** Runs a round now (or right after the one under way). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.round()
      .catch((e: Error) => this.onProblem(`webhook delivery: ${e.message}`))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** One round: queue what is new, then deliver what is due until nothing is. */
  async round(): Promise<void> {
    const webhooks = await listWebhookRows(this.ctx.store);
    if (webhooks.length === 0) {
      this.noneSince = Date.now();
      return;
    }
    this.noneSince = 0;
    await this.queue(webhooks);
    const byId = new Map(webhooks.map((w) => [w.id, w]));
    while (!this.stopped) {
      const now = Date.now();
      const claimed = await claimDueDeliveries(this.ctx.store, this.owner, now, now + LEASE_MS, BATCH);
      if (claimed.length === 0) return;
      await this.deliver(claimed, byId);
      if (claimed.length < BATCH) return;
    }
  }

  private async queue(webhooks: WebhookRow[]): Promise<void> {
    const latest = await latestEventId(this.ctx.store);
    for (const w of webhooks) {
      let cursor = Number(w.cursor);
      while (cursor < latest && !this.stopped) {
        const types = JSON.parse(w.events) as string[];
        const collections = JSON.parse(w.collections) as string[];
        const events = await readEvents(this.ctx.store, {
          after: cursor,
          through: latest,
          limit: 1000,
          types: types.length ? types : null,
          collections: collections.length ? collections : null,
        });
        const through = events.length === 1000 ? events[events.length - 1].id : latest;
        const from = cursor;
        const moved = await write(this.ctx.store, (tx) => queueDeliveries(tx, w.id, from, through, events.map((e) => e.id), Date.now()));
        if (!moved) break; // another instance queued them
        cursor = through;
      }
    }
  }

  private async deliver(claimed: DeliveryRow[], webhooks: Map<string, WebhookRow>): Promise<void> {
    const events = new Map((await eventsByIds(this.ctx.store, [...new Set(claimed.map((d) => d.event_id))])).map((e) => [e.id, e]));
    const attempts: AttemptRow[] = [];
    const outcomes: DeliveryOutcome[] = [];
    let next = 0;
    const worker = async () => {
      while (next < claimed.length) {
        const d = claimed[next++];
        const hook = webhooks.get(d.webhook_id);
        const event = events.get(d.event_id);
        const attempt = d.attempts + 1;
        const result: Result =
          !hook || !event
            ? { statusCode: null, error: !hook ? 'the webhook was removed' : 'the event is no longer kept', durationMs: 0 }
            : await this.post(hook, event);
        const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
        const now = Date.now();
        const retryAt = ok || !hook || !event ? null : nextAttemptAt(attempt, d.first_at, now);
        attempts.push({
          webhook_id: d.webhook_id,
          event_id: d.event_id,
          attempt,
          time: now,
          status_code: result.statusCode,
          duration_ms: result.durationMs,
          error: result.error,
          outcome: ok ? 'succeeded' : 'failed',
        });
        outcomes.push({ id: d.id, status: ok ? 'succeeded' : retryAt === null ? 'failed' : 'pending', attempts: attempt, nextAt: retryAt ?? now });
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, claimed.length) }, worker));
    await write(this.ctx.store, (tx) => recordAttempts(tx, attempts, outcomes, this.owner));
  }

  /** One signed POST; never throws: the outcome is in the result. */
  private post(hook: WebhookRow, event: StoredEvent): Promise<Result> {
    const started = Date.now();
    const done = (statusCode: number | null, error: string | null): Result => ({ statusCode, error: error && error.slice(0, MAX_ERROR_TEXT), durationMs: Date.now() - started });
    let url: URL;
    try {
      url = new URL(hook.url);
    } catch {
      return Promise.resolve(done(null, 'the URL is not valid'));
    }
    const literal = url.protocol !== 'https:' ? 'the URL is not https' : literalAddressProblem(url, this.ctx.config.events.webhooks.allowPrivateNetworks);
    if (literal) return Promise.resolve(done(null, literal));
    const body = eventJson(event);
    const id = `evt_${event.id}`;
    const at = new Date();
    const signature = new Signer(hook.secret).sign(id, at, body);
    return new Promise((resolve) => {
      const req = https.request(
        url,
        {
          method: 'POST',
          agent: this.agent,
          lookup: this.lookup as never,
          timeout: TIMEOUT_MS,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'user-agent': 'gatehouse-webhooks',
            'webhook-id': id,
            'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
            'webhook-signature': signature,
          },
        },
        (res) => {
          // The body is not needed (a redirect is not followed: a 3xx is a failed attempt).
          res.resume();
          res.on('end', () => {
            const code = res.statusCode ?? null;
            const redirect = code !== null && code >= 300 && code < 400 ? `redirect to ${String(res.headers.location ?? '?').slice(0, 200)} not followed` : null;
            resolve(done(code, redirect ?? (code !== null && (code < 200 || code >= 300) ? `HTTP ${code}` : null)));
          });
          res.on('error', (e) => resolve(done(res.statusCode ?? null, e.message)));
        },
      );
      const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS);
      req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
      req.on('error', (e) => resolve(done(null, e.message)));
      req.on('close', () => clearTimeout(deadline));
      req.end(body);
    });
  }
}
