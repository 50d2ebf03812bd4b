import { CompiledQuery, sql, type Kysely, type RawBuilder } from 'kysely';
import type { CollectionModel } from '../../contract/collections.js';
import { compiledOnce, count, rowsOf, sqlOf, statementCache, type On } from '../../platform/store/sql.js';
import { literalLimit, type Store } from '../../platform/store/dialect.js';
import type { WriteTx } from '../../platform/store/write-path.js';
import { deleteAttachmentsOf } from './attachments.js';
import { isSystemSortField } from '../../platform/config/record-fields.js';

// Owner of the collection tables (r_<collection>), the tombstones of deleted records and the
// idempotency keys of creates. What a record means to a caller (access, validation) is
// records.ts's business; this module only reads and writes rows.

/** A row of a collection's own table; x_<field> columns mirror filter and sort fields. */
export interface RecordRow {
  id: string;
  owner: string;
  parent_id: string | null;
  version: number;
  created_at: string;
  updated_at: string;
  doc: string;
  [column: string]: unknown;
}

/** The columns a record is rendered from (the x_<field> mirrors are for filtering and sorting only). */
export const RECORD_COLUMNS = ['id', 'owner', 'parent_id', 'version', 'created_at', 'updated_at', 'doc'] as const;

const any = (on: On) => sqlOf(on) as unknown as Kysely<any>;

/** Reading one record by id is the hottest query: compiled once per table. */
export async function readRecordRow(on: On, model: CollectionModel, id: string): Promise<RecordRow | null> {
  const db = any(on);
  const query = compiledOnce(sqlOf(on), `record:${model.table}`, () => db.selectFrom(model.table).select(RECORD_COLUMNS).where('id', '=', '').compile());
  return (await rowsOf<RecordRow>(on, { ...query, parameters: [id] }))[0] ?? null;
}

/** When the record with this id was deleted (epoch ms), or null. */
export async function findTombstone(on: On, collection: string, id: string): Promise<number | null> {
  const tomb = await sqlOf(on).selectFrom('tombstones').select('deleted_at').where('collection', '=', collection).where('id', '=', id).executeTakeFirst();
  return tomb ? Number(tomb.deleted_at) : null;
}

/** A filter value as the query parser gives it (booleans are stored as 0/1 on both engines). */
export type FilterValue = string | number | boolean;

export type Operator = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'prefix' | 'contains' | 'null';

/** One filter: `values` holds one value, or the list of `in`, or the boolean of `null`. */
export interface Condition {
  field: string;
  op: Operator;
  values: FilterValue[];
}

export interface SortKey {
  field: string;
  order: 'asc' | 'desc';
}

export interface RowQuery {
  /** Only this owner's rows (access: owner collections), or every owner's. */
  owner: string | null;
  /** The parent from a nested URL (`/zoos/{id}/animals`). */
  parentId: string | null;
  conditions: Condition[];
  /** Sort keys without the tie-breaker: `id` (same direction as the last key) is always added. */
  sort: SortKey[];
  /** Words that must all occur in the collection's search fields; ranked by relevance when `rank`. */
  search: string[] | null;
  rank: boolean;
  /** Keyset paging: the values of the sort keys and the id of the last row seen. */
  after: unknown[] | null;
  limit: number;
  offset: number;
  /** Count every matching row (X-Total-Count); false skips the count. */
  count: boolean;
}

/** The column a field is stored in: system fields as themselves, the parent field as parent_id, the rest x_<field>. */
export function columnOfField(model: CollectionModel, field: string): string {
  if (isSystemSortField(field)) return field;
  if (field === model.parent?.field) return 'parent_id';
  return `x_${field}`;
}

/** The sort keys with the id added as the last key (the order of keyset values). */
export function fullSort(sort: SortKey[]): SortKey[] {
  const keys = sort.filter((k) => k.field !== 'id');
  const last = sort.find((k) => k.field === 'id')?.order ?? sort[sort.length - 1]?.order ?? 'asc';
  return [...keys, { field: 'id', order: last }];
}

/** The values a cursor carries for a row: its sort keys' columns and its id. */
export function keysetValues(model: CollectionModel, sort: SortKey[], row: RecordRow): unknown[] {
  return fullSort(sort).map((k) => row[columnOfField(model, k.field)] ?? null);
}

/**
 * SQLite, `access: owner` collections: a record's row in the search index is numbered by its
 * owner's number (table search_owners) times 2^36 plus the record's rowid, so one owner's records
 * are one rowid range (syncSearch in collection-tables.ts builds it; buildList below reads it).
 */
export const SEARCH_OWNER_SHIFT = 36;
export const SEARCH_ROWID_MASK = 2 ** SEARCH_OWNER_SHIFT - 1;
/** Owner numbers stay below 2^27, so that a search rowid stays below 2^63. */
export const SEARCH_MAX_OWNERS = 2 ** 27;
/** The settings marker's prefix of that layout (a search index built before it is rebuilt). */
export const SEARCH_LAYOUT_OWNER_RANGES = 'owner-ranges';

/** Whether the collection's search index is laid out in owner ranges. */
export const searchInOwnerRanges = (store: Store, model: CollectionModel) => store.engine === 'sqlite' && model.access === 'owner';

/** The first search-index rowid of an owner's range (`subject`: an SQL expression of the owner; NULL when it has no number yet). */
export const ownerRangeStart = (subject: RawBuilder<unknown>) => sql`((select num from search_owners where subject = ${subject}) << ${sql.lit(SEARCH_OWNER_SHIFT)})`;

/** Lower-cases ASCII letters only: what SQLite's lower() does, so both engines match the same rows. */
const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** The smallest string above every string that starts with `prefix`, in binary order (null: no bound). */
function prefixBound(prefix: string): string | null {
  const chars = [...prefix];
  while (chars.length) {
    const last = chars.pop()!.codePointAt(0)!;
    if (last < 0x10ffff) return chars.join('') + String.fromCodePoint(last === 0xd7ff ? 0xe000 : last + 1);
  }
  return null;
}

const dbValue = (v: unknown) => (typeof v === 'boolean' ? Number(v) : v);

/**
 * A list statement is built once per shape and compiled by Kysely; each value is a numbered
 * slot, so any later request of the same shape binds its own values without building anything.
 */
interface Plan {
  sql: string;
  /** For each parameter of the compiled statement: the index of its value. */
  slots: number[];
}

const SLOT = '\u0000slot:';

function planOf(compiled: CompiledQuery): Plan | null {
  const slots: number[] = [];
  for (const p of compiled.parameters) {
    if (typeof p !== 'string' || !p.startsWith(SLOT)) return null;
    slots.push(Number(p.slice(SLOT.length)));
  }
  return { sql: compiled.sql, slots };
}

async function runPlan<R>(on: On, plan: Plan, values: unknown[]): Promise<R[]> {
  return rowsOf<R>(on, CompiledQuery.raw(plan.sql, plan.slots.map((i) => values[i])));
}

const MAX_LIST_PLANS = 500;

/** The values of a query in slot order, and the shape that says which statement they fit. */
function valuesAndShape(store: Store, model: CollectionModel, q: RowQuery) {
  const values: unknown[] = [];
  const shape: string[] = [model.table, store.engine];
  const slot = (v: unknown) => values.push(dbValue(v)) - 1;
  const slots = {
    owner: q.owner !== null ? slot(q.owner) : -1,
    parent: q.parentId !== null ? slot(q.parentId) : -1,
    conditions: q.conditions.map((c) => {
      shape.push(`${c.field}[${c.op}]${c.op === 'in' ? c.values.length : ''}${c.op === 'null' ? String(c.values[0]) : ''}`);
      if (c.op === 'null') return [];
      if (c.op === 'prefix') {
        const bound = prefixBound(String(c.values[0]));
        shape.push(bound === null ? 'unbounded' : 'bounded');
        return bound === null ? [slot(c.values[0])] : [slot(c.values[0]), slot(bound)];
      }
      if (c.op === 'contains') return [slot(asciiLower(String(c.values[0])))];
      return c.values.map(slot);
    }),
    search: q.search ? slot(store.engine === 'sqlite' ? q.search.map((w) => `"${w.replace(/"/g, '""')}"`).join(' ') : q.search.join(' ')) : -1,
    after: q.after ? q.after.map((v) => (v === null ? -1 : slot(v))) : null,
    offset: -1,
  };
  slots.offset = slot(q.offset);
  const sort = fullSort(q.sort);
  // The page size is written into the statement, not bound (see LimitAsLiteral in dialect.ts):
  // one statement per size, at most api.maxLimit of them.
  shape.push(`limit:${q.limit}`);
  shape.push(`owner:${q.owner !== null}`, `parent:${q.parentId !== null}`, `search:${q.search !== null}:${q.rank}`);
  shape.push(`sort:${sort.map((k) => `${k.field} ${k.order}`).join(',')}`);
  if (slots.after) shape.push(`after:${slots.after.map((i) => (i < 0 ? 'null' : 'v')).join(',')}`);
  return { values, slots, sort, shape: shape.join('|') };
}

type Slots = ReturnType<typeof valuesAndShape>['slots'];

function limitValue(limit: number): number {
  const literal = literalLimit(limit);
  if (literal === null) throw new Error(`a page size must be a whole number, not ${limit}`);
  return literal;
}

function buildList(store: Store, db: Kysely<any>, model: CollectionModel, q: RowQuery, slots: Slots, sort: SortKey[]) {
  const p = (i: number) => sql`${SLOT + i}`;
  const col = (field: string) => sql.ref(`${model.table}.${columnOfField(model, field)}`);
  const nullable = (field: string) => !isSystemSortField(field);
  const where: RawBuilder<unknown>[] = [];
  if (slots.owner >= 0) where.push(sql`${sql.ref(`${model.table}.owner`)} = ${p(slots.owner)}`);
  if (slots.parent >= 0) where.push(sql`${sql.ref(`${model.table}.parent_id`)} = ${p(slots.parent)}`);
  // SQLite: with an equality filter, its index (led by owner) is the one to seek; a range on
  // another field must not win the planner's choice (it would scan the range and sort) — a unary
  // + keeps that column's index out of the choice, whatever the statistics say.
  const seekable = q.parentId !== null || q.conditions.some((c) => c.op === 'eq' || c.op === 'in');
  const RANGES = new Set(['ne', 'gt', 'gte', 'lt', 'lte', 'prefix']);
  // The count may seek a compound index (the config's `indexes`) that holds the range field after
  // the equality fields: there the range narrows the index walk instead of testing each entry.
  const equalities = new Set(q.conditions.filter((c) => c.op === 'eq').map((c) => c.field));
  const compound = (field: string) =>
    model.indexes.some((fields) => {
      const at = fields.indexOf(field);
      return at > 0 && fields.slice(0, at).every((f) => equalities.has(f));
    });
  const condition = (c: Condition, v: number[], column: RawBuilder<unknown>): RawBuilder<unknown> => {
    switch (c.op) {
      case 'eq': return sql`${column} = ${p(v[0])}`;
      case 'ne': return sql`${column} <> ${p(v[0])}`;
      case 'gt': return sql`${column} > ${p(v[0])}`;
      case 'gte': return sql`${column} >= ${p(v[0])}`;
      case 'lt': return sql`${column} < ${p(v[0])}`;
      case 'lte': return sql`${column} <= ${p(v[0])}`;
      case 'in': return sql`${column} in (${sql.join(v.map(p))})`;
      case 'null': return c.values[0] ? sql`${column} is null` : sql`${column} is not null`;
      // Served by the field's index: the binary-order range of strings that start with the prefix.
      case 'prefix': return v.length === 2 ? sql`${column} >= ${p(v[0])} and ${column} < ${p(v[1])}` : sql`${column} >= ${p(v[0])}`;
      // A substring, taken literally, case-insensitive for ASCII letters on both engines (SQLite's
      // lower() folds only those). A position, not LIKE: SQLite prepares a statement whose LIKE
      // pattern is a parameter again at every run (it might seek an index by the pattern's
      // prefix): 10.7 vs 1.5 µs per run of a small statement.
      case 'contains':
        return store.engine === 'sqlite'
          ? sql`instr(lower(${column}), ${p(v[0])}) > 0`
          : sql`strpos(translate(${column}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), ${p(v[0])}) > 0`;
    }
  };
  const countWhere = [...where];
  q.conditions.forEach((c, i) => {
    const hinted = store.engine === 'sqlite' && seekable && RANGES.has(c.op);
    where.push(condition(c, slots.conditions[i], hinted ? sql`+${col(c.field)}` : col(c.field)));
    countWhere.push(condition(c, slots.conditions[i], hinted && !compound(c.field) ? sql`+${col(c.field)}` : col(c.field)));
  });
  const fts = `${model.table}_fts`;
  const ranges = slots.search >= 0 && searchInOwnerRanges(store, model);
  // The record a search index row stands for, and (owner collections) the caller's range of rows.
  const ftsRowid = sql.ref(`${fts}.rowid`);
  const recordRowid = ranges ? sql`(${ftsRowid} & ${sql.lit(SEARCH_ROWID_MASK)})` : ftsRowid;
  const searchWhere: RawBuilder<unknown>[] = [];
  if (slots.search >= 0) {
    searchWhere.push(
      store.engine === 'sqlite'
        ? sql`${sql.ref(fts)} match ${p(slots.search)}`
        : sql`${sql.ref(`${model.table}.search_vector`)} @@ plainto_tsquery('simple', ${p(slots.search)})`,
    );
    if (ranges && slots.owner >= 0) {
      const start = ownerRangeStart(p(slots.owner));
      searchWhere.push(sql`${ftsRowid} between ${start} and ${start} + ${sql.lit(SEARCH_ROWID_MASK)}`);
    }
    where.push(...searchWhere);
    countWhere.push(...searchWhere);
  }
  if (slots.after) where.push(keysetAfter(sort, slots.after, p, col, nullable));

  const whereSql = (parts: RawBuilder<unknown>[]) => (parts.length ? sql`where ${sql.join(parts, sql` and `)}` : sql``);
  const from =
    slots.search >= 0 && store.engine === 'sqlite'
      ? sql`${sql.table(model.table)} join ${sql.table(fts)} on ${sql.ref(`${model.table}.rowid`)} = ${recordRowid}`
      : sql`${sql.table(model.table)}`;
  const selected = [...new Set([...RECORD_COLUMNS, ...sort.map((k) => columnOfField(model, k.field))])].map((c) => sql.ref(`${model.table}.${c}`));
  const order: RawBuilder<unknown>[] = [];
  const ranked = q.rank && slots.search >= 0;
  const limit = sql.lit(limitValue(q.limit));
  // SQLite ranks by bm25; equal scores come in the order of the search index's rows (the order
  // the records were created in): a fixed order that needs no record read to sort by.
  if (ranked && store.engine === 'sqlite') order.push(sql`${sql.ref(`${fts}.rank`)}`, ftsRowid);
  else {
    if (ranked) order.push(sql`ts_rank(${sql.ref(`${model.table}.search_vector`)}, plainto_tsquery('simple', ${p(slots.search)})) desc`);
    // NULLs first ascending, last descending, on both engines. The system columns are never NULL: a
    // plain ORDER BY lets PostgreSQL walk their index (a NULLS clause unlike its default would sort).
    for (const k of sort)
      order.push(nullable(k.field) ? sql`${col(k.field)} ${sql.raw(k.order === 'asc' ? 'asc nulls first' : 'desc nulls last')}` : sql`${col(k.field)} ${sql.raw(k.order)}`);
  }
  let page = sql`select ${sql.join(selected)} from ${from} ${whereSql(where)} order by ${sql.join(order)} limit ${limit} offset ${p(slots.offset)}`;
  let total = sql`select count(*) as n from ${from} ${whereSql(countWhere)}`;
  // Only the search narrows an owner's records: its index alone finds, ranks and counts them, and
  // the page's records are read afterwards (20 reads, not one per match).
  if (ranges && slots.owner >= 0 && slots.parent < 0 && q.conditions.length === 0) {
    total = sql`select count(*) as n from ${sql.table(fts)} ${whereSql(searchWhere)}`;
    if (ranked)
      page = sql`with p as (select ${ftsRowid} as r, ${sql.ref(`${fts}.rank`)} as k from ${sql.table(fts)} ${whereSql(searchWhere)}
          order by k, r limit ${limit} offset ${p(slots.offset)})
        select ${sql.join(selected)} from p join ${sql.table(model.table)} on ${sql.ref(`${model.table}.rowid`)} = (p.r & ${sql.lit(SEARCH_ROWID_MASK)})
        where ${sql.ref(`${model.table}.owner`)} = ${p(slots.owner)} order by p.k, p.r`;
  }
  return { page: page.compile(db), count: total.compile(db) };
}

/**
 * Rows after the cursor's position in the sort order (NULLs first ascending, last descending):
 * for each key, the earlier keys equal and this one beyond. `slots` holds -1 for a NULL value.
 */
function keysetAfter(
  sort: SortKey[],
  slots: number[],
  p: (i: number) => RawBuilder<unknown>,
  col: (field: string) => RawBuilder<unknown>,
  nullable: (field: string) => boolean,
): RawBuilder<unknown> {
  const allNonNull = slots.every((i) => i >= 0);
  const sameOrder = sort.every((k) => k.order === sort[0].order);
  // The fast path every index serves: one row-value comparison.
  if (allNonNull && sameOrder && (sort[0].order === 'asc' || sort.every((k) => !nullable(k.field))))
    return sql`(${sql.join(sort.map((k) => col(k.field)))}) ${sql.raw(sort[0].order === 'asc' ? '>' : '<')} (${sql.join(slots.map(p))})`;
  const alternatives: RawBuilder<unknown>[] = [];
  sort.forEach((k, i) => {
    const equal = sort.slice(0, i).map((e, j) => (slots[j] < 0 ? sql`${col(e.field)} is null` : sql`${col(e.field)} = ${p(slots[j])}`));
    let beyond: RawBuilder<unknown> | null;
    const c = col(k.field);
    if (k.order === 'asc') beyond = slots[i] < 0 ? sql`${c} is not null` : sql`${c} > ${p(slots[i])}`;
    else beyond = slots[i] < 0 ? null : nullable(k.field) ? sql`(${c} < ${p(slots[i])} or ${c} is null)` : sql`${c} < ${p(slots[i])}`;
    if (beyond) alternatives.push(sql`(${sql.join([...equal, beyond], sql` and `)})`);
  });
  return alternatives.length ? sql`(${sql.join(alternatives, sql` or `)})` : sql`1 = 0`;
}

/** A page of rows and the total that match (the total of a short first page is told without counting; null when not counted). */
export async function listRecordRows(store: Store, model: CollectionModel, q: RowQuery): Promise<{ rows: RecordRow[]; total: number | null }> {
  const db = any(store);
  const { values, slots, sort, shape } = valuesAndShape(store, model, q);
  const cache = statementCache(sqlOf(store));
  let plans = cache.get(`list:${shape}`) as { page: Plan; count: Plan } | undefined;
  if (!plans) {
    const built = buildList(store, db, model, q, slots, sort);
    const page = planOf(built.page);
    const count = planOf(built.count);
    if (!page || !count) throw new Error(`list statement with a value outside its slots: ${built.page.sql}`);
    plans = { page, count };
    if (cache.size >= MAX_LIST_PLANS) cache.clear();
    cache.set(`list:${shape}`, plans);
  }
  const rows = await runPlan<RecordRow>(store, plans.page, values);
  if (!q.count) return { rows, total: null };
  if (!q.after && rows.length < q.limit && (rows.length > 0 || q.offset === 0)) return { rows, total: q.offset + rows.length };
  const counted = (await runPlan<{ n: number | string }>(store, plans.count, values))[0];
  return { rows, total: Number(counted?.n ?? 0) };
}

/**
 * The children of these parents (expand=<child>): at most `perParent` each, the first by id, in
 * one statement; only `owner`'s when not null.
 */
export async function childRowsOf(store: Store, child: CollectionModel, parentIds: string[], owner: string | null, perParent: number): Promise<RecordRow[]> {
  if (parentIds.length === 0) return [];
  const db = any(store);
  const columns = sql.join(RECORD_COLUMNS.map((c) => sql.ref(c)));
  const ownerClause = owner === null ? sql`` : sql`and owner = ${owner}`;
  const query = sql<RecordRow>`select ${columns} from (
      select ${columns}, row_number() over (partition by parent_id order by id) as n
      from ${sql.table(child.table)} where parent_id in (${sql.join(parentIds)}) ${ownerClause}
    ) as ranked where n <= ${perParent} order by parent_id, id`;
  return (await query.execute(db)).rows;
}

/** The rows with these ids (expand=parent), in no particular order. */
export async function recordRowsByIds(store: Store, model: CollectionModel, ids: string[]): Promise<RecordRow[]> {
  if (ids.length === 0) return [];
  return (await any(store).selectFrom(model.table).select(RECORD_COLUMNS).where('id', 'in', ids).execute()) as RecordRow[];
}

export async function insertRecordRow(tx: WriteTx, model: CollectionModel, row: RecordRow): Promise<void> {
  await any(tx).insertInto(model.table).values(row).execute();
}

/** Writes the new version of a row; false when the stored version is no longer `expectedVersion`. */
export async function updateRecordRow(tx: WriteTx, model: CollectionModel, row: RecordRow, expectedVersion: number): Promise<boolean> {
  const { id, owner: _owner, created_at: _created, ...set } = row;
  return count(await any(tx).updateTable(model.table).set(set).where('id', '=', id).where('version', '=', expectedVersion).executeTakeFirst()) === 1;
}

/**
 * Deletes a record (if still at `expectedVersion`), its children in `children` and every
 * attachment of both, leaving tombstones so their URLs answer 410. False when the version moved.
 */
/** A record removed with its parent: which collection, which id, whose. */
export interface RemovedChild {
  collection: CollectionModel;
  id: string;
  owner: string;
}

/**
 * Deletes a record, its children and their attachments, leaving tombstones. Returns the children
 * removed (each is a `record.deleted` event), or null when the record changed meanwhile.
 */
export async function deleteRecordTree(tx: WriteTx, model: CollectionModel, row: RecordRow, children: CollectionModel[], now: number): Promise<RemovedChild[] | null> {
  const db = any(tx);
  const tombs = [{ collection: model.name, id: row.id, deleted_at: now }];
  const removed: RemovedChild[] = [];
  for (const child of children) {
    const rows = (await db.selectFrom(child.table).select(['id', 'owner']).where('parent_id', '=', row.id).orderBy('id').execute()) as { id: string; owner: string }[];
    for (const c of rows) {
      tombs.push({ collection: child.name, id: c.id, deleted_at: now });
      removed.push({ collection: child, id: c.id, owner: c.owner });
    }
    await db.deleteFrom(child.table).where('parent_id', '=', row.id).execute();
    await deleteAttachmentsOf(tx, child.name, rows.map((c) => c.id));
  }
  await deleteAttachmentsOf(tx, model.name, [row.id]);
  const gone = count(await db.deleteFrom(model.table).where('id', '=', row.id).where('version', '=', row.version).executeTakeFirst());
  if (gone !== 1) return null;
  for (let i = 0; i < tombs.length; i += 200) await sqlOf(tx).insertInto('tombstones').values(tombs.slice(i, i + 200)).execute();
  return removed;
}

export interface IdempotencyKey {
  subject: string;
  key: string;
  collection: string;
  bodyHash: string;
  recordId: string;
}

export async function findIdempotencyKey(on: On, subject: string, key: string): Promise<IdempotencyKey | null> {
  const row = await sqlOf(on).selectFrom('idempotency_keys').selectAll().where('subject', '=', subject).where('key', '=', key).executeTakeFirst();
  return row ? { subject: row.subject, key: row.key, collection: row.collection, bodyHash: row.body_hash, recordId: row.record_id } : null;
}

export async function insertIdempotencyKey(tx: WriteTx, k: IdempotencyKey, now: number): Promise<void> {
  await sqlOf(tx)
    .insertInto('idempotency_keys')
    .values({ subject: k.subject, key: k.key, collection: k.collection, body_hash: k.bodyHash, record_id: k.recordId, created_at: now })
    .execute();
}

export async function purgeIdempotencyKeys(on: On, before: number): Promise<number> {
  return count(await sqlOf(on).deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst());
}

/**
 * Most parameters one statement may bind: SQLite's default SQLITE_MAX_VARIABLE_NUMBER (32766
 * since 3.32; PostgreSQL allows 65535). Multi-row inserts stay well below it.
 */
const MAX_PARAMETERS = 32_766;
/** Rows per multi-row insert at most (beyond this a larger statement saves nothing measurable). */
const MAX_ROWS_PER_INSERT = 256;

/**
 * Inserts many rows of one collection (a chunk of a bulk job): multi-row INSERT statements of
 * 2^k rows, each built and compiled by Kysely once per table and size, so a chunk of any length
 * costs at most log2(256) + ⌈n / 256⌉ statements and the statements remembered stay few.
 */
export async function insertRecordRows(tx: WriteTx, model: CollectionModel, rows: RecordRow[]): Promise<void> {
  if (rows.length === 0) return;
  const db = any(tx);
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
