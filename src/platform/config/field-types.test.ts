import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FieldTypeError, scalarFieldType } from './field-types.js';
import { ConfigError, resolveConfig } from './load.js';

function refused(property: unknown, problem: RegExp): void {
  assert.throws(
    () => scalarFieldType(property),
    (e: unknown) => e instanceof FieldTypeError && problem.test(e.problem),
  );
}

test('an explicit scalar type', () => {
  for (const type of ['string', 'integer', 'number', 'boolean'] as const)
    assert.deepEqual(scalarFieldType({ type }), { type, nullable: false, values: null });
});

test('[T, "null"] in either order is a nullable T', () => {
  assert.deepEqual(scalarFieldType({ type: ['string', 'null'] }), { type: 'string', nullable: true, values: null });
  assert.deepEqual(scalarFieldType({ type: ['null', 'integer'] }), { type: 'integer', nullable: true, values: null });
  refused({ type: ['string', 'integer'] }, /one type and "null"/);
  refused({ type: ['string', 'null', 'integer'] }, /one type and "null"/);
  refused({ type: ['null'] }, /one type and "null"/);
  refused({ type: ['object', 'null'] }, /one type and "null"/);
});

test('an enum without a type: the type is inferred from its values', () => {
  assert.deepEqual(scalarFieldType({ enum: ['pending', 'paid', 'shipped'] }), { type: 'string', nullable: false, values: ['pending', 'paid', 'shipped'] });
  assert.deepEqual(scalarFieldType({ enum: [1, 2, 3] }), { type: 'integer', nullable: false, values: [1, 2, 3] });
  assert.deepEqual(scalarFieldType({ enum: [0.5, 1.5] }), { type: 'number', nullable: false, values: [0.5, 1.5] });
  assert.deepEqual(scalarFieldType({ enum: [1, 2.5] }), { type: 'number', nullable: false, values: [1, 2.5] });
  assert.deepEqual(scalarFieldType({ enum: [true, false] }), { type: 'boolean', nullable: false, values: [true, false] });
  assert.deepEqual(scalarFieldType({ enum: ['a', null] }), { type: 'string', nullable: true, values: ['a'] });
});

test('a const without a type is an enum of one value', () => {
  assert.deepEqual(scalarFieldType({ const: 'fixed' }), { type: 'string', nullable: false, values: ['fixed'] });
  assert.deepEqual(scalarFieldType({ const: 7 }), { type: 'integer', nullable: false, values: [7] });
  assert.deepEqual(scalarFieldType({ const: false }), { type: 'boolean', nullable: false, values: [false] });
});

test('an explicit type with an enum keeps the type and the values', () => {
  assert.deepEqual(scalarFieldType({ type: 'string', enum: ['a', 'b'] }), { type: 'string', nullable: false, values: ['a', 'b'] });
  assert.deepEqual(scalarFieldType({ type: 'number', enum: [1, 2] }), { type: 'number', nullable: false, values: [1, 2] });
  assert.deepEqual(scalarFieldType({ type: ['integer', 'null'], enum: [1, null] }), { type: 'integer', nullable: true, values: [1] });
  refused({ type: 'integer', enum: [1, 'two'] }, /type "integer" but string values in its enum/);
  refused({ type: 'integer', enum: [1.5] }, /type "integer" but number values/);
});

test('mixed, empty, structured or missing types are refused', () => {
  refused({ enum: ['a', 1] }, /mixes string and integer values in its enum/);
  refused({ enum: ['a', 1, true] }, /mixes string, integer and boolean values/);
  refused({ enum: [1, 'a', 2.5] }, /mixes/);
  refused({ enum: [] }, /not a non-empty list/);
  refused({ enum: 'a' }, /not a non-empty list/);
  refused({ enum: [null] }, /only null/);
  refused({ const: null }, /only null/);
  refused({ enum: [{ a: 1 }] }, /an object among its enum values/);
  refused({ const: [1] }, /an array among its const values/);
  refused({}, /has no type/);
  refused({ description: 'x' }, /has no type/);
  refused({ type: 'object' }, /has type "object"/);
  refused({ type: 'array' }, /has type "array"/);
  refused(null, /not a schema object/);
});

function collections(properties: Record<string, unknown>, filters: string[], sort: string[] = []) {
  return { collections: { orders: { schema: { type: 'object', properties }, filters, sort } } };
}

test('the config accepts enum, const and nullable filter and sort fields', () => {
  const props = { status: { enum: ['pending', 'paid'] }, priority: { enum: [1, 2, 3] }, kind: { const: 'order' }, note: { type: ['null', 'string'] } };
  const cfg = resolveConfig(collections(props, ['status', 'priority', 'kind', 'note'], ['status', 'priority', 'note']), 'g.yaml', { env: {} });
  assert.deepEqual(cfg.collections.orders.filters, ['status', 'priority', 'kind', 'note']);
});

test('the config refuses a mixed enum, naming the field and the types that can be filtered', () => {
  const props = { name: { type: 'string' }, status: { enum: ['paid', 2] } };
  for (const [filters, sort, field, use] of [
    [['name', 'status'], [], 'collections.orders.filters[1]', 'filtered'],
    [[], ['status'], 'collections.orders.sort[0]', 'sorted'],
  ] as const) {
    assert.throws(
      () => resolveConfig(collections(props, [...filters], [...sort]), 'g.yaml', { env: {} }),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError, String(e));
        assert.equal(e.field, field);
        assert.match(e.problem, new RegExp(`^"status" cannot be ${use}: it mixes string and integer values in its enum`));
        assert.match(e.problem, new RegExp(`only string, integer, number and boolean properties .* can be ${use}$`));
        return true;
      },
    );
  }
  assert.throws(
    () => resolveConfig(collections({ meta: { type: 'object' } }, ['meta']), 'g.yaml', { env: {} }),
    (e: unknown) => e instanceof ConfigError && /^"meta" cannot be filtered: it has type "object"; only string, integer/.test(e.problem),
  );
});
