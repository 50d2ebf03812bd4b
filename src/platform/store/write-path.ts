import type { Transaction } from 'kysely';
import type { Database } from './schema.js';
import type { Store, StoreInternals } from './dialect.js';

// The single write path. Every change of a record, attachment, job, grant, token, code, client,
// user or session is made by its owner's store verbs inside write() (or writeGrouped() for the
// small independent writes of token issuance): one transaction per change, and what must happen
// once it is durable (revocation notices) registered with afterCommit. The event outbox
// (DESIGN.md "Events") appends here, in the same transaction as the change it describes.

/** One transaction of the write path, handed to the owners' verbs. */
export class WriteTx {
  constructor(
    /** For store modules only (sql.ts). */
    readonly trx: Transaction<Database>,
    private readonly after: (() => unknown)[],
  ) {}

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

/** Runs work in one transaction; its afterCommit steps run once it is committed. */
export async function write<T>(store: Store, work: (tx: WriteTx) => Promise<T>): Promise<T> {
  const after: (() => unknown)[] = [];
  const result = await (store as StoreInternals).db.transaction().execute((trx) => work(new WriteTx(trx, after)));
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
  await store.writes.run(async (trx) => {
    after = [];
    await work(new WriteTx(trx, after));
  });
  await runAfter(after);
}
