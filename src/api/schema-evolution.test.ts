import { test } from 'node:test';
import assert from 'node:assert/strict';
import { convertValue, describeStep } from './schema-evolution.js';

test('convert: what turns into each type, and what does not (undefined)', () => {
  assert.equal(convertValue(1844, 'string'), '1844');
  assert.equal(convertValue(true, 'string'), 'true');
  assert.equal(convertValue({ a: 1 }, 'string'), undefined);
  assert.equal(convertValue(' 1844 ', 'integer'), 1844);
  assert.equal(convertValue('18.5', 'integer'), undefined);
  assert.equal(convertValue('18.5', 'number'), 18.5);
  assert.equal(convertValue('1e3', 'number'), 1000);
  assert.equal(convertValue('long ago', 'number'), undefined);
  assert.equal(convertValue('', 'number'), undefined);
  assert.equal(convertValue('99999999999999999999', 'integer'), undefined, 'beyond a safe integer');
  assert.equal(convertValue('TRUE', 'boolean'), true);
  assert.equal(convertValue('0', 'boolean'), false);
  assert.equal(convertValue(1, 'boolean'), true);
  assert.equal(convertValue('yes', 'boolean'), undefined);
  assert.equal(convertValue('2026-11-28T10:00:00+01:00', 'date-time'), '2026-11-28T09:00:00.000Z');
  assert.equal(convertValue('not a date', 'date-time'), undefined);
  assert.equal(convertValue('foo 7', 'date-time'), undefined, 'Date.parse would take it');
  assert.equal(convertValue('2020-02-30', 'date-time'), undefined, 'no 30th of February');
  assert.equal(convertValue('2020-02-29', 'date-time'), '2020-02-29T00:00:00.000Z', 'a date is midnight UTC');
  assert.equal(convertValue('2026-11-28T10:00:00', 'date-time'), undefined, 'a local time without its offset is ambiguous');
  assert.equal(convertValue('2026-11-28 10:00:00Z', 'date-time'), '2026-11-28T10:00:00.000Z');
  assert.equal(convertValue(1764320400000, 'date-time'), undefined, 'a number is not taken as a time');
});

test('steps in words, as the plan prints them', () => {
  assert.equal(describeStep({ rename: { from: 'city', to: 'town' } }), 'rename city to town');
  assert.equal(describeStep({ convert: { field: 'founded', to: 'string', onError: 'fail' } }), 'convert founded to string (values that do not convert: fail)');
  assert.equal(describeStep({ default: { field: 'country', value: 'DE' } }), 'set country to "DE" where it is missing');
  assert.equal(describeStep({ drop: 'region' }), 'drop region');
});
