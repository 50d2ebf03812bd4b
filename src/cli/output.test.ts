import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cell, formatTable } from './output.js';

test('formatTable: capital headers, columns padded to the widest cell, two spaces apart, no trailing spaces', () => {
  const rows = [
    { id: 'a1', subject: 'user:42', scope: 'zoos:read zoos:write', last_used_at: null },
    { id: 'b22222', subject: 'client:svc', scope: 'zoos:read', last_used_at: '2026-01-01T00:00:00.000Z' },
  ];
  assert.equal(
    formatTable(rows, ['id', 'subject', 'scope', 'last_used_at']),
    [
      'ID      SUBJECT     SCOPE                 LAST_USED_AT',
      'a1      user:42     zoos:read zoos:write  -',
      'b22222  client:svc  zoos:read             2026-01-01T00:00:00.000Z',
    ].join('\n'),
  );
});

test('formatTable: only the columns named, in their order; a column may render its own values', () => {
  const rows = [{ client_id: 'svc', scope: null, secret: 'never' }];
  const table = formatTable(rows, [{ key: 'scope', show: (v) => (v === null ? '(every scope)' : String(v)) }, 'client_id']);
  assert.equal(table, 'SCOPE          CLIENT_ID\n(every scope)  svc');
  assert.doesNotMatch(table, /never/);
});

test('cell: nothing is "-", lists are joined with commas, booleans and numbers as written, newlines flattened', () => {
  assert.equal(cell(null), '-');
  assert.equal(cell(undefined), '-');
  assert.equal(cell(''), '-');
  assert.equal(cell([]), '-');
  assert.equal(cell(['password', 'refresh_token']), 'password,refresh_token');
  assert.equal(cell(false), 'false');
  assert.equal(cell(3), '3');
  assert.equal(cell('two\nlines'), 'two lines');
  assert.equal(cell({ a: 1 }), '{"a":1}');
});
