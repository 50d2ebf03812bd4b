import { badRequest } from '../platform/http/errors.js';
import type { CollectionModel, FieldColumn } from '../contract/collections.js';
import { MAX_IN, OPERATORS, OPERATORS_OF_TYPE, type Condition, type FilterValue, type Operator } from './store/operators.js';
import type { SortKey } from './store/list-plans.js';
import { LIST_PARAMETER_NAMES } from './parameters.js';

// The list query language (docs/api.md, "Listing: the query language"): paging (limit/offset,
// page/per_page, after/before), sorting on several keys, filters with operators (operators.ts),
// full-text search, sparse fieldsets, related records and counting. Anything unknown or malformed
// is a 400 naming the parameter.

export type { FilterValue } from './store/operators.js';

export interface ListQuery extends RecordView {
  limit: number;
  offset: number;
  /** How the list pages, so Link headers answer in the same terms: keyset (`after`) unless offset or page was asked for. */
  paging: 'offset' | 'page' | 'cursor';
  /** The sort keys as asked (`id` is added by the store as the tie-breaker). */
  sort: SortKey[];
  /** Whether sortby was given (a search without it is ranked by relevance). */
  sorted: boolean;
  conditions: Condition[];
  /** The words of `q=`, or null. */
  search: string[] | null;
  /** `after=`: the opaque cursor as sent (checked and decoded by the cursor module). */
  after: string | null;
  /** `before=`: the same kind of cursor; the page is the one before that position, in the same order. */
  before: string | null;
  count: 'exact' | 'none';
}

export interface ListLimits {
  defaultLimit: number;
  maxLimit: number;
}

const MAX_SEARCH_WORDS = 20;

/** The operators a filter field takes (`eq` is the plain `<field>=<value>`; the OpenAPI document lists them too). */
export function operatorsOf(model: CollectionModel, field: string): readonly Operator[] {
  if (field === model.parent?.field) return OPERATORS_OF_TYPE.parent;
  return OPERATORS_OF_TYPE[columnOf(model, field)?.type.type ?? 'string'];
}

function columnOf(model: CollectionModel, field: string): FieldColumn | undefined {
  return model.columns.find((c) => c.field === field);
}

function single(name: string, value: unknown): string {
  if (Array.isArray(value)) throw badRequest('Repeated query parameter', { [name]: 'must be given once' });
  return String(value);
}

function integer(name: string, raw: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const range = `must be an integer from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}`;
  if (!/^\d+$/.test(raw)) throw badRequest('Invalid query parameter', { [name]: range });
  const n = Number(raw);
  if (n < min || n > max) throw badRequest('Invalid query parameter', { [name]: range });
  return n;
}

/** A `format: date-time` value as stored in its column: the UTC instant, so strings compare in time order. */
export function normalizeDateTime(value: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})$/.test(value)) return null;
  const time = Date.parse(value.replace(' ', 'T'));
  return Number.isFinite(time) ? new Date(time).toISOString() : null;
}

/** Parses one filter value by the field's type (field-types.ts); a value outside its enum is a 400 naming the parameter. */
export function filterValue(model: CollectionModel, field: string, raw: string, parameter = field): FilterValue {
  const column = columnOf(model, field);
  // The parent field has no mirror column: it is an id, a string.
  const type = column?.type ?? { type: 'string', nullable: false, values: null };
  const bad = (message: string): never => {
    throw badRequest('Invalid filter value', { [parameter]: message });
  };
  let value: FilterValue;
  if (type.type === 'integer') {
    if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) bad('must be an integer');
    value = Number(raw);
  } else if (type.type === 'number') {
    value = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(value)) bad('must be a number');
  } else if (type.type === 'boolean') {
    if (raw !== 'true' && raw !== 'false') bad('must be true or false');
    value = raw === 'true';
  } else if (column?.format === 'date-time') {
    value = normalizeDateTime(raw) ?? bad('must be an RFC 3339 date-time, e.g. 2024-05-01T12:00:00Z');
  } else if (column?.format === 'date') {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(raw) || !Number.isFinite(Date.parse(raw))) bad('must be a date, e.g. 2024-05-01');
    value = raw;
  } else {
    value = raw;
  }
  if (type.values && !type.values.includes(value!)) bad(`must be one of ${type.values.map((v) => String(v)).join(', ')}`);
  return value!;
}

/** `<field>` or `<field>[<op>]` (brackets may arrive percent-encoded; the query parser decodes them). */
function splitKey(key: string): { field: string; op: string | null } | null {
  const m = /^([a-z][a-z0-9_]*)(?:\[([a-z]*)\])?$/.exec(key);
  return m ? { field: m[1], op: m[2] ?? null } : null;
}

/** A filter's value(s) as its operator takes them (operators.ts): one, a list, literal text or a flag. */
function parseCondition(model: CollectionModel, key: string, field: string, op: Operator, raw: string): Condition {
  const operator = OPERATORS[op];
  if (operator.arity === 'flag') {
    if (raw !== 'true' && raw !== 'false') throw badRequest('Invalid filter value', { [key]: 'must be true or false' });
    return { field, op, values: [raw === 'true'] };
  }
  if (operator.arity === 'list') {
    const parts = raw.split(',');
    if (raw === '' || parts.some((p) => p === '')) throw badRequest('Invalid filter value', { [key]: 'must be a comma-separated list without empty elements' });
    if (parts.length > MAX_IN) throw badRequest('Invalid filter value', { [key]: `must list at most ${MAX_IN} values` });
    return { field, op, values: [...new Set(parts.map((p) => filterValue(model, field, p, key)))] };
  }
  if (operator.value === 'text') {
    if (raw === '') throw badRequest('Invalid filter value', { [key]: 'must not be empty' });
    return { field, op, values: [raw] };
  }
  return { field, op, values: [filterValue(model, field, raw, key)] };
}

function commaList(name: string, raw: string): string[] {
  const parts = raw.split(',').map((p) => p.trim());
  if (raw.trim() === '' || parts.some((p) => p === '')) throw badRequest('Invalid query parameter', { [name]: 'must be a comma-separated list without empty elements' });
  return parts;
}

/** `fields=` and `expand=`: how a list page or one record is shown (the same rules for both). */
export interface RecordView {
  /** `fields=`: the fields to return (`id` and `link` always come too), or null for all. */
  fields: string[] | null;
  /** `expand=`: `parent`, or a child collection's name. */
  expand: string | null;
}

const VIEW = ['fields', 'expand'];

function parseView(model: CollectionModel, q: Record<string, unknown>): RecordView {
  let fields: string[] | null = null;
  if (q.fields !== undefined) {
    const known = ['id', 'owner', 'created_at', 'updated_at', 'link', ...(model.parent ? [model.parent.field] : []), ...Object.keys(model.properties)];
    fields = commaList('fields', single('fields', q.fields));
    const bad = fields.filter((f) => !known.includes(f));
    if (bad.length) throw badRequest('Unknown field', { fields: `${bad.join(', ')}: not a field of ${model.name}` });
  }
  let expand: string | null = null;
  if (q.expand !== undefined) {
    expand = single('expand', q.expand);
    const options = [...(model.parent ? ['parent'] : []), ...model.children];
    if (!options.includes(expand))
      throw badRequest('Invalid expand', { expand: options.length ? `must be one of ${options.join(', ')}` : `${model.name} has no related collection` });
  }
  return { fields, expand };
}

/**
 * The query of `GET /v1/<collection>/<id>`: `fields` and `expand` as on lists; any other parameter
 * is a 400 naming it (a filter or paging parameter there would otherwise be silently ignored).
 */
export function parseRecordQuery(model: CollectionModel, query: Record<string, unknown> | undefined): RecordView {
  const q = query ?? {};
  // A Map, not an object: a parameter named `__proto__` must be reported, not set a prototype.
  const unknown = new Map<string, string>();
  for (const key of Object.keys(q)) if (!VIEW.includes(key)) unknown.set(key, `unknown query parameter (a record takes: ${VIEW.join(', ')})`);
  if (unknown.size) throw badRequest('Unknown query parameter', Object.fromEntries(unknown));
  return parseView(model, q);
}

/** PUT, PATCH and DELETE of a record take no query parameter: any is a 400 naming it. */
export function rejectQuery(query: Record<string, unknown> | undefined): void {
  const keys = Object.keys(query ?? {});
  if (keys.length) throw badRequest('Unknown query parameter', Object.fromEntries(keys.map((k) => [k, 'this method takes no query parameters'])));
}

export function parseListQuery(model: CollectionModel, query: Record<string, unknown>, limits: ListLimits, fixed: string[] = []): ListQuery {
  const q = query ?? {};
  const has = (k: string) => q[k] !== undefined;

  // Filters: every key that is not a reserved parameter.
  const conditions: Condition[] = [];
  // A Map, not an object: a parameter named `__proto__` must be reported, not set a prototype.
  const unknown = new Map<string, string>();
  for (const key of Object.keys(q)) {
    if (LIST_PARAMETER_NAMES.includes(key)) continue;
    const parsed = splitKey(key);
    if (!parsed || !model.filters.includes(parsed.field)) {
      unknown.set(key, `unknown query parameter (filters: ${model.filters.join(', ') || 'none'}; others: ${LIST_PARAMETER_NAMES.join(', ')})`);
      continue;
    }
    const { field } = parsed;
    const op = (parsed.op ?? 'eq') as Operator;
    const allowed = operatorsOf(model, field);
    if (parsed.op === 'eq' || !allowed.includes(op)) {
      unknown.set(key, `unknown operator for ${field} (it takes ${allowed.filter((o) => o !== 'eq').map((o) => `[${o}]`).join(', ')}, or ${field}=<value>)`);
      continue;
    }
    if (fixed.includes(field)) throw badRequest('Filter already given by the path', { [key]: 'is set by the URL of this collection' });
    conditions.push(parseCondition(model, key, field, op, single(key, q[key])));
  }
  if (unknown.size) throw badRequest('Unknown query parameter', Object.fromEntries(unknown));

  if ((has('page') || has('per_page')) && (has('limit') || has('offset')))
    throw badRequest('Conflicting paging parameters', { page: 'use either page/per_page or limit/offset' });
  if (has('after') && has('before')) throw badRequest('Conflicting paging parameters', { before: 'cannot be combined with after' });
  for (const cursor of ['after', 'before'])
    if (has(cursor) && (has('page') || has('per_page') || has('offset')))
      throw badRequest('Conflicting paging parameters', { [cursor]: 'cannot be combined with offset or page' });

  let limit = limits.defaultLimit;
  let offset = 0;
  // Keyset paging (after=) unless the client pages by offset or page, or a search is ranked by relevance.
  let paging: ListQuery['paging'] = has('after') || has('before') || (!has('offset') && !(has('q') && !has('sortby'))) ? 'cursor' : 'offset';
  if (has('page') || has('per_page')) {
    paging = 'page';
    limit = has('per_page') ? integer('per_page', single('per_page', q.per_page), 1, limits.maxLimit) : limits.defaultLimit;
    const page = has('page') ? integer('page', single('page', q.page), 1) : 1;
    offset = (page - 1) * limit;
  } else {
    if (has('limit')) limit = integer('limit', single('limit', q.limit), 1, limits.maxLimit);
    if (has('offset')) offset = integer('offset', single('offset', q.offset), 0);
  }
  if (!Number.isSafeInteger(offset)) throw badRequest('Invalid query parameter', { page: 'is too large' });

  const sortFields = has('sortby') ? commaList('sortby', single('sortby', q.sortby)) : ['id'];
  for (const f of sortFields) if (!model.sort.includes(f)) throw badRequest('Invalid sort field', { sortby: `${f} is not one of ${model.sort.join(', ')}` });
  if (new Set(sortFields).size !== sortFields.length) throw badRequest('Invalid sort field', { sortby: 'names a field twice' });
  const orders = has('order') ? commaList('order', single('order', q.order).toLowerCase()) : ['asc'];
  for (const o of orders) if (o !== 'asc' && o !== 'desc') throw badRequest('Invalid sort order', { order: 'must be asc or desc (one for all keys, or one per key)' });
  if (orders.length !== 1 && orders.length !== sortFields.length)
    throw badRequest('Invalid sort order', { order: `give one order for all keys or one per key (${sortFields.length})` });
  const sort: SortKey[] = sortFields.map((field, i) => ({ field, order: (orders.length === 1 ? orders[0] : orders[i]) as 'asc' | 'desc' }));

  let search: string[] | null = null;
  if (has('q')) {
    if (model.search.length === 0) throw badRequest('Full-text search is not enabled for this collection', { q: `${model.name} has no search fields` });
    const words = single('q', q.q).split(/[^\p{L}\p{N}_]+/u).filter(Boolean);
    if (words.length === 0) throw badRequest('Invalid search', { q: 'must contain at least one word' });
    if (words.length > MAX_SEARCH_WORDS) throw badRequest('Invalid search', { q: `at most ${MAX_SEARCH_WORDS} words` });
    search = [...new Set(words.map((w) => w.toLowerCase()))];
    for (const cursor of ['after', 'before'])
      if (has(cursor) && !has('sortby'))
        throw badRequest('Conflicting paging parameters', { [cursor]: `a search ranked by relevance pages with offset; give sortby to page with ${cursor}` });
  }

  const { fields, expand } = parseView(model, q);

  let count: ListQuery['count'] = 'exact';
  if (has('count')) {
    const c = single('count', q.count);
    if (c !== 'exact' && c !== 'none') throw badRequest('Invalid query parameter', { count: 'must be exact or none' });
    count = c;
  }

  const after = has('after') ? single('after', q.after) : null;
  const before = has('before') ? single('before', q.before) : null;
  return { limit, offset, paging, sort, sorted: has('sortby'), conditions, search, fields, expand, after, before, count };
}
