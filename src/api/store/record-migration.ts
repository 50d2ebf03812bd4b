import { CompiledQuery, sql } from 'kysely';
import type { CollectionModel, FieldColumn } from '../../contract/collections.js';
import type { On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';
import { anyTable } from './records.js';

// The record tables as a schema migration reads and rewrites them (api/schema-evolution.ts): every
// row in id order, in batches, and a batch of new documents written back in one statement each.

/** A stored document as a migration reads it. */
export interface StoredDoc {
  id: string;
  doc: string;
  version: number;
}

/** A row's new document and the mirror columns it implies (records.ts's rule, from the new document). */
export interface RewrittenRow {
  id: string;
  /** The version it was read at: a row changed since (a write by a server) is not overwritten. */
  version: number;
  doc: string;
  columns: Record<string, unknown>;
}

export async function countRecordRows(on: On, model: CollectionModel): Promise<number> {
  const row = (await anyTable(on).selectFrom(model.table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirst()) as { n: number | string | bigint } | undefined;
  return Number(row?.n ?? 0);
}

/** Up to `limit` rows after `afterId`, in id order: a scan that a crash can resume from its last id. */
export async function readDocBatch(on: On, model: CollectionModel, afterId: string, limit: number): Promise<StoredDoc[]> {
  return (await anyTable(on).selectFrom(model.table).select(['id', 'doc', 'version']).where('id', '>', afterId).orderBy('id').limit(limit).execute()) as StoredDoc[];
}

/** Parameters per statement: well under SQLite's 32,766 and PostgreSQL's 65,535. */
const MAX_PARAMETERS = 20_000;

/** The rewrite statement per dialect and shape (table, mirror columns, rows): compiled once, run with each batch's values. */
const rewrites = new WeakMap<object, Map<string, CompiledQuery>>();

function rewriteStatement(tx: WriteTx, model: CollectionModel, written: FieldColumn[], rows: number): CompiledQuery {
  const db = anyTable(tx);
  const adapter = db.getExecutor().adapter;
  let cache = rewrites.get(adapter);
  if (!cache) rewrites.set(adapter, (cache = new Map()));
  const key = `${model.table}\n${written.map((c) => c.column).join(',')}\n${rows}`;
  let query = cache.get(key);
  if (!query) {
    // VALUES columns are column1, column2, … on both engines; a number travels as text to
    // PostgreSQL, so it is cast (numeric is assigned to integer and real columns alike).
    const assignments = [
      sql`doc = v.column2`,
      sql`version = version + 1`,
      sql`updated_at = ${''}`,
      ...written.map((c, i) =>
        c.kind === 'text' ? sql`${sql.ref(c.column)} = v.${sql.raw(`column${i + 4}`)}` : sql`${sql.ref(c.column)} = cast(v.${sql.raw(`column${i + 4}`)} as numeric)`,
      ),
    ];
    const row = sql`(${sql.join(Array.from({ length: 3 + written.length }, () => null))})`;
    const values = sql.join(Array.from({ length: rows }, () => row));
    query = sql`update ${sql.table(model.table)} set ${sql.join(assignments)} from (values ${values}) as v
      where ${sql.ref(`${model.table}.id`)} = v.column1 and ${sql.ref(`${model.table}.version`)} = cast(v.column3 as integer)`.compile(db);
    cache.set(key, query);
  }
  return query;
}

/**
 * Writes new documents (and the mirror columns named, those in place) over these rows, each only
 * if still at the version it was read at (else RowsChanged, and the write rolls back): a new
 * version and `updated_at`, so ETags and `updated_at` filters see the change. Many rows per
 * statement, as `update … from (values …)`, which both engines run; the statement is compiled
 * once per shape (building it per batch cost more than running it).
 */
export async function rewriteRecordRows(tx: WriteTx, model: CollectionModel, rows: RewrittenRow[], now: string, mirrorColumns: readonly string[]): Promise<void> {
  const db = anyTable(tx);
  const written = model.columns.filter((c) => mirrorColumns.includes(c.column));
  const perStatement = Math.max(1, Math.min(1000, Math.floor(MAX_PARAMETERS / (3 + written.length))));
  let updated = 0;
  for (let i = 0; i < rows.length; i += perStatement) {
    const part = rows.slice(i, i + perStatement);
    const parameters: unknown[] = [now];
    for (const r of part) {
      parameters.push(r.id, r.doc, r.version);
      for (const c of written) parameters.push(r.columns[c.column] ?? null);
    }
    const result = await db.executeQuery(CompiledQuery.raw(rewriteStatement(tx, model, written, part.length).sql, parameters));
    updated += Number(result.numAffectedRows ?? 0n);
  }
  // A row written since it was read (a server still running): the batch is read and rewritten again.
  if (updated !== rows.length) throw new RowsChanged();
}

/** Rows of a batch changed between its read and its rewrite: the caller rolls back and reads the batch again. */
export class RowsChanged extends Error {
  constructor() {
    super('records changed while they were migrated');
  }
}
