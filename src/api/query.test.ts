import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { loadConfig, DEMO_CONFIG } from '../platform/config/load.js';
import { ApiError } from '../platform/http/errors.js';
import { buildCollections } from '../contract/collections.js';
import { filterValue, parseListQuery } from './query.js';
import { LIST_PARAMETER_NAMES, listParameters } from './parameters.js';

const demo = buildCollections(loadConfig({ file: DEMO_CONFIG, dataDir: tmpdir(), env: {} }).collections);
const typed = buildCollections({
  things: {
    schema: { type: 'object', properties: { n: { type: 'number' }, on: { type: 'boolean' }, k: { type: 'integer' }, s: { type: 'string' } } },
    filters: ['n', 'on', 'k', 's'],
    sort: ['n'],
  },
});
const zoos = demo.get('zoos')!;
const animals = demo.get('animals')!;
const things = typed.get('things')!;
const limits = { defaultLimit: 20, maxLimit: 100 };

function fails(fn: () => unknown, param: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ApiError, String(e));
    assert.equal(e.status, 400);
    assert.ok(param in e.detail, `detail names ${param}: ${JSON.stringify(e.detail)}`);
    return true;
  });
}

test('defaults: defaultLimit, offset 0, sorted by id ascending, no filters', () => {
  assert.deepEqual(parseListQuery(zoos, {}, limits), {
    limit: 20,
    offset: 0,
    paging: 'cursor',
    sort: [{ field: 'id', order: 'asc' }],
    sorted: false,
    conditions: [],
    search: null,
    fields: null,
    expand: null,
    after: null,
    before: null,
    count: 'exact',
  });
});

test('limit and offset', () => {
  const q = parseListQuery(zoos, { limit: '5', offset: '15' }, limits);
  assert.deepEqual([q.limit, q.offset, q.paging], [5, 15, 'offset']);
});

test('page and per_page become limit and offset', () => {
  const q = parseListQuery(zoos, { page: '3', per_page: '10' }, limits);
  assert.deepEqual([q.limit, q.offset, q.paging], [10, 20, 'page']);
  const p = parseListQuery(zoos, { page: '2' }, limits);
  assert.deepEqual([p.limit, p.offset], [20, 20]);
});

test('sortby and order', () => {
  const q = parseListQuery(zoos, { sortby: 'founded', order: 'DESC' }, limits);
  assert.deepEqual(q.sort, [{ field: 'founded', order: 'desc' }]);
  assert.deepEqual(parseListQuery(zoos, { sortby: 'updated_at' }, limits).sort, [{ field: 'updated_at', order: 'asc' }]);
  assert.deepEqual(parseListQuery(zoos, { sortby: 'founded,name', order: 'desc,asc' }, limits).sort, [
    { field: 'founded', order: 'desc' },
    { field: 'name', order: 'asc' },
  ]);
  assert.deepEqual(parseListQuery(zoos, { sortby: 'founded,name', order: 'desc' }, limits).sort, [
    { field: 'founded', order: 'desc' },
    { field: 'name', order: 'desc' },
  ]);
});

test('equality filters carry typed values', () => {
  const eq = (field: string, value: unknown) => ({ field, op: 'eq', values: [value] });
  assert.deepEqual(parseListQuery(zoos, { city: 'Rome', founded: '1900' }, limits).conditions, [eq('city', 'Rome'), eq('founded', 1900)]);
  assert.deepEqual(parseListQuery(things, { n: '2.5', on: 'false', k: '-3', s: '007' }, limits).conditions, [
    eq('n', 2.5),
    eq('on', false),
    eq('k', -3),
    eq('s', '007'),
  ]);
});

test('malformed typed values are 400 naming the field', () => {
  for (const bad of ['x', '1.5', '', '1e2', ' 1', '99999999999999999999']) fails(() => filterValue(things, 'k', bad), 'k');
  for (const bad of ['x', '', ' ', 'NaN', 'Infinity']) fails(() => filterValue(things, 'n', bad), 'n');
  for (const bad of ['yes', '1', 'TRUE', '']) fails(() => filterValue(things, 'on', bad), 'on');
});

test('unknown, malformed and repeated parameters are 400 naming the parameter', () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ colour: 'red' }, 'colour'],
    [{ limit: '0' }, 'limit'],
    [{ limit: '101' }, 'limit'],
    [{ limit: 'x' }, 'limit'],
    [{ limit: ['1', '2'] }, 'limit'],
    [{ offset: '-1' }, 'offset'],
    [{ page: '0' }, 'page'],
    [{ per_page: '101' }, 'per_page'],
    [{ page: '1', offset: '3' }, 'page'],
    [{ sortby: 'city' }, 'sortby'],
    [{ order: 'sideways' }, 'order'],
    [{ city: ['a', 'b'] }, 'city'],
    [{ page: '9007199254740991', per_page: '100' }, 'page'],
  ];
  for (const [query, param] of cases) fails(() => parseListQuery(zoos, query, limits), param);
});

test('the parent field filters the flat child collection and is refused where the URL fixes it', () => {
  assert.deepEqual(parseListQuery(animals, { zoo_id: 'z1' }, limits).conditions, [{ field: 'zoo_id', op: 'eq', values: ['z1'] }]);
  fails(() => parseListQuery(animals, { zoo_id: 'z1' }, limits, ['zoo_id']), 'zoo_id');
});

const enums = buildCollections({
  orders: {
    schema: {
      type: 'object',
      properties: {
        status: { enum: ['pending', 'paid', 'shipped'] },
        priority: { enum: [1, 2, 3] },
        ratio: { enum: [0.5, 1] },
        kind: { const: 'order' },
        note: { type: ['string', 'null'] },
        size: { type: ['null', 'integer'] },
      },
    },
    filters: ['status', 'priority', 'ratio', 'kind', 'note', 'size'],
    sort: ['status', 'size'],
  },
}).get('orders')!;

test('enum, const and nullable fields parse by their inferred type', () => {
  const eq = (field: string, value: unknown) => ({ field, op: 'eq', values: [value] });
  assert.deepEqual(parseListQuery(enums, { status: 'paid', priority: '2', ratio: '1.0', kind: 'order', note: 'null', size: '-4' }, limits).conditions, [
    eq('status', 'paid'),
    eq('priority', 2),
    eq('ratio', 1),
    eq('kind', 'order'),
    eq('note', 'null'),
    eq('size', -4),
  ]);
  assert.deepEqual(parseListQuery(enums, { sortby: 'status' }, limits).sort, [{ field: 'status', order: 'asc' }]);
});

test('a value outside the enum is a 400 naming the field and the allowed values', () => {
  for (const [field, bad] of [['status', 'unknown'], ['status', 'PAID'], ['status', ''], ['priority', '4'], ['priority', 'x'], ['priority', '1.5'], ['ratio', '2'], ['kind', 'other'], ['size', 'null']])
    fails(() => filterValue(enums, field, bad), field);
  assert.throws(() => filterValue(enums, 'status', 'unknown'), (e: unknown) => e instanceof ApiError && e.detail.status === 'must be one of pending, paid, shipped');
  assert.throws(() => filterValue(enums, 'priority', '4'), (e: unknown) => e instanceof ApiError && e.detail.priority === 'must be one of 1, 2, 3');
});

test('a parameter named __proto__, constructor or toString is reported like any unknown one (the query object has no prototype)', () => {
  for (const key of ['__proto__', 'constructor', 'toString']) {
    const query = Object.assign(Object.create(null), { [key]: '1' }) as Record<string, unknown>;
    Object.defineProperty(query, key, { value: '1', enumerable: true }); // `__proto__` as an own key, as the query parser makes it
    assert.throws(() => parseListQuery(zoos, query, limits), (e: unknown) => {
      assert.ok(e instanceof ApiError && e.status === 400, String(e));
      assert.ok(Object.hasOwn(e.detail, key), `detail names ${key}: ${JSON.stringify(e.detail)}`);
      return true;
    });
  }
});

test('the fixed list parameters the parser sets apart from filters are the ones the OpenAPI document describes', () => {
  // animals has a parent and zoos has children and search: between them every optional parameter.
  const described = new Set([zoos, animals].flatMap((m) => Object.keys(listParameters(m, { ...limits, expandLimit: 10 }).properties)));
  assert.deepEqual([...described].sort(), [...LIST_PARAMETER_NAMES].sort());
});
