import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Kysely, SqliteDialect, sql } from 'kysely';
import type { Database } from './schema.js';
import type { ColumnKind, StoreInternals } from './store.js';
import { GroupCommit } from './group-commit.js';
import { checkpointInBackground, type Checkpointer } from './checkpointer.js';
import { markServing } from './serving.js';
import { LimitAsLiteral } from './limit-literal.js';
import { forgetStatistics } from './sqlite-statistics.js';
import { withStatementCache } from './sqlite-statements.js';

// The SQLite store: one better-sqlite3 connection (WAL), its pragmas, its statement cache, the
// reads that need not queue (readNow), and the housekeeping that keeps the planner's statistics.
// Why each setting is what it is: docs/benchmarks.md ("Why the SQLite store is set up as it is").

const OPTIMIZE_EVERY_MS = 60_000;

/** Opens (creating its folder) the database file, or an in-memory database for `:memory:`. */
export async function openSqlite(file: string): Promise<StoreInternals> {
  const { default: BetterSqlite3 } = await import('better-sqlite3');
  const inMemory = file === ':memory:';
  if (!inMemory) mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const database = new BetterSqlite3(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  // Statement journals and temporary sorts stay in memory (they live for one statement): on disk
  // they cost a bulk load 16% of the server's CPU.
  database.pragma('temp_store = MEMORY');
  // The planner chooses between a collection's indexes by their statistics: gathered on a sample
  // (bounded cost) at open, kept current by the housekeeping below.
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
    runsOnEventLoop: true,
    runHousekeepingInBackground: (onProblem) => {
      if (!inMemory && !checkpointer) checkpointer = checkpointInBackground(database, path.resolve(file), onProblem);
      // Statistics follow the data: SQLite re-analyzes, on a sample, a table whose size changed
      // tenfold (on the event loop: ~0.4 s for 400,000 records with seven indexes, once per tenfold growth).
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
      if (!inMemory && !unmark) unmark = markServing(file);
    },
    columnType: (kind) => types[kind],
    jsonField: (column, field, kind) => {
      const value = sql`json_extract(${sql.ref(column)}, ${'$.' + field})`;
      return kind === 'boolean' ? sql`(case when ${value} then 1 when ${value} = 0 then 0 end)` : value;
    },
    // lower() folds ASCII letters only. A position, not LIKE: SQLite prepares a statement whose LIKE
    // pattern is a parameter again at every run (it might seek an index by the pattern's prefix).
    includesIgnoringAsciiCase: (column, needle) => sql`instr(lower(${column}), ${needle}) > 0`,
    withoutIndex: (column) => sql`+${column}`,
    // SQLite already orders NULLs first in an ascending index.
    createIndex: async (table, name, columns) => {
      await db.schema.createIndex(name).ifNotExists().on(table).columns(columns).execute();
    },
    // SQLite compares text in binary order unless told otherwise.
    keepTextInBinaryOrder: async () => undefined,
    // SQLite refuses to drop an indexed column: its indexes go first.
    dropColumn: async (table, column) => {
      const { rows } = await sql<{ name: string }>`select distinct il.name as name from pragma_index_list(${table}) as il, pragma_index_info(il.name) as ii where ii.name = ${column}`.execute(db);
      for (const { name } of rows) await sql`drop index if exists ${sql.id(name)}`.execute(db);
      await sql`alter table ${sql.table(table)} drop column ${sql.ref(column)}`.execute(db);
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
