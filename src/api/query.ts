import { badRequest } from '../platform/http/errors.js';
import type { CollectionModel } from '../contract/collections.js';
import type { FilterValue } from './store/records.js';

// The list query language of DESIGN.md: limit/offset, page/per_page, sortby/order and equality
// filters on declared fields. Anything unknown or malformed is a 400 naming the parameter.

export type { FilterValue } from './store/records.js';

export interface ListQuery {
  limit: number;
  offset: number;
  /** How the client paged, so Link headers answer in the same terms. */
  paging: 'offset' | 'page';
  sortby: string;
  order: 'asc' | 'desc';
  filters: { field: string; value: FilterValue }[];
}

export interface ListLimits {
  defaultLimit: number;
  maxLimit: number;
}

const PAGING = ['limit', 'offset', 'page', 'per_page', 'sortby', 'order'];

function single(name: string, value: unknown): string {
  if (Array.isArray(value)) throw badRequest('Repeated query parameter', { [name]: 'must be given once' });
  return String(value);
}

function integer(name: string, raw: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^\d+$/.test(raw)) throw badRequest('Invalid query parameter', { [name]: `must be an integer from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}` });
  const n = Number(raw);
  if (n < min || n > max)
    throw badRequest('Invalid query parameter', { [name]: `must be an integer from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}` });
  return n;
}

/** Parses a filter's query value by the field's type (field-types.ts); a value outside its enum is a 400 naming the field. */
export function filterValue(model: CollectionModel, field: string, raw: string): FilterValue {
  // The parent field has no column: it is an id, a string.
  const type = model.columns.find((c) => c.field === field)?.type ?? { type: 'string', nullable: false, values: null };
  let value: FilterValue;
  if (type.type === 'integer') {
    if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw badRequest('Invalid filter value', { [field]: 'must be an integer' });
    value = Number(raw);
  } else if (type.type === 'number') {
    value = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(value)) throw badRequest('Invalid filter value', { [field]: 'must be a number' });
  } else if (type.type === 'boolean') {
    if (raw !== 'true' && raw !== 'false') throw badRequest('Invalid filter value', { [field]: 'must be true or false' });
    value = raw === 'true';
  } else {
    value = raw;
  }
  if (type.values && !type.values.includes(value))
    throw badRequest('Invalid filter value', { [field]: `must be one of ${type.values.map((v) => String(v)).join(', ')}` });
  return value;
}

export function parseListQuery(model: CollectionModel, query: Record<string, unknown>, limits: ListLimits, fixed: string[] = []): ListQuery {
  const q = query ?? {};
  const unknown = Object.keys(q).filter((k) => !PAGING.includes(k) && !model.filters.includes(k));
  if (unknown.length) {
    const detail: Record<string, string> = {};
    for (const k of unknown) detail[k] = `unknown query parameter (filters: ${model.filters.join(', ') || 'none'}; paging: ${PAGING.join(', ')})`;
    throw badRequest('Unknown query parameter', detail);
  }
  const has = (k: string) => q[k] !== undefined;
  if ((has('page') || has('per_page')) && (has('limit') || has('offset')))
    throw badRequest('Conflicting paging parameters', { page: 'use either page/per_page or limit/offset' });

  let limit = limits.defaultLimit;
  let offset = 0;
  let paging: ListQuery['paging'] = 'offset';
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

  let sortby = 'id';
  if (has('sortby')) {
    sortby = single('sortby', q.sortby);
    if (!model.sort.includes(sortby)) throw badRequest('Invalid sort field', { sortby: `must be one of ${model.sort.join(', ')}` });
  }
  let order: ListQuery['order'] = 'asc';
  if (has('order')) {
    const o = single('order', q.order).toLowerCase();
    if (o !== 'asc' && o !== 'desc') throw badRequest('Invalid sort order', { order: 'must be asc or desc' });
    order = o;
  }

  const filters: ListQuery['filters'] = [];
  for (const field of model.filters) {
    if (!has(field)) continue;
    if (fixed.includes(field)) throw badRequest('Filter already given by the path', { [field]: 'is set by the URL of this collection' });
    filters.push({ field, value: filterValue(model, field, single(field, q[field])) });
  }
  return { limit, offset, paging, sortby, order, filters };
}
