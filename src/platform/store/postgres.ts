import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Database } from './schema.js';
import type { ColumnKind, StoreInternals } from './store.js';
import { GroupCommit } from './group-commit.js';

// The PostgreSQL store: a pg Pool that survives the server going away (restart, failover), text
// in binary order as SQLite compares it, and advisory locks for migrations and ordered appends.

const CONNECT_TIMEOUT_MS = 5000;
/** The advisory lock that migrating processes take in turn. */
const MIGRATION_LOCK = 715517;

export async function openPostgres(url: string, poolSize: number): Promise<StoreInternals> {
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
    runsOnEventLoop: false,
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
    // ASCII letters folded as SQLite's lower() folds them (PostgreSQL's lower() folds every letter).
    includesIgnoringAsciiCase: (column, needle) => sql`strpos(translate(${column}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), ${needle}) > 0`,
    // PostgreSQL's planner takes no such hint.
    withoutIndex: (column) => column,
    createIndex: async (table, name, columns, nullsFirst) => {
      const list = sql.join(columns.map((c) => (nullsFirst.includes(c) ? sql`${sql.ref(c)} nulls first` : sql.ref(c))));
      await sql`create index if not exists ${sql.id(name)} on ${sql.table(table)} (${list})`.execute(db);
    },
    // Its indexes go with it.
    dropColumn: async (table, column) => {
      await sql`alter table ${sql.table(table)} drop column if exists ${sql.ref(column)}`.execute(db);
    },
    keepTextInBinaryOrder: async (table, columns) => {
      for (const column of columns) {
        const { rows } = await sql<{ collation_name: string | null }>`select collation_name from information_schema.columns
          where table_schema = current_schema() and table_name = ${table} and column_name = ${column}`.execute(db);
        if (rows[0] && rows[0].collation_name !== 'C') await sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} type text collate "C"`.execute(db);
      }
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
        await client.query(`select pg_advisory_lock(${MIGRATION_LOCK})`);
        return await fn();
      } finally {
        await client.query(`select pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => undefined);
        client.release();
      }
    },
    lockUntilCommit: async (trx, lock) => void (await sql`select pg_advisory_xact_lock(${lock})`.execute(trx)),
    ping: async () => void (await sql`select 1`.execute(db)),
    poolStats: () => ({ max: pool.options.max ?? 10, open: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: async () => {
      await db.destroy();
    },
  };
}
