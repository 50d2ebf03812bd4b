import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { applyMethodOverride, methodOverrideError, sentMethod } from './method-override.js';

function request(method: string, override?: string | string[]): IncomingMessage {
  return { method, headers: override === undefined ? {} : { 'x-http-method-override': override } } as unknown as IncomingMessage;
}

test('POST + PUT/PATCH/DELETE (any case, spaces trimmed) becomes that method; the sent method is remembered', () => {
  for (const [value, expected] of [['PUT', 'PUT'], ['patch', 'PATCH'], [' Delete ', 'DELETE']]) {
    const req = request('POST', value);
    applyMethodOverride(req);
    assert.equal(req.method, expected);
    assert.equal(methodOverrideError(req), undefined);
    assert.equal(sentMethod(req), 'POST');
  }
});

test('other values on POST are a 400 naming the header; the method stays POST', () => {
  for (const value of ['GET', 'HEAD', 'POST', 'OPTIONS', 'CONNECT', 'TRACE', 'FOO', '', ['PUT', 'PATCH']]) {
    const req = request('POST', value);
    applyMethodOverride(req);
    assert.equal(req.method, 'POST', String(value));
    const err = methodOverrideError(req);
    assert.equal(err?.status, 400, String(value));
    assert.ok(err && 'x-http-method-override' in err.detail);
  }
});

test('the header on any other method is a 400 and changes nothing', () => {
  for (const method of ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE']) {
    const req = request(method, 'DELETE');
    applyMethodOverride(req);
    assert.equal(req.method, method);
    assert.equal(methodOverrideError(req)?.status, 400);
  }
});

test('no header: nothing happens', () => {
  const req = request('POST');
  applyMethodOverride(req);
  assert.equal(req.method, 'POST');
  assert.equal(methodOverrideError(req), undefined);
  assert.equal(sentMethod(req), 'POST');
});
