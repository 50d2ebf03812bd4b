import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from './errors.js';
import { decodeUtf8, parseJsonBody } from './body-parsers.js';

const status400 = (detailKey: string) => (e: unknown) => e instanceof ApiError && e.status === 400 && detailKey in e.detail;

test('strict UTF-8: invalid sequences are a 400, never replaced', () => {
  assert.equal(decodeUtf8(Buffer.from('Zürich ✓', 'utf8')), 'Zürich ✓');
  for (const bytes of [[0xff], [0xc3, 0x28], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]])
    assert.throws(() => decodeUtf8(Buffer.from(bytes)), status400('body'), JSON.stringify(bytes));
});

test('JSON bodies parse; an empty body is undefined; malformed JSON is a 400 naming the body', () => {
  assert.deepEqual(parseJsonBody(Buffer.from('{"a":[1,{"b":null}]}')), { a: [1, { b: null }] });
  assert.equal(parseJsonBody(Buffer.from('')), undefined);
  assert.equal(parseJsonBody(Buffer.from('  \n')), undefined);
  for (const text of ['{', '{"a":1,}', "{'a':1}", 'undefined', '[1,]', '{"a":1}x'])
    assert.throws(() => parseJsonBody(Buffer.from(text)), status400('body'), text);
});

test('__proto__ keys are dropped at every depth', () => {
  const parsed = parseJsonBody(Buffer.from('{"__proto__":{"polluted":1},"a":{"__proto__":{"x":1},"b":2}}')) as Record<string, any>;
  assert.equal(Object.hasOwn(parsed, '__proto__'), false);
  assert.equal(Object.hasOwn(parsed.a, '__proto__'), false);
  assert.equal(parsed.a.b, 2);
  assert.equal(({} as any).polluted, undefined);
});
