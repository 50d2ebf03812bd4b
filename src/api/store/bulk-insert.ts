import type { CollectionModel } from '../../contract/collections.js';
import { compiledOnce, sqlOf } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';
import { anyTable, RECORD_COLUMNS, type RecordRow } from './records.js';

// Many rows of one collection in few statements: a chunk of a bulk job (api/jobs.ts).

/**
 * Most parameters one statement may bind: SQLite's default SQLITE_MAX_VARIABLE_NUMBER (32766
 * since 3.32; PostgreSQL allows 65535). Multi-row inserts stay well below it.
 */
const MAX_PARAMETERS = 32_766;
/** Rows per multi-row insert at most (beyond this a larger statement saves nothing measurable). */
const MAX_ROWS_PER_INSERT = 256;

/**
 * Inserts many rows of one collection: multi-row INSERT statements of 2^k rows, each built and
 * compiled by Kysely once per table and size, so a chunk of any length costs at most
 * log2(256) + ⌈n / 256⌉ statements and the statements remembered stay few.
 */
export async function insertRecordRows(tx: WriteTx, model: CollectionModel, rows: RecordRow[]): Promise<void> {
  if (rows.length === 0) return;
  const db = anyTable(tx);
  const columns = [...RECORD_COLUMNS, ...model.columns.map((c) => c.column)];
  let most = 1;
  while (most * 2 <= MAX_ROWS_PER_INSERT && most * 2 * columns.length <= MAX_PARAMETERS) most *= 2;
  for (let start = 0; start < rows.length; ) {
    let size = most;
    while (size > rows.length - start) size /= 2;
    const query = compiledOnce(sqlOf(tx), `insert-rows:${model.table}:${size}:${columns.join(',')}`, () =>
      db
        .insertInto(model.table)
        .values(Array.from({ length: size }, () => Object.fromEntries(columns.map((c) => [c, null]))))
        .compile(),
    );
    const parameters: unknown[] = new Array(size * columns.length);
    let p = 0;
    for (let r = start; r < start + size; r++) {
      const row = rows[r];
      for (const c of columns) parameters[p++] = row[c] ?? null;
    }
    await db.executeQuery({ ...query, parameters });
    start += size;
  }
}
