import type { CompiledQuery, Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { StoreInternals } from './store.js';
import { WriteTx } from './write-path.js';

// The Kysely instance behind a store, or the transaction of a write. Only store modules (files
// under a `store/` folder) import this: dependency-cruiser and test/architecture.test.ts keep it so.

export type { On } from './write-path.js';
import type { On } from './write-path.js';

export function sqlOf(on: On): Kysely<Database> {
  return on instanceof WriteTx ? on.trx : (on as StoreInternals).db;
}

/**
 * The rows of a compiled read: on SQLite at once where no transaction holds the connection
 * (`readNow`), else through Kysely like every other statement (a write's transaction, PostgreSQL).
 */
export async function rowsOf<R>(on: On, query: CompiledQuery): Promise<R[]> {
  const now = on instanceof WriteTx ? null : ((on as StoreInternals).readNow?.(query) ?? null);
  return now === null ? (await sqlOf(on).executeQuery<R>(query)).rows : (now as R[]);
}

/** Kysely counts affected rows as bigint; the program speaks numbers. */
export function count(result: { numUpdatedRows?: bigint; numDeletedRows?: bigint; numInsertedOrUpdatedRows?: bigint }): number {
  return Number(result.numUpdatedRows ?? result.numDeletedRows ?? result.numInsertedOrUpdatedRows ?? 0n);
}

const caches = new WeakMap<object, Map<string, unknown>>();

/**
 * The statements remembered for one database (keyed by its adapter, which a transaction shares
 * with the database it came from): the store layer's one cache. Callers that add many keys bound it.
 */
export function statementCache(db: Kysely<Database>): Map<string, unknown> {
  const adapter = db.getExecutor().adapter;
  let cache = caches.get(adapter);
  if (!cache) caches.set(adapter, (cache = new Map()));
  return cache;
}

/** A query built and compiled by Kysely once per database, then run with new parameters: for the statements on every request's path. */
export function compiledOnce(db: Kysely<Database>, name: string, build: () => CompiledQuery): CompiledQuery {
  const cache = statementCache(db);
  let query = cache.get(name) as CompiledQuery | undefined;
  if (!query) cache.set(name, (query = build()));
  return query;
}
