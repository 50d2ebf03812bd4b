import { mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  Kysely,
  LimitNode,
  type CompiledQuery,
  PostgresDialect,
  SelectQueryNode,
  SqliteDialect,
  ValueNode,
  sql,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RawBuilder,
  type RootOperationNode,
  type SqliteDatabase,
  type SqliteStatement,
  type UnknownRow,
} from 'kysely';
import type { Database } from './schema.js';
import { GroupCommit } from './group-commit.js';
import { checkpointInBackground, type Checkpointer } from './checkpointer.js';
import { markServing } from './serving.js';

// Everything that differs between SQLite and PostgreSQL lives in this module; the rest of the
// code speaks Kysely and asks this module for the few engine-specific pieces.

export type Engine = 'sqlite' | 'postgres';
export type ColumnKind = 'text' | 'integer' | 'real' | 'boolean' | 'blob';

/**
 * The database as the program sees it: engine facts and housekeeping, never raw SQL. Store
 * modules (files under a `store/` folder) reach the Kysely instance through `sqlOf` (sql.ts);
 * everything else calls their verbs.
 */
export interface Store {
  engine: Engine;
  /** SQL type name for a portable column kind. */
  columnType(kind: ColumnKind): string;
  /** Extract a top-level field of the JSON text column `doc` as a value of the given kind. */
  jsonField(column: string, field: string, kind: ColumnKind): RawBuilder<unknown>;
  /** The plan the engine would use for a query, one line per step (for tests and the benchmark). */
  explain(query: { sql: string; parameters: readonly unknown[] }): Promise<string[]>;
  /**
   * Creates an index if it does not exist. Columns listed in `nullsFirst` are ordered NULLS FIRST,
   * matching the list order (NULLs first ascending, last descending) so one index serves both.
   */
  createIndex(table: string, name: string, columns: string[], nullsFirst: string[]): Promise<void>;
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
   * Kysely's way to the one connection (a mutex, a plugin hook, an async step each) made a read
   * by id cost 4.7 KB of allocations and a dozen promises; better-sqlite3 answers synchronously.
   */
  readNow?: (query: CompiledQuery) => unknown[] | null;
}

const OPTIMIZE_EVERY_MS = 60_000;
const CONNECT_TIMEOUT_MS = 5000;

/**
 * What ANALYZE gathered that the planner is better without, removed after every ANALYZE:
 *
 * - The outbox and the webhook queue only grow from empty and are read by id ranges and due times.
 *   Statistics gathered while such a table was tiny ("1 row") make SQLite scan it whole instead of
 *   seeking its key — a read per event that grows with the table. Without statistics the planner
 *   assumes a large table and seeks, at every size.
 * - The full-text search tables' shadow tables (FTS5's `_data`, `_idx`, `_content`, `_docsize`,
 *   `_config`), for the same reason: ANALYZE at the first start sees `_data` with 2 rows, and
 *   `PRAGMA optimize` never looks at it again (nothing the planner does uses an index of it). FTS5
 *   then deletes the segments it has merged with `DELETE … WHERE id >= ? AND id <= ?`, which
 *   SQLite planned as a scan of the whole table: a bulk load of a collection with `search` fields
 *   slowed from 7 s to 27 s per 50,000 records by 800,000 records, and each write held the event
 *   loop for up to half a second (docs/benchmarks.md). FTS5's statements are written for the
 *   planner's defaults.
 * - better-sqlite3 builds SQLite with SQLITE_ENABLE_STAT4, so ANALYZE also keeps samples of every
 *   index's values (sqlite_stat4). With samples, a prepared statement that compares a parameter
 *   to an indexed column is parsed and planned again at its next run once that parameter is bound
 *   again — and every run of a cached statement binds all of its parameters: a filtered list's
 *   page and count were both prepared anew on every request. The plans of gatehouse's query
 *   shapes come from sqlite_stat1's averages alone (the index tests check them), so the samples
 *   go and a prepared statement stays prepared.
 *
 * When anything was removed the connection reloads its schema (`PRAGMA writable_schema = RESET`,
 * which also turns schema writing off, as it is): reloading the statistics alone (`ANALYZE
 * sqlite_schema`) would keep the row count a table had in the removed row, and with it the scan.
 */
const QUEUE_TABLES = ['events', 'webhook_deliveries', 'webhook_attempts'];
export function forgetStatistics(database: import('better-sqlite3').Database): void {
  const tables = new Set((database.prepare("select name from sqlite_master where name in ('sqlite_stat1', 'sqlite_stat4')").all() as { name: string }[]).map((t) => t.name));
  let removed = 0;
  if (tables.has('sqlite_stat1'))
    removed += database
      .prepare(
        `delete from sqlite_stat1 where tbl in (${QUEUE_TABLES.map(() => '?').join(', ')})
           or tbl in (select name from pragma_table_list where schema = 'main' and type = 'shadow')`,
      )
      .run(...QUEUE_TABLES).changes;
  if (tables.has('sqlite_stat4')) removed += database.prepare('delete from sqlite_stat4').run().changes;
  if (removed > 0) database.pragma('writable_schema = RESET'); // reloads the schema and the statistics the planner uses
}

export interface StoreOptions {
  /** PostgreSQL: connections in the pool (default 10; the config's GATEHOUSE_PG_POOL). */
  pgPool?: number | null;
}

const DEFAULT_PG_POOL = 10;

export async function openStore(url: string, options: StoreOptions = {}): Promise<Store> {
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length));
  return openPostgres(url, options.pgPool ?? DEFAULT_PG_POOL);
}

async function openSqlite(file: string): Promise<StoreInternals> {
  const { default: BetterSqlite3 } = await import('better-sqlite3');
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const database = new BetterSqlite3(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  // Statement journals (a multi-row INSERT or a trigger inside a transaction keeps the pages it
  // changes, to undo that statement alone) and temporary sorts stay in memory: past 64 KiB SQLite
  // wrote them to a temporary file, page by page — 16% of the server's CPU in a bulk load at
  // 800,000 records. They live for one statement.
  database.pragma('temp_store = MEMORY');
  // The query planner chooses between a collection's indexes by their statistics: without them a
  // filtered list may walk a range index and sort instead of seeking its equality index. Gathered
  // on a sample (bounded cost) at open, and kept current by the housekeeping below.
  database.pragma('analysis_limit = 1000');
  database.pragma('optimize = 0x10002');
  forgetStatistics(database);
  const statements = withStatementCache(database);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: statements }), plugins: [new LimitAsLiteral()] });
  const types: Record<ColumnKind, string> = { text: 'text', integer: 'integer', real: 'real', boolean: 'integer', blob: 'blob' };
  let checkpointer: Checkpointer | null = null;
  let unmark: (() => void) | null = null;
  let optimizer: NodeJS.Timeout | null = null;
  return {
    db,
    readNow: (query) => (database.inTransaction ? null : statements.prepare(query.sql).all(query.parameters as unknown[])),
    writes: new GroupCommit(db),
    engine: 'sqlite',
    runHousekeepingInBackground: (onProblem) => {
      if (file !== ':memory:' && !checkpointer) checkpointer = checkpointInBackground(database, path.resolve(file), onProblem);
      // Statistics follow the data (a bulk load of a million rows changes what the best index is):
      // SQLite re-analyzes a table whose size changed tenfold, on a sample — yet on the event
      // loop: ~0.4 s for a collection of 400,000 records with seven indexes, once per tenfold growth.
      optimizer ??= setInterval(() => {
        // Never inside a transaction that awaits something (its rollback would undo the removals,
        // and the schema would be reloaded under it): the next minute will do.
        if (database.inTransaction) return;
        try {
          database.pragma('optimize');
          forgetStatistics(database);
        } catch (e) {
          onProblem(`cannot update the query planner's statistics: ${(e as Error).message}`);
        }
      }, OPTIMIZE_EVERY_MS);
      optimizer.unref();
    },
    announceServing: () => {
      if (file !== ':memory:' && !unmark) unmark = markServing(file);
    },
    columnType: (kind) => types[kind],
    jsonField: (column, field, kind) => {
      const value = sql`json_extract(${sql.ref(column)}, ${'$.' + field})`;
      return kind === 'boolean' ? sql`(case when ${value} then 1 when ${value} = 0 then 0 end)` : value;
    },
    // SQLite already orders NULLs first in an ascending index.
    createIndex: async (table, name, columns) => {
      await db.schema.createIndex(name).ifNotExists().on(table).columns(columns).execute();
    },
    explain: async (q) => {
      const rows = database.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...(q.parameters as unknown[])) as { detail: string }[];
      return rows.map((r) => r.detail);
    },
    // SQLite serialises writers itself (busy_timeout makes a second migrator wait its turn);
    // every migration step is idempotent (create ... if not exists).
    withMigrationLock: async (fn) => fn(),
    ping: async () => void (await sql`select 1`.execute(db)),
    poolStats: () => ({ max: 1, open: database.open ? 1 : 0, idle: null, waiting: null }),
    close: async () => {
      if (optimizer) clearInterval(optimizer);
      await checkpointer?.stop();
      await db.destroy();
      unmark?.();
    },
  };
}

/**
 * A LIMIT that may be written into SQL text (see LimitAsLiteral): a whole number, at least 0, as
 * the program's page sizes are; null for any other value, which stays bound.
 */
export function literalLimit(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/**
 * A statement's LIMIT written into its SQL text instead of bound as a parameter. SQLite plans a
 * `LIMIT ?` from the value bound to it, so it marks that parameter as one the plan depends on,
 * and any new binding of it — every run of a cached statement rebinds all of its parameters,
 * whatever their values — makes the next run parse and plan the statement again (perf: a third
 * of a list page's SQLite time; the events feed's polls, the grants list and the job and webhook
 * queues bind a LIMIT too). A literal limit keeps the
 * statement prepared; a statement per distinct limit is what that costs. Only numbers from the
 * program reach a LIMIT (page sizes, 1); anything else is left bound.
 */
class LimitAsLiteral implements KyselyPlugin {
  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    if (!SelectQueryNode.is(node) || !node.limit || !ValueNode.is(node.limit.limit) || node.limit.limit.immediate) return node;
    const value = literalLimit(node.limit.limit.value);
    if (value === null) return node;
    return SelectQueryNode.cloneWithLimit(node, LimitNode.create(ValueNode.createImmediate(value)));
  }

  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result;
  }
}

/**
 * Kysely prepares every statement anew; SQLite's prepare is a large part of a simple query's cost.
 * The same SQL text (Kysely's parameterised output) reuses its prepared statement. Rows are read
 * as arrays and made into objects here: cheaper than better-sqlite3 building each object in C++
 * (a page of 20 records: 37 → 29 µs).
 */
function withStatementCache(database: import('better-sqlite3').Database): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => database.close(),
    prepare(text: string) {
      let statement = cache.get(text);
      if (!statement) {
        if (cache.size >= 1000) cache.clear();
        statement = text === 'rollback' ? rollbackIfOpen(database) : rowsAsObjects(database.prepare(text));
        cache.set(text, statement);
      }
      return statement;
    },
  };
}

/**
 * SQLite ends a transaction itself on some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM): the
 * ROLLBACK that Kysely then sends would fail ("no transaction is active") and hide the error that
 * matters (a full disk is 503, not 500). Rolls back only what is still open.
 */
function rollbackIfOpen(database: import('better-sqlite3').Database): SqliteStatement {
  const rollback = database.prepare('rollback');
  return {
    reader: false,
    all: () => [],
    run: () => (database.inTransaction ? rollback.run() : { changes: 0, lastInsertRowid: 0 }),
    *iterate() {},
  };
}

function rowsAsObjects(statement: import('better-sqlite3').Statement): SqliteStatement {
  if (!statement.reader) return statement as unknown as SqliteStatement;
  const names = statement.columns().map((c) => c.name);
  statement.raw(true);
  const toObject = (values: unknown[]) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) row[names[i]] = values[i];
    return row;
  };
  return {
    reader: true,
    all: (parameters) => (statement.all(parameters) as unknown[][]).map(toObject),
    run: (parameters) => statement.run(parameters),
    *iterate(parameters) {
      for (const values of statement.iterate(parameters) as IterableIterator<unknown[]>) yield toObject(values);
    },
  };
}

async function openPostgres(url: string, poolSize: number): Promise<StoreInternals> {
  const pg = await import('pg');
  const { Pool, types } = pg.default;
  types.setTypeParser(20, (v: string) => Number(v)); // bigint → number (epoch ms fit in 2^53)
  // A request never waits long for a connection: while the server is away (restart, failover)
  // opening one fails or times out within CONNECT_TIMEOUT_MS and the request is answered 503
  // with Retry-After (unavailable.ts); the pool opens new connections by itself once it is back.
  const pool = new Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // An idle connection that the server drops (restart, failover, pg_terminate_backend) is an
  // 'error' on the pool; unheard, it would crash the process. The pool discards that connection
  // and opens a new one when needed; a database that stays down shows in /health and as 503.
  pool.on('error', () => undefined);
  // A connection that the server ends while it is checked out but between two statements (a
  // transaction's JavaScript in between, a restart with `pg_ctl -m fast`) is an 'error' on the
  // client itself, which the pool only listens for while the client is idle: unheard, it crashed
  // the process (test/outages.test.ts). Its next statement fails with "Client has encountered a
  // connection error" (503, unavailable.ts) and the pool discards it on release.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const typeNames: Record<ColumnKind, string> = {
    // Binary order, as SQLite compares text: sorting, ranges and prefixes agree on both engines.
    text: 'text collate "C"',
    integer: 'bigint',
    real: 'double precision',
    boolean: 'integer',
    blob: 'bytea',
  };
  return {
    db,
    writes: new GroupCommit(db),
    engine: 'postgres',
    // PostgreSQL's own background processes do its housekeeping.
    runHousekeepingInBackground: () => undefined,
    announceServing: () => undefined,
    columnType: (kind) => typeNames[kind],
    jsonField: (column, field, kind) => {
      const text = sql`(${sql.ref(column)}::jsonb ->> ${field})`;
      if (kind === 'integer') return sql`(${text})::numeric::bigint`;
      if (kind === 'real') return sql`(${text})::double precision`;
      if (kind === 'boolean') return sql`(case (${text}) when 'true' then 1 when 'false' then 0 end)`;
      return text;
    },
    createIndex: async (table, name, columns, nullsFirst) => {
      const list = sql.join(columns.map((c) => (nullsFirst.includes(c) ? sql`${sql.ref(c)} nulls first` : sql.ref(c))));
      await sql`create index if not exists ${sql.id(name)} on ${sql.table(table)} (${list})`.execute(db);
    },
    explain: async (q) => {
      const client = await pool.connect();
      try {
        const r = await client.query(`EXPLAIN ${q.sql}`, q.parameters as unknown[]);
        return (r.rows as { 'QUERY PLAN': string }[]).map((row) => row['QUERY PLAN']);
      } finally {
        client.release();
      }
    },
    withMigrationLock: async (fn) => {
      const client = await pool.connect();
      try {
        await client.query('select pg_advisory_lock(715517)');
        return await fn();
      } finally {
        await client.query('select pg_advisory_unlock(715517)').catch(() => undefined);
        client.release();
      }
    },
    ping: async () => void (await sql`select 1`.execute(db)),
    poolStats: () => ({ max: pool.options.max ?? 10, open: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: async () => {
      await db.destroy();
    },
  };
}
