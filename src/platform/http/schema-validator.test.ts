import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { schemaValidator } from './schema-validator.js';
import { ApiError } from './errors.js';

// The answers of docs/api.md "Errors" from route schemas: the sentences the admin API gave when it
// checked its bodies by hand, whatever Ajv says.

const Body = Type.Object(
  {
    id: Type.String({ pattern: '^[a-z]+$', checkedByModel: true }),
    name: Type.Optional(Type.String()),
    tags: Type.Optional(Type.Array(Type.String())),
    note: Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'] })),
    on: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const Switch = Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false });

const compile = schemaValidator();

function answer(schema: unknown, httpPart: string, data: unknown): ApiError | true {
  const validate = compile({ schema, httpPart, method: 'POST', url: '/x' } as never) as (data: unknown) => true | { error: ApiError };
  const r = validate(data);
  return r === true ? r : r.error;
}

function body(schema: unknown, data: unknown): { status: number; body: unknown } | true {
  const r = answer(schema, 'body', data);
  return r === true ? r : { status: r.status, body: JSON.parse(JSON.stringify(r.body())) };
}

test('a body that is not an object: one answer, whatever it is', () => {
  for (const data of [null, [1, 2], 'text', 12])
    assert.deepEqual(body(Body, data), { status: 400, body: { error: 'A JSON object body is required', detail: { body: 'must be a JSON object' } } });
});

test('unknown and mistyped fields are named in the body\'s order, with the type the field wants', () => {
  assert.deepEqual(body(Body, { on: 'yes', colour: 'red', id: 5, tags: [1], note: 3, name: false }), {
    status: 400,
    body: {
      error: 'Invalid request body',
      detail: {
        on: 'must be a boolean',
        colour: 'unknown field (allowed: id, name, tags, note, on)',
        id: 'must be a string',
        tags: 'must be an array of strings',
        note: 'must be a string or null',
        name: 'must be a string',
      },
    },
  });
  const r = answer(Body, 'body', JSON.parse('{"id":"a","constructor":1,"__proto__":2}')) as ApiError;
  assert.deepEqual(Object.keys(r.detail), ['constructor', '__proto__']);
});

test('missing fields only once the others are right; a boolean says what it takes', () => {
  assert.deepEqual(body(Body, { colour: 1 }), { status: 400, body: { error: 'Invalid request body', detail: { colour: 'unknown field (allowed: id, name, tags, note, on)' } } });
  assert.deepEqual(body(Body, {}), { status: 400, body: { error: 'Invalid request body', detail: { id: 'is required' } } });
  assert.deepEqual(body(Switch, {}), { status: 400, body: { error: 'Invalid request body', detail: { enabled: 'is required (true or false)' } } });
});

test('checkedByModel: the value rules are left to the model', () => {
  assert.equal(body(Body, { id: 'NOT lower case' }), true);
});

test('query parameters: coerced and defaulted, unknown ones all named, else the first wrong one with its own sentence', () => {
  const Page = Type.Object({
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, problem: 'must be an integer from 1 to 100', errorSummary: 'Invalid limit' })),
    before: Type.Optional(Type.Integer()),
  });
  const q: Record<string, unknown> = {};
  assert.equal(answer(Page, 'querystring', q), true);
  assert.deepEqual(q, { limit: 20 });
  const given: Record<string, unknown> = { limit: '5' };
  assert.equal(answer(Page, 'querystring', given), true);
  assert.equal(given.limit, 5);
  for (const limit of ['0', '101', 'abc', '', 'Infinity', ['1', '2']]) {
    const r = answer(Page, 'querystring', { limit, before: 'x' }) as ApiError;
    assert.deepEqual([r.message, r.detail], ['Invalid limit', { limit: 'must be an integer from 1 to 100' }], String(limit));
  }
  assert.deepEqual((answer(Page, 'querystring', { before: 'x' }) as ApiError).body(), { error: 'Invalid before', detail: { before: 'must be an integer' } });
  const Filter = Type.Object({ user: Type.Optional(Type.String()) }, { additionalProperties: false, problem: 'unknown (filters: user)' });
  assert.deepEqual((answer(Filter, 'querystring', { b: '1', user: ['x', 'y'], a: '2' }) as ApiError).body(), {
    error: 'Unknown query parameter',
    detail: { b: 'unknown (filters: user)', a: 'unknown (filters: user)' },
  });
});

test('describedOnly: the handler reads the part; nothing is checked', () => {
  assert.equal(answer(Type.Object({ n: Type.Integer() }, { describedOnly: true }), 'querystring', { n: 'x', other: 1 }), true);
});
