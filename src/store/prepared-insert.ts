import type { CompiledQuery, Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

// A hot insert with a fixed set of columns (token issuance): Kysely builds and compiles the
// statement once per dialect, and each call only binds the row's values in column order.

type Row<T extends keyof Database> = { [C in keyof Database[T]]: unknown };

export function preparedInsert<T extends keyof Database>(table: T, columns: readonly (keyof Database[T] & string)[]) {
  // Keyed by the dialect's adapter: a transaction shares it with the database it came from.
  const compiled = new WeakMap<object, CompiledQuery>();
  return async (db: Kysely<Database> | Transaction<Database>, row: Row<T>): Promise<void> => {
    const adapter = db.getExecutor().adapter;
    let query = compiled.get(adapter);
    if (!query) {
      const sample = Object.fromEntries(columns.map((c) => [c, null]));
      query = (db as Kysely<any>).insertInto(table).values(sample).compile();
      compiled.set(adapter, query);
    }
    await db.executeQuery({ ...query, parameters: columns.map((c) => row[c] ?? null) });
  };
}
