import type { CompiledQuery, Transaction } from 'kysely';
import type { Database, EventsTable } from './schema.js';
import type { Store, StoreInternals } from './store.js';

// Owner of the events table: the outbox (docs/events.md). write-path.ts appends a write's
// events inside its transaction, just before the commit, so an event exists exactly when the
// change it describes was committed. Ids are the table's increasing integer. On PostgreSQL the
// appending transactions take one advisory lock until they commit, so ids become visible in the
// order they were assigned: a reader that has seen id n never later finds a committed id below n
// (without it, a transaction that took id 7 could commit after another took and committed id 8,
// and a feed resumed after 8 would miss 7). SQLite has one writer at a time: the same by nature.

/** An event as a write describes it; id and time are given when it is appended. */
export interface NewEvent {
  type: string;
  collection?: string | null;
  record_id?: string | null;
  /** Whose record it is: the subject that may read it in an `owner` collection. */
  owner?: string | null;
  /** Who made the change: `user:<id>`, `client:<id>`, or null for the operator's CLI. */
  actor?: string | null;
  /** JSON text (the record as GET shows it, …) or null. */
  data?: string | null;
}

/** An event as the outbox keeps it. */
export type StoredEvent = Omit<EventsTable, 'id'> & { id: number };

const APPEND_LOCK = 715518;
const CHUNK = 200;

/** Appends a write's events inside its transaction (write-path.ts only). */
export async function appendEvents(store: StoreInternals, trx: Transaction<Database>, events: readonly NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  if (store.lockUntilCommit) await store.lockUntilCommit(trx, APPEND_LOCK);
  const time = Date.now();
  const rows = events.map((e) => ({
    type: e.type,
    time,
    collection: e.collection ?? null,
    record_id: e.record_id ?? null,
    owner: e.owner ?? null,
    actor: e.actor ?? null,
    data: e.data ?? null,
  }));
  if (rows.length === 1) {
    // The common case (one change per write), on every write's path: compiled once per database.
    const adapter = trx.getExecutor().adapter;
    let query = insertOne.get(adapter);
    if (!query) insertOne.set(adapter, (query = trx.insertInto('events').values(Object.fromEntries(COLUMNS.map((c) => [c, null])) as never).compile()));
    await trx.executeQuery({ ...query, parameters: COLUMNS.map((c) => rows[0][c]) });
    return;
  }
  for (let i = 0; i < rows.length; i += CHUNK) await trx.insertInto('events').values(rows.slice(i, i + CHUNK)).execute();
}

const COLUMNS = ['type', 'time', 'collection', 'record_id', 'owner', 'actor', 'data'] as const;
const insertOne = new WeakMap<object, CompiledQuery>();

const db = (store: Store) => (store as StoreInternals).db;

/** What a reader of the outbox asks for; every part narrows (AND). */
export interface EventFilter {
  after: number;
  /** Only ids up to this one (null: no bound). */
  through?: number | null;
  limit: number;
  /** Only these types (null: any). */
  types: readonly string[] | null;
  /** Only events of these collections (null: any, including those without a collection). */
  collections: readonly string[] | null;
  /** Of the collections above, those where the event's owner must be this subject (access: owner). */
  ownedIn?: { subject: string; collections: readonly string[] } | null;
}

/** Events with ids above `after`, oldest first, as the filter narrows them. */
export async function readEvents(store: Store, f: EventFilter): Promise<StoredEvent[]> {
  let q = db(store).selectFrom('events').selectAll().where('id', '>', f.after);
  if (f.through != null) q = q.where('id', '<=', f.through);
  if (f.types) q = q.where('type', 'in', f.types.length ? [...f.types] : ['']);
  if (f.collections) q = q.where('collection', 'in', f.collections.length ? [...f.collections] : ['']);
  const owned = f.ownedIn;
  if (owned && owned.collections.length)
    q = q.where((eb) => eb.or([eb('collection', 'not in', [...owned.collections]), eb('owner', '=', owned.subject), eb('owner', 'is', null)]));
  const rows = await q.orderBy('id').limit(f.limit).execute();
  return rows.map((r) => ({ ...r, id: Number(r.id), time: Number(r.time) }));
}

/** The highest event id (0 when there is none); inside a write, as that transaction sees it. */
export async function latestEventId(on: Store | { trx: Transaction<Database> }): Promise<number> {
  const q = 'trx' in on ? on.trx : db(on);
  const row = await q.selectFrom('events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
  return Number(row?.id ?? 0);
}

/** Events by id, for the webhook deliveries that name them. */
export async function eventsByIds(store: Store, ids: readonly number[]): Promise<StoredEvent[]> {
  if (ids.length === 0) return [];
  const rows = await db(store).selectFrom('events').selectAll().where('id', 'in', [...ids]).execute();
  return rows.map((r) => ({ ...r, id: Number(r.id), time: Number(r.time) }));
}

/** Removes events older than `before` (epoch ms): how many, and the highest id removed (0 if none). */
export async function purgeEvents(store: Store, before: number): Promise<{ removed: number; through: number }> {
  // No index on time (one less per write): ids follow time, so the first event young enough to
  // keep is found by walking the ids from the oldest, over exactly the events to remove.
  const kept = await db(store).selectFrom('events').select('id').where('time', '>=', before).orderBy('id').limit(1).executeTakeFirst();
  const through = kept ? Number(kept.id) - 1 : await latestEventId(store);
  if (through === 0) return { removed: 0, through };
  const r = await db(store).deleteFrom('events').where('id', '<=', through).executeTakeFirst();
  return { removed: Number(r.numDeletedRows ?? 0), through };
}
