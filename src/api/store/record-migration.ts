import { sql } from 'kysely';
import type { CollectionModel } from '../../contract/collections.js';
import type { On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';
import { anyTable } from './records.js';

// The record tables as a schema migration reads and rewrites them (api/schema-evolution.ts): every
// row in id order, in batches, and a batch of new documents written back in one statement each.

/** A stored document as a migration reads it. */
export interface StoredDoc {
  id: string;
  doc: string;
}

/** A row's new document and the mirror columns it implies (records.ts's rule, from the new document). */
export interface RewrittenRow {
  id: string;
  doc: string;
  columns: Record<string, unknown>;
}

export async function countRecordRows(on: On, model: CollectionModel): Promise<number> {
  const row = (await anyTable(on).selectFrom(model.table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirst()) as { n: number | string | bigint } | undefined;
  return Number(row?.n ?? 0);
}

/** Up to `limit` rows after `afterId`, in id order: a scan that a crash can resume from its last id. */
export async function readDocBatch(on: On, model: CollectionModel, afterId: string, limit: number): Promise<StoredDoc[]> {
  return (await anyTable(on).selectFrom(model.table).select(['id', 'doc']).where('id', '>', afterId).orderBy('id').limit(limit).execute()) as StoredDoc[];
}

/** Parameters per statement: well under SQLite's 32,766 and PostgreSQL's 65,535. */
const MAX_PARAMETERS = 20_000;

/**
 * Writes new documents (and the mirror columns named, those in place) over these rows: a new version and `updated_at`,
 * so ETags and `updated_at` filters see the change. Many rows per statement, as
 * `update … from (values …)`, which both engines run.
 */
export async function rewriteRecordRows(tx: WriteTx, model: CollectionModel, rows: RewrittenRow[], now: string, mirrorColumns: readonly string[]): Promise<void> {
  const db = anyTable(tx);
  const written = model.columns.filter((c) => mirrorColumns.includes(c.column));
  const mirrors = written.map((c) => c.column);
  const perStatement = Math.max(1, Math.min(1000, Math.floor(MAX_PARAMETERS / (2 + mirrors.length))));
  // VALUES columns are column1, column2, … on both engines; a number travels as text to PostgreSQL,
  // so it is cast (numeric is assigned to integer and real columns alike).
  const assignments = [
    sql`doc = v.column2`,
    sql`version = version + 1`,
    sql`updated_at = ${now}`,
    ...written.map((c, i) =>
      c.kind === 'text' ? sql`${sql.ref(c.column)} = v.${sql.raw(`column${i + 3}`)}` : sql`${sql.ref(c.column)} = cast(v.${sql.raw(`column${i + 3}`)} as numeric)`,
    ),
  ];
  for (let i = 0; i < rows.length; i += perStatement) {
    const values = rows.slice(i, i + perStatement).map((r) => sql`(${sql.join([r.id, r.doc, ...mirrors.map((m) => r.columns[m] ?? null)])})`);
    await sql`update ${sql.table(model.table)} set ${sql.join(assignments)} from (values ${sql.join(values)}) as v where ${sql.ref(`${model.table}.id`)} = v.column1`.execute(db);
  }
}
