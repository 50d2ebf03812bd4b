import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseMacHeader } from './mac.js';

test('a MAC attribute named like an Object.prototype member is an unknown attribute like any other', () => {
  const base = 'id="k1", nonce="264095:dj83hs9s", mac="SLDJd4mg43cjQfElUs3Qub4L6xE="';
  const plain = parseMacHeader(base);
  assert.deepEqual(plain, { id: 'k1', nonce: '264095:dj83hs9s', mac: 'SLDJd4mg43cjQfElUs3Qub4L6xE=', bodyhash: undefined, ext: undefined });
  assert.deepEqual(parseMacHeader(`${base}, foo="1"`), plain);
  assert.deepEqual(parseMacHeader(`${base}, constructor="1"`), plain);
  assert.deepEqual(parseMacHeader(`constructor="1", ${base}`), plain);
  assert.equal(parseMacHeader(`${base}, id="again"`), null, 'a repeated attribute is malformed');
  assert.equal(parseMacHeader('nonce="n", mac="m"'), null, 'id is required');
});
