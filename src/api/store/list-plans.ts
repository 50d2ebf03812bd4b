import { CompiledQuery, sql, type Kysely, type RawBuilder } from 'kysely';
import type { CollectionModel } from '../../contract/collections.js';
import { rowsOf, sqlOf, statementCache } from '../../platform/store/sql.js';
import { literalLimit } from '../../platform/store/limit-literal.js';
import type { Store } from '../../platform/store/store.js';
import { isSystemSortField } from '../../platform/config/record-fields.js';
import { anyTable, columnOfField, RECORD_COLUMNS, type RecordRow } from './records.js';
import { OPERATORS, type Condition } from './operators.js';
import { searchIndexOf } from './search-index.js';

// The list plans: a list query (filters, sort, search, keyset or offset paging) compiled into a
// page statement and a count statement, once per shape, then run with each request's values.
// The filter operators' SQL comes from operators.ts, the search's from search-index.ts.

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

async function runPlan<R>(on: Store, plan: Plan, values: unknown[]): Promise<R[]> {
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
      const operator = OPERATORS[c.op];
      const bound = operator.bind(c.values).map(slot);
      // A flag binds nothing: its value is in the statement. Others: how many values they bind.
      shape.push(`${c.field}[${c.op}]${operator.arity === 'flag' ? String(c.values[0]) : bound.length}`);
      return bound;
    }),
    search: q.search ? slot(searchIndexOf(store).terms(q.search)) : -1,
    after: q.after ? q.after.map((v) => (v === null ? -1 : slot(v))) : null,
    offset: -1,
  };
  slots.offset = slot(q.offset);
  const sort = fullSort(q.sort);
  // The page size is written into the statement, not bound (see limit-literal.ts): one statement
  // per size, at most api.maxLimit of them.
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
  // With an equality filter, its index (led by owner) is the one to seek; a range on another field
  // must not win the planner's choice (it would scan the range and sort): the Store keeps that
  // column's index out of the choice where the engine's planner takes such a hint (SQLite).
  const seekable = q.parentId !== null || q.conditions.some((c) => OPERATORS[c.op].planner === 'equality' || OPERATORS[c.op].planner === 'set');
  // The count may seek a compound index (the config's `indexes`) that holds the range field after
  // the equality fields: there the range narrows the index walk instead of testing each entry.
  const equalities = new Set(q.conditions.filter((c) => OPERATORS[c.op].planner === 'equality').map((c) => c.field));
  const compound = (field: string) =>
    model.indexes.some((fields) => {
      const at = fields.indexOf(field);
      return at > 0 && fields.slice(0, at).every((f) => equalities.has(f));
    });
  const countWhere = [...where];
  q.conditions.forEach((c, i) => {
    const operator = OPERATORS[c.op];
    const params = slots.conditions[i].map(p);
    const hinted = seekable && operator.planner === 'range';
    const column = col(c.field);
    where.push(operator.where(hinted ? store.withoutIndex(column) : column, params, c.values[0], store));
    countWhere.push(operator.where(hinted && !compound(c.field) ? store.withoutIndex(column) : column, params, c.values[0], store));
  });
  const search = searchIndexOf(store);
  const searching = slots.search >= 0;
  const searchWhere = searching ? search.where(model, p(slots.search), slots.owner >= 0 ? p(slots.owner) : null) : [];
  where.push(...searchWhere);
  countWhere.push(...searchWhere);
  if (slots.after) where.push(keysetAfter(sort, slots.after, p, col, nullable));

  const whereSql = (parts: RawBuilder<unknown>[]) => (parts.length ? sql`where ${sql.join(parts, sql` and `)}` : sql``);
  const from = searching ? search.from(model) : sql`${sql.table(model.table)}`;
  const selected = [...new Set([...RECORD_COLUMNS, ...sort.map((k) => columnOfField(model, k.field))])].map((c) => sql.ref(`${model.table}.${c}`));
  // NULLs first ascending, last descending, on both engines. The system columns are never NULL: a
  // plain ORDER BY lets PostgreSQL walk their index (a NULLS clause unlike its default would sort).
  const sortKeys = sort.map((k) =>
    nullable(k.field) ? sql`${col(k.field)} ${sql.raw(k.order === 'asc' ? 'asc nulls first' : 'desc nulls last')}` : sql`${col(k.field)} ${sql.raw(k.order)}`,
  );
  const ranked = q.rank && searching;
  const order = ranked ? search.rankOrder(model, p(slots.search), sortKeys) : sortKeys;
  const limit = sql.lit(limitValue(q.limit));
  let page = sql`select ${sql.join(selected)} from ${from} ${whereSql(where)} order by ${sql.join(order)} limit ${limit} offset ${p(slots.offset)}`;
  let total = sql`select count(*) as n from ${from} ${whereSql(countWhere)}`;
  if (searching && slots.owner >= 0 && slots.parent < 0 && q.conditions.length === 0) {
    const alone = search.alone(model, { where: searchWhere, selected, limit, offset: p(slots.offset), owner: p(slots.owner), ranked });
    if (alone) {
      total = alone.count;
      if (alone.page) page = alone.page;
    }
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
  const { values, slots, sort, shape } = valuesAndShape(store, model, q);
  const cache = statementCache(sqlOf(store));
  let plans = cache.get(`list:${shape}`) as { page: Plan; count: Plan } | undefined;
  if (!plans) {
    const built = buildList(store, anyTable(store), model, q, slots, sort);
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
