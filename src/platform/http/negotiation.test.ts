import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from './errors.js';
import { acceptsHtml, acceptsJson, namesType, prefersJson, requireJsonAccept } from './negotiation.js';

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

test('the most specific range decides: */* does not override an explicit q=0', () => {
  assert.equal(acceptsJson('application/json;q=0, */*'), false);
  assert.equal(acceptsJson('text/html, */*;q=0.8'), true);
  assert.equal(acceptsJson('application/*;q=0, application/json'), true);
});

test('prefersJson: only an explicit application/json ranked above text/html', () => {
  assert.equal(prefersJson('application/json'), true);
  assert.equal(prefersJson('application/json, text/html;q=0.9'), true);
  assert.equal(prefersJson('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'), false);
  assert.equal(prefersJson('*/*'), false);
  assert.equal(prefersJson(undefined), false);
  assert.equal(prefersJson('text/html;q=0.5, application/json;q=0.4'), false);
  assert.equal(prefersJson('application/*'), true, 'no HTML accepted at all');
});

test('namesType: the exact type, never through a wildcard', () => {
  assert.equal(namesType('image/png', 'image/png'), true);
  assert.equal(namesType('image/*, application/json', 'image/png'), false);
  assert.equal(namesType('*/*', 'image/png'), false);
  assert.equal(namesType('IMAGE/PNG;q=0.5', 'image/png'), true);
  assert.equal(namesType('image/png;q=0', 'image/png'), false);
});
