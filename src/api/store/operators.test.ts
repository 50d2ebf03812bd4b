// The operator table (operators.ts) gives each filter field type the operators docs/api.md lists,
// in the order the error messages and the OpenAPI document name them; its bound values are those
// the SQL reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OPERATORS, OPERATORS_OF_TYPE } from './operators.js';

test('each field type takes the documented operators, in table order', () => {
  assert.deepEqual(OPERATORS_OF_TYPE, {
    string: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'prefix', 'contains', 'null'],
    integer: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'null'],
    number: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'null'],
    boolean: ['eq', 'ne', 'in', 'null'],
    parent: ['eq', 'ne', 'in'],
  });
});

test('bound values: a prefix and its upper bound, a lower-cased needle, nothing for a flag', () => {
  assert.deepEqual(OPERATORS.prefix.bind(['ab']), ['ab', 'ac']);
  assert.deepEqual(OPERATORS.prefix.bind([String.fromCodePoint(0x10ffff)]), [String.fromCodePoint(0x10ffff)], 'no bound above the last code point');
  assert.deepEqual(OPERATORS.contains.bind(['ÄbC']), ['Äbc'], 'ASCII letters only');
  assert.deepEqual(OPERATORS.null.bind([true]), []);
  assert.deepEqual(OPERATORS.in.bind(['a', 'b']), ['a', 'b']);
});
