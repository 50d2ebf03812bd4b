import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';
import { compiledOnce } from './sql.js';

// A hot insert with a fixed set of columns (token issuance): Kysely builds and compiles the
// statement once per database, and each call only binds the row's values in column order.

type Row<T extends keyof Database> = { [C in keyof Database[T]]: unknown };

export function preparedInsert<T extends keyof Database>(table: T, columns: readonly (keyof Database[T] & string)[]) {
  const name = `insert:${table}:${columns.join(',')}`;
  return async (db: Kysely<Database> | Transaction<Database>, row: Row<T>): Promise<void> => {
    const query = compiledOnce(db, name, () => (db as Kysely<any>).insertInto(table).values(Object.fromEntries(columns.map((c) => [c, null]))).compile());
    await db.executeQuery({ ...query, parameters: columns.map((c) => row[c] ?? null) });
  };
}
