import type { CompiledQuery, Kysely, RawBuilder, Transaction } from 'kysely';
import type { Database } from './schema.js';
import type { GroupCommit } from './group-commit.js';

// The database as the program sees it: one interface, an SQLite and a PostgreSQL implementation
// (sqlite.ts, postgres.ts) chosen once by openStore (open-store.ts). Whatever differs between the
// engines is a member of this interface; nothing outside platform/store/ and the engine modules
// asks which engine runs (test/architecture.test.ts checks it).

export type Engine = 'sqlite' | 'postgres';
export type ColumnKind = 'text' | 'integer' | 'real' | 'boolean' | 'blob';

/**
 * Engine facts and housekeeping, and the few SQL pieces that differ between the engines; never
 * raw SQL. Store modules (files under a `store/` folder) reach the Kysely instance through `sqlOf`
 * (sql.ts); everything else calls their verbs.
 */
export interface Store {
  /** Which engine runs (for labels and lookups keyed by engine, never to branch on). */
  engine: Engine;
  /**
   * Whether statements run on the event loop itself (SQLite, synchronous): long work is then cut
   * into pieces taken in turns (api/turns.ts). PostgreSQL waits on the network: false.
   */
  runsOnEventLoop: boolean;
  /** SQL type name for a portable column kind. */
  columnType(kind: ColumnKind): string;
  /** Extract a top-level field of the JSON text column `doc` as a value of the given kind. */
  jsonField(column: string, field: string, kind: ColumnKind): RawBuilder<unknown>;
  /**
   * Whether `column` contains `needle` (already lower-cased for ASCII) literally, ignoring the case
   * of ASCII letters only, the same rows on both engines (docs/api.md, `[contains]`).
   */
  includesIgnoringAsciiCase(column: RawBuilder<unknown>, needle: RawBuilder<unknown>): RawBuilder<unknown>;
  /**
   * The column as an expression the planner will not seek an index by, so that another filter's
   * index wins (SQLite: a unary +); the column itself where the planner takes no such hint.
   */
  withoutIndex(column: RawBuilder<unknown>): RawBuilder<unknown>;
  /** The plan the engine would use for a query, one line per step (for tests and the benchmark). */
  explain(query: { sql: string; parameters: readonly unknown[] }): Promise<string[]>;
  /**
   * Creates an index if it does not exist. Columns listed in `nullsFirst` are ordered NULLS FIRST,
   * matching the list order (NULLs first ascending, last descending) so one index serves both.
   */
  createIndex(table: string, name: string, columns: string[], nullsFirst: string[]): Promise<void>;
  /**
   * Text columns compare in binary order, as `columnType('text')` makes them; these columns, made
   * before that was the rule, get it now (PostgreSQL rebuilds their indexes; SQLite always did).
   */
  keepTextInBinaryOrder(table: string, columns: string[]): Promise<void>;
  /** Removes a derived column and every index on it (a mirror column rebuilt for a field's new type). */
  dropColumn(table: string, column: string): Promise<void>;
  /** Small independent writes that may share a transaction with others arriving at the same time. */
  writes: GroupCommit;
  /**
   * For long-running processes (the server): engine housekeeping that would otherwise run inside
   * a request moves off the event loop (SQLite: WAL checkpoints in a worker thread). Problems are
   * reported to onProblem; close() stops it.
   */
  runHousekeepingInBackground(onProblem: (message: string) => void): void;
  /**
   * For the server: notes that this process serves the database until close(), so that
   * `gatehouse restore` refuses to replace it meanwhile (SQLite: a file in `<db>.servers/`,
   * serving.ts; PostgreSQL: nothing, its restore is pg_restore's).
   */
  announceServing(): void;
  /** Runs fn while holding a lock that other processes migrating the same database wait for. */
  withMigrationLock<T>(fn: () => Promise<T>): Promise<T>;
  /** Resolves when the database answers a trivial query (GET /health). */
  ping(): Promise<void>;
  /** What the engine can tell about its connections now (metrics). */
  poolStats(): PoolStats;
  close(): Promise<void>;
}

/**
 * A database's connections. PostgreSQL: the pg Pool's clients (open, idle) and the queries queued
 * for one. SQLite: one connection, always open; idle and waiting are not known (null).
 */
export interface PoolStats {
  max: number;
  open: number;
  idle: number | null;
  waiting: number | null;
}

/** What only the store layer sees: the Kysely instance (see sql.ts). */
export interface StoreInternals extends Store {
  db: Kysely<Database>;
  /**
   * SQLite: the rows of a read at once, or null when it must wait its turn through Kysely (a
   * transaction is open on the one connection: a read from outside it waits until it has ended).
   * Kysely's way to the one connection costs a read by id several KB of allocations and a dozen
   * promises (docs/benchmarks.md); better-sqlite3 answers synchronously.
   */
  readNow?: (query: CompiledQuery) => unknown[] | null;
  /**
   * Holds `lock` until the transaction ends, so that writers of the same lock commit one after
   * the other (PostgreSQL: an advisory lock). Absent where one writer at a time is the rule
   * already (SQLite): nothing to await on every write's path.
   */
  lockUntilCommit?: (trx: Transaction<Database>, lock: number) => Promise<void>;
}

export interface StoreOptions {
  /** PostgreSQL: connections in the pool (default 10; the config's GATEHOUSE_PG_POOL). */
  pgPool?: number | null;
  /** Open only a database that is there (a SQLite file that exists); else NoDatabase. */
  existing?: boolean;
}

/** No gatehouse database where the config points (`describeDatabase`'s words in `where`). */
export class NoDatabase extends Error {
  constructor(readonly where: string) {
    super(`no gatehouse database at ${where}`);
  }
}
