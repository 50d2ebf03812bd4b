import type { Database } from 'better-sqlite3';

// SQLite: the statistics ANALYZE gathers that the planner is better without, removed after every
// ANALYZE (at open and by the housekeeping's `PRAGMA optimize`, sqlite.ts). Why each one goes, and
// what it cost while it stayed: docs/benchmarks.md ("Why the SQLite store is set up as it is").

/** Tables that only grow from empty and are read by key ranges: without statistics the planner seeks them at every size. */
const QUEUE_TABLES = ['events', 'webhook_deliveries', 'webhook_attempts', 'mail_outbox'];

/**
 * Removes the statistics of the queue tables and of FTS5's shadow tables (sqlite_stat1), and every
 * index sample (sqlite_stat4: with samples, a cached statement is planned again at each run).
 * When anything was removed the connection reloads its schema and statistics.
 */
export function forgetStatistics(database: Database): void {
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
  // `writable_schema = RESET` reloads the schema and statistics (and turns schema writing off, as
  // it is): `ANALYZE sqlite_schema` alone would keep a removed table's row count, and its scan.
  if (removed > 0) database.pragma('writable_schema = RESET');
}
