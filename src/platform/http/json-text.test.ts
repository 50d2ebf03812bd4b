import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { jsonString, uriComponent } from './json-text.js';

// Both must be exactly the general functions they stand in for, for every string.
const strings = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.uuid(), fc.date({ noInvalidDate: true }).map((d) => d.toISOString()));

test('jsonString is JSON.stringify for every string (quotes, backslashes, control characters, lone surrogates, non-ASCII)', () => {
  for (const s of ['', '"', '\\', '\n', '\u0000', '\u001f', '\ud800', 'a\udc00b', '😀', 'é', 'client:bench', '2026-11-27T15:00:00.000Z'])
    assert.equal(jsonString(s), JSON.stringify(s), JSON.stringify(s));
  fc.assert(fc.property(strings, (s) => jsonString(s) === JSON.stringify(s)), { numRuns: 5000 });
});

test('uriComponent is encodeURIComponent for every string it can encode', () => {
  for (const s of ['', 'a b', '/', '?', '#', '%', "!*'()", '~-._', 'é', '😀', 'Zoo_1.2~x'])
    assert.equal(uriComponent(s), encodeURIComponent(s), s);
  const encodable = strings.filter((s) => { try { encodeURIComponent(s); return true; } catch { return false; } });
  fc.assert(fc.property(encodable, (s) => uriComponent(s) === encodeURIComponent(s)), { numRuns: 5000 });
});
