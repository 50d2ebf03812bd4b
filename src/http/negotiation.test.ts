import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from './errors.js';
import { acceptsHtml, acceptsJson, requireJsonAccept } from './negotiation.js';

test('Accept values that allow JSON', () => {
  for (const h of [undefined, '', ' ', 'application/json', '*/*', 'application/*', 'APPLICATION/JSON', 'text/html, application/json;q=0.1', 'application/problem+json', 'application/json; charset=utf-8'])
    assert.equal(acceptsJson(h), true, String(h));
});

test('Accept values that rule JSON out', () => {
  for (const h of ['application/xml', 'text/html', 'text/*', 'application/json;q=0', 'application/json; q=0, text/html', 'image/png, text/plain', '*/*;q=0'])
    assert.equal(acceptsJson(h), false, h);
});

test('requireJsonAccept throws 415 naming accept', () => {
  assert.throws(
    () => requireJsonAccept('application/xml'),
    (e: unknown) => e instanceof ApiError && e.status === 415 && 'accept' in e.detail,
  );
  assert.doesNotThrow(() => requireJsonAccept('application/json'));
});

test('acceptsHtml for the login and consent pages', () => {
  assert.equal(acceptsHtml('text/html,application/xhtml+xml'), true);
  assert.equal(acceptsHtml(undefined), true);
  assert.equal(acceptsHtml('application/json'), false);
});
