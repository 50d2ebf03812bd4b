import type { Transaction } from 'kysely';
import type { Database } from './schema.js';
import type { Store, StoreInternals } from './store.js';
import { appendEvents, type NewEvent } from './outbox.js';

export type { NewEvent } from './outbox.js';

// The single write path. Every change of a record, attachment, job, grant, token, code, client,
// user or session is made by its owner's store verbs inside write() (or writeGrouped() for the
// small independent writes of token issuance): one transaction per change, and what must happen
// once it is durable (revocation notices) registered with afterCommit. The event outbox
// (docs/events.md, outbox.ts) appends here: a verb describes its change with tx.emit, and the
// events are written just before the commit, in the same transaction as the change.

/** One transaction of the write path, handed to the owners' verbs. */
export class WriteTx {
  constructor(
    /** For store modules only (sql.ts). */
    readonly trx: Transaction<Database>,
    private readonly after: (() => unknown)[],
    /** The events this write describes, appended just before it commits. */
    readonly events: NewEvent[] = [],
  ) {}

  /** Describes a change of this write as an event (docs/events.md): it exists iff the write commits. */
  emit(event: NewEvent): void {
    this.events.push(event);
  }

  /** Runs fn once the transaction has committed (never when it rolls back). */
  afterCommit(fn: () => unknown): void {
    this.after.push(fn);
  }
}

/** Where a store verb reads or writes: the database, or the transaction of the write it is part of. */
export type On = Store | WriteTx;

async function runAfter(after: (() => unknown)[]): Promise<void> {
  for (const fn of after) await fn();
}

type EventsListener = () => void;
const eventListeners = new WeakMap<Store, Set<EventsListener>>();

/** Calls listener whenever a write of this process that emitted events has committed (the event bus). */
export function onEventsCommitted(store: Store, listener: EventsListener): () => void {
  let set = eventListeners.get(store);
  if (!set) eventListeners.set(store, (set = new Set()));
  set.add(listener);
  return () => set.delete(listener);
}

function announceEvents(store: Store): void {
  for (const listener of eventListeners.get(store) ?? []) listener();
}

async function finish(tx: WriteTx, store: Store): Promise<void> {
  const events = tx.events.splice(0);
  if (events.length) await appendEvents(store as StoreInternals, tx.trx, events);
}

/** Runs work in one transaction; its afterCommit steps run once it is committed. */
export async function write<T>(store: Store, work: (tx: WriteTx) => Promise<T>): Promise<T> {
  const after: (() => unknown)[] = [];
  let emitted = false;
  const result = await (store as StoreInternals).db.transaction().execute(async (trx) => {
    const tx = new WriteTx(trx, after);
    const out = await work(tx);
    emitted = tx.events.length > 0;
    await finish(tx, store);
    return out;
  });
  if (emitted) announceEvents(store);
  await runAfter(after);
  return result;
}

/**
 * Like write(), for small independent writes that may share one commit with others arriving at
 * the same moment (group commit, see group-commit.ts). Work may run twice (its batch failed and
 * it is retried alone): only the attempt that commits counts.
 */
export async function writeGrouped(store: Store, work: (tx: WriteTx) => Promise<void>): Promise<void> {
  let after: (() => unknown)[] = [];
  let emitted = false;
  await store.writes.run(async (trx) => {
    after = [];
    const tx = new WriteTx(trx, after);
    await work(tx);
    emitted = tx.events.length > 0;
    await finish(tx, store);
  });
  if (emitted) announceEvents(store);
  await runAfter(after);
}
