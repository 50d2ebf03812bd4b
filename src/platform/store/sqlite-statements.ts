import type { Database, Statement } from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

// SQLite: the prepared statements of one connection, kept. Kysely prepares every statement anew,
// and SQLite's prepare is a large part of a simple query's cost: the same SQL text (Kysely's
// parameterised output) reuses its prepared statement. Rows are read as arrays and made into
// objects here, cheaper than better-sqlite3 building each object (docs/benchmarks.md).

const MAX_STATEMENTS = 1000;

/** The connection as Kysely's SqliteDialect takes it, with its statements cached by SQL text. */
export function withStatementCache(database: Database): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => database.close(),
    prepare(text: string) {
      let statement = cache.get(text);
      if (!statement) {
        if (cache.size >= MAX_STATEMENTS) cache.clear();
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
function rollbackIfOpen(database: Database): SqliteStatement {
  const rollback = database.prepare('rollback');
  return {
    reader: false,
    all: () => [],
    run: () => (database.inTransaction ? rollback.run() : { changes: 0, lastInsertRowid: 0 }),
    *iterate() {},
  };
}

function rowsAsObjects(statement: Statement): SqliteStatement {
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
