// What the server answers on a connection whose bytes Node's HTTP parser refused (clientError):
// the JSON error, written straight to the socket, then the connection closes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { clientErrorHandler } from './error-handler.js';

function answer(code: string): { text: string; destroyed: boolean; warnings: object[] } {
  let text = '';
  let destroyed = false;
  const warnings: object[] = [];
  const socket = { writable: true, end: (data: string) => void (text = data), destroy: () => void (destroyed = true) } as unknown as Socket;
  const err = Object.assign(new Error(`Parse Error: ${code}`), { code });
  clientErrorHandler.call({ log: { warn: (obj: object) => void warnings.push(obj) } }, err, socket);
  return { text, destroyed, warnings };
}

const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1]);
const bodyOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));

test('a body handed to a paused parser (Node over TLS, HPE_PAUSED) is 503 with Retry-After, not the client\'s error; logged', () => {
  const { text, warnings } = answer('HPE_PAUSED');
  assert.equal(statusOf(text), 503);
  assert.match(text, /\r\nRetry-After: 1\r\n/);
  assert.match(text, /\r\nConnection: close\r\n/);
  assert.deepEqual(bodyOf(text).detail, { request: 'interrupted, not processed' });
  assert.deepEqual(warnings, [{ code: 'HPE_PAUSED' }]);
});

test('what the client sent wrong stays a 4xx naming it, without Retry-After', () => {
  for (const [code, status, key] of [['HPE_INVALID_METHOD', 400, 'method'], ['HPE_HEADER_OVERFLOW', 431, 'headers'], ['HPE_INVALID_CONSTANT', 400, 'request']] as const) {
    const { text, warnings } = answer(code);
    assert.equal(statusOf(text), status, code);
    assert.doesNotMatch(text, /Retry-After/, code);
    assert.ok(key in bodyOf(text).detail, `${code}: ${text}`);
    assert.deepEqual(warnings, []);
  }
  assert.equal(answer('ECONNRESET').destroyed, true, 'a reset connection is closed without an answer');
});
