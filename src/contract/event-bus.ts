import type { AppContext } from './context.js';
import { contextCache } from './context-cache.js';
import { redisNow } from './redis-state.js';
import { latestEventId, purgeEvents, readEvents, type EventFilter, type StoredEvent } from '../platform/store/outbox.js';
import { onEventsCommitted } from '../platform/store/write-path.js';
import { readSetting, writeSetting } from '../platform/store/settings.js';

export type { StoredEvent } from '../platform/store/outbox.js';

// The events of the outbox (docs/events.md) as the running servers see them: what they look
// like on the wire, who may see which, and the bus that tells this process's streams, long polls
// and webhook dispatcher that new events were committed — by this process (at once), by another
// instance (Redis pub/sub when configured, at once) or by anyone (the bus polls the outbox every
// POLL_MS while someone listens: one indexed read for all listeners, never one per listener).

export const RESOURCE_EVENT_TYPES = ['record.created', 'record.updated', 'record.deleted', 'attachment.created', 'attachment.deleted', 'collection.migrated'] as const;
export const ADMIN_EVENT_TYPES = [
  'grant.created',
  'grant.revoked',
  'token.revoked',
  'client.created',
  'client.updated',
  'client.removed',
  'user.created',
  'user.updated',
  'user.removed',
  'webhook.created',
  'webhook.updated',
  'webhook.removed',
  'login.failed',
] as const;
export const EVENT_TYPES: readonly string[] = [...RESOURCE_EVENT_TYPES, ...ADMIN_EVENT_TYPES];

const CHANNEL = 'gatehouse:events';
export const POLL_MS = 500;
/** The shortest time between two reads of new events: commits closer than this are read together. */
const COALESCE_MS = 20;
const BATCH = 1000;
const PURGED_SETTING = 'events.purged_through';

const jsonOf = new WeakMap<StoredEvent, string>();

/** An event as JSON text: `data` is stored as JSON text and goes in as it is. Made once per event object (a bus batch is shared by every stream). */
export function eventJson(e: StoredEvent): string {
  let text = jsonOf.get(e);
  if (text === undefined) jsonOf.set(e, (text = buildEventJson(e)));
  return text;
}

function buildEventJson(e: StoredEvent): string {
  return (
    `{"id":"${e.id}","type":${JSON.stringify(e.type)},"time":"${new Date(e.time).toISOString()}",` +
    `"collection":${JSON.stringify(e.collection)},"record_id":${JSON.stringify(e.record_id)},"owner":${JSON.stringify(e.owner)},` +
    `"actor":${JSON.stringify(e.actor)},"data":${e.data ?? 'null'}}`
  );
}

/**
 * Which events a reader sees: the same rule in memory (live events) and in the database (catch-up).
 * `owned` lists the collections where only the subject's own records' events are seen.
 */
export class EventSelection {
  private readonly typeSet: ReadonlySet<string> | null;
  private readonly collectionSet: ReadonlySet<string> | null;
  private readonly ownedSet: ReadonlySet<string>;

  constructor(
    readonly types: readonly string[] | null,
    readonly collections: readonly string[] | null,
    readonly owned: { subject: string; collections: readonly string[] } | null = null,
  ) {
    this.typeSet = types && new Set(types);
    this.collectionSet = collections && new Set(collections);
    this.ownedSet = new Set(owned?.collections ?? []);
  }

  matches(e: StoredEvent): boolean {
    if (this.typeSet && !this.typeSet.has(e.type)) return false;
    if (this.collectionSet && (e.collection === null || !this.collectionSet.has(e.collection))) return false;
    // An event of the whole collection (owner null: collection.migrated) is every reader's.
    if (e.collection !== null && e.owner !== null && this.ownedSet.has(e.collection) && e.owner !== this.owned!.subject) return false;
    return true;
  }

  filter(after: number, limit: number): EventFilter {
    return { after, limit, types: this.types, collections: this.collections, ownedIn: this.owned };
  }
}

/** 410 material: the highest id the retention sweep removed (a resume point below it has lost events). */
export async function purgedThrough(ctx: AppContext): Promise<number> {
  return Number((await readSetting(ctx.store, PURGED_SETTING)) ?? 0);
}

/** Removes events older than `events.retention` (the sweeper, every instance, every minute). */
export async function sweepEvents(ctx: AppContext, now = Date.now()): Promise<number> {
  const { removed, through } = await purgeEvents(ctx.store, now - ctx.config.events.retention * 1000);
  if (through > (await purgedThrough(ctx))) await writeSetting(ctx.store, PURGED_SETTING, String(through));
  return removed;
}

export function readSelected(ctx: AppContext, selection: EventSelection, after: number, limit: number): Promise<StoredEvent[]> {
  return readEvents(ctx.store, selection.filter(after, limit));
}

type Subscriber = (events: readonly StoredEvent[]) => void;

/** New events as they are committed, for this process's listeners. One per context: eventBus(ctx). */
export class EventBus {
  private last: number | null = null;
  private starting: Promise<void> | null = null;
  private readonly subscribers = new Set<Subscriber>();
  private readonly stoppers = new Map<Subscriber, () => void>();
  private readonly signalled = new Set<() => void>();
  private timer: NodeJS.Timeout | null = null;
  private reading = false;
  private again = false;
  private scheduled: NodeJS.Timeout | null = null;
  private lastRead = 0;
  private stopLocal: (() => void) | null = null;
  private stopRedis: (() => Promise<void>) | null = null;

  private onProblem: (message: string) => void = () => undefined;

  constructor(private readonly ctx: AppContext) {}

  /** Listens for this process's commits and other instances' notices (the server, at start). */
  start(onProblem: (message: string) => void): void {
    if (this.stopLocal) return;
    this.onProblem = onProblem;
    this.stopLocal = onEventsCommitted(this.ctx.store, () => {
      this.signal();
      void redisNow(this.ctx)?.publish(CHANNEL, '1').catch(() => undefined);
    });
    const redis = this.ctx.redis;
    if (redis) {
      const subscriber = redis.duplicate();
      subscriber.on('error', () => undefined); // reconnects by itself; the poll covers the gap
      subscriber.on('message', () => this.signal());
      subscriber.subscribe(CHANNEL).catch((e: Error) => this.onProblem(`cannot subscribe to event notices: ${e.message}`));
      this.stopRedis = async () => void (await subscriber.quit().catch(() => subscriber.disconnect()));
    }
  }

  async stop(): Promise<void> {
    this.stopLocal?.();
    this.stopLocal = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.scheduled) clearTimeout(this.scheduled);
    this.scheduled = null;
    // Streams and long polls end (the server is closing): they would hold its connections open.
    for (const stop of [...this.stoppers.values()]) stop();
    this.stoppers.clear();
    this.subscribers.clear();
    this.signalled.clear();
    await this.stopRedis?.();
    this.stopRedis = null;
  }

  /**
   * Calls fn with every batch of events committed from now on, in id order, until the returned
   * function is called. Resolves once the starting point is fixed: an event committed after that
   * reaches fn (a reader catching up from the database may see it twice: skip ids already sent).
   */
  async subscribe(fn: Subscriber, onStop?: () => void): Promise<() => void> {
    this.subscribers.add(fn);
    if (onStop) this.stoppers.set(fn, onStop);
    if (this.last === null) {
      this.starting ??= latestEventId(this.ctx.store).then((id) => {
        this.last ??= id;
      });
      try {
        await this.starting;
      } catch (e) {
        this.subscribers.delete(fn);
        this.stoppers.delete(fn);
        this.starting = null;
        throw e;
      }
    }
    if (!this.timer) {
      this.timer = setInterval(() => this.wake(), POLL_MS);
      this.timer.unref();
    }
    return () => {
      this.subscribers.delete(fn);
      this.stoppers.delete(fn);
      if (this.subscribers.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = null;
      }
    };
  }

  /**
   * Calls fn whenever events were committed here or announced by another instance, without
   * reading them (the webhook dispatcher reads what it needs itself). Returns how to stop.
   */
  onSignal(fn: () => void): () => void {
    this.signalled.add(fn);
    return () => void this.signalled.delete(fn);
  }

  private signal(): void {
    for (const fn of this.signalled) fn();
    this.wake();
  }

  /** The last event id handed to subscribers (0 before the bus has started). */
  get position(): number {
    return this.last ?? 0;
  }

  get listeners(): number {
    return this.subscribers.size;
  }

  /**
   * Reads what is new once (however many asked) and hands it to every subscriber: at most one
   * read per COALESCE_MS, so that a burst of commits reaches each stream as one write.
   */
  wake(): void {
    if (this.last === null || this.subscribers.size === 0) return;
    if (this.reading || this.scheduled) {
      this.again = true;
      return;
    }
    const wait = this.lastRead + COALESCE_MS - Date.now();
    if (wait > 0) {
      this.scheduled = setTimeout(() => {
        this.scheduled = null;
        this.wake();
      }, wait);
      return;
    }
    this.lastRead = Date.now();
    this.reading = true;
    void this.pump().finally(() => {
      this.reading = false;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  private async pump(): Promise<void> {
    try {
      for (;;) {
        const events = await readEvents(this.ctx.store, { after: this.last!, limit: BATCH, types: null, collections: null });
        if (events.length === 0) return;
        this.last = events[events.length - 1].id;
        for (const fn of [...this.subscribers]) {
          try {
            fn(events);
          } catch (e) {
            this.onProblem(`an event listener failed: ${(e as Error).message}`);
          }
        }
        if (events.length < BATCH) return;
      }
    } catch (e) {
      // The database is away for a moment: the next wake or poll tries again.
      this.onProblem(`cannot read new events: ${(e as Error).message}`);
    }
  }
}

/** This context's bus (created on first use; the server starts it). */
export function eventBus(ctx: AppContext): EventBus {
  return contextCache(ctx, 'event-bus', () => new EventBus(ctx));
}
