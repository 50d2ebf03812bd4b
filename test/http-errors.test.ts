// The error and status policy for every path: `{ error, detail }` JSON bodies with
// Content-Type application/json, never 200 on error, never 301/302/307, no stack traces, no
// Server or X-Powered-By header — including what Node's HTTP parser rejects before any route.
// Spawned server (test/helpers/server.ts), not in process: raw requests that Node's HTTP parser rejects before any route.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:tls';
import { randomUUID } from 'node:crypto';
import { startServer, type TestServer } from './helpers/server.js';
import { apiClient, assertApiError, type ApiClient } from './helpers/tokens.js';

const BODY_LIMIT = 4096;
let server: TestServer;
let a: ApiClient;
let zooId: string;

before(async () => {
  server = await startServer({ config: { server: { bodyLimit: BODY_LIMIT } } });
  a = await apiClient(server, 'errors-a');
  zooId = (await a.json('POST', '/v1/zoos', { name: 'Errors' })).body.id;
});
after(async () => {
  await server.cleanup();
});

interface RawResponse {
  status: number;
  headers: Map<string, string>;
  body: string;
  json: any;
}

/** Sends bytes as they are over TLS and reads one response (the server closes or we stop at Content-Length). */
function raw(request: Buffer | string, timeoutMs = 5000): Promise<RawResponse> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: url.hostname, port: Number(url.port), ca: server.ca, servername: 'localhost' }, () => socket.write(request));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete response in ${timeoutMs} ms: ${Buffer.concat(chunks).toString()}`));
    }, timeoutMs);
    const tryParse = (final: boolean) => {
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      if (end < 0) return final ? reject(new Error(`no response head: ${all.toString()}`)) : undefined;
      const [statusLine, ...lines] = all.subarray(0, end).toString('latin1').split('\r\n');
      const headers = new Map<string, string>();
      for (const l of lines) {
        const i = l.indexOf(':');
        headers.set(l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim());
      }
      const body = all.subarray(end + 4);
      const length = headers.has('content-length') ? Number(headers.get('content-length')) : null;
      if (!final && (length === null || body.length < length)) return;
      clearTimeout(timer);
      socket.destroy();
      const text = body.subarray(0, length ?? body.length).toString('utf8');
      let json: any = null;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {
        json = null;
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text, json });
    };
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      tryParse(false);
    });
    socket.on('end', () => tryParse(true));
    socket.on('error', (e) => {
      if (chunks.length) tryParse(true);
      else reject(e);
    });
  });
}

function assertRawError(res: RawResponse, status: number, detailKey?: string) {
  assert.equal(res.status, status, res.body);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.ok(res.json, `JSON body expected: ${res.body}`);
  assert.equal(typeof res.json.error, 'string');
  assert.equal(typeof res.json.detail, 'object');
  if (detailKey) assert.ok(detailKey in res.json.detail, res.body);
  assert.equal(res.headers.has('server'), false);
  assert.equal(res.headers.has('x-powered-by'), false);
}

const host = () => new URL(server.url).host;

describe('unknown routes', () => {
  for (const [method, path] of [
    ['GET', '/nope'],
    ['POST', '/nope'],
    ['GET', '/v2/zoos'],
    ['GET', '/api/v1/zoos'],
    ['DELETE', '/zoos'],
    ['GET', '/.env'],
    ['GET', '/oauth/nope'],
  ] as const) {
    test(`${method} ${path} → 404 JSON`, async () => {
      assertApiError(await server.json(method, path), 404);
    });
  }

  test('an unknown collection (with a token) → 404 naming it', async () => {
    assertApiError(await a.json('GET', '/v1/nope'), 404, ['collection']);
    assertApiError(await a.json('POST', '/v1/nope', { x: 1 }), 404);
    assertApiError(await a.json('GET', `/v1/nope/${randomUUID()}`), 404);
  });

  test('a malformed percent-escape in the path → 400 JSON with the policy headers', async () => {
    const res = await a.json('GET', '/v1/zoos/%ZZ');
    assertApiError(res, 400, ['url']);
    assert.match(res.headers.get('strict-transport-security') ?? '', /max-age=\d+/);
  });

  test('an over-long path segment → a JSON error, never a bare framework body', async () => {
    const res = await a.json('GET', `/v1/zoos/${'x'.repeat(300)}`);
    assert.ok(res.status === 404 || res.status === 414, String(res.status));
    assertApiError(res, res.status);
  });

  test('too deep a path → 404', async () => {
    assertApiError(await a.json('GET', `/v1/zoos/${zooId}/animals/x/y`), 404);
  });

  test('a retired version → 410 for every path under it', async () => {
    for (const path of ['/v0', '/v0/', '/v0/zoos', `/v0/zoos/${zooId}`, '/v0/anything/at/all']) {
      const res = await server.json('GET', path);
      assertApiError(res, 410, ['version']);
    }
    assertApiError(await server.json('POST', '/v0/zoos', { name: 'x' }), 410);
  });
});

describe('never a redirect other than 303, never 200 on error', () => {
  const odd = [
    '/v1/zoos/',
    '//v1/zoos',
    '/v1//zoos',
    '/v1/./zoos',
    '/v1/zoos/..',
    '/V1/zoos',
    '/v1/ZOOS',
    '/oauth',
    '/oauth/',
    '/v1/',
    '/v1/openapi.json/',
    '/health/',
    '/%2e%2e/%2e%2e/etc/passwd',
    '/v1/zoos/%00',
    '/v1/zoos/%ZZ',
    '/?a=%ZZ',
  ];
  for (const path of odd) {
    test(`GET ${path}`, async () => {
      const res = await raw(`GET ${path} HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${a.token}\r\nAccept: application/json\r\nConnection: close\r\n\r\n`);
      assert.ok(![301, 302, 307, 308].includes(res.status), `${path} → ${res.status}`);
      assert.ok(res.status < 300 || res.status === 303 || res.status >= 400, `${path} → ${res.status}`);
      if (res.status >= 400) assertRawError(res, res.status);
      if (res.status === 200) assert.ok(res.json !== null && res.json.error === undefined, `${path} is 200 with an error body`);
    });
  }
});

describe('bodies', () => {
  test('malformed JSON → 400 naming the body', async () => {
    for (const body of ['{bad', '{"name": "x",}', '{"name": "x"', "{'name': 'x'}", '[1,]']) {
      const res = await a.json('POST', '/v1/zoos', body);
      assertApiError(res, 400, ['body']);
    }
  });

  test('malformed JSON on PUT and PATCH → 400', async () => {
    assertApiError(await a.json('PUT', `/v1/zoos/${zooId}`, '{'), 400, ['body']);
    assertApiError(await a.json('PATCH', `/v1/zoos/${zooId}`, '{'), 400, ['body']);
  });

  test('a text/plain body → 415 naming content-type', async () => {
    const res = await a.json('POST', '/v1/zoos', '{"name":"x"}', { 'content-type': 'text/plain' });
    assertApiError(res, 415, ['content-type']);
  });

  test('form, XML and multipart bodies on JSON routes → 415', async () => {
    for (const type of ['application/x-www-form-urlencoded', 'application/xml', 'text/xml', 'multipart/form-data; boundary=x', 'application/octet-stream']) {
      const res = await a.json('POST', '/v1/zoos', 'name=x', { 'content-type': type });
      assertApiError(res, 415, ['content-type']);
    }
    assertApiError(await a.json('PUT', `/v1/zoos/${zooId}`, 'name=x', { 'content-type': 'text/plain' }), 415);
  });

  test('a JSON body with a charset parameter is accepted', async () => {
    const res = await a.json('POST', '/v1/zoos', { name: 'Charset' }, { 'content-type': 'application/json; charset=utf-8' });
    assert.equal(res.status, 201, res.text);
  });

  test(`a body over bodyLimit (${BODY_LIMIT} bytes) → 413`, async () => {
    const res = await a.json('POST', '/v1/zoos', { name: 'x'.repeat(BODY_LIMIT + 10) });
    assertApiError(res, 413);
    const chunked = await raw(
      `POST /v1/zoos HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${a.token}\r\nContent-Type: application/json\r\n` +
        `Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n${(BODY_LIMIT * 2).toString(16)}\r\n${'{"name":"' + 'y'.repeat(BODY_LIMIT * 2 - 11) + '"}'}\r\n0\r\n\r\n`,
    );
    assertRawError(chunked, 413);
    assert.deepEqual((await a.json('GET', `/v1/zoos?name=${'x'.repeat(10)}`)).body, []);
  });

  test('a body just under the limit is fine', async () => {
    const res = await a.json('POST', '/v1/zoos', { name: 'z'.repeat(BODY_LIMIT - 100) });
    assert.equal(res.status, 201, res.text);
  });

  test('invalid UTF-8 in a JSON body → 400, never silently replaced', async () => {
    const bytes = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]);
    const res = await a.fetch('/v1/zoos', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: bytes });
    const text = await res.text();
    assertApiError({ status: res.status, headers: res.headers, body: JSON.parse(text), text }, 400, ['body']);
  });

  test('a deeply nested body is a 4xx, never a crash or a 500', async () => {
    const depth = Math.floor((BODY_LIMIT - 20) / 6);
    const body = `{"name":"deep","city":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
    const res = await a.json('POST', '/v1/zoos', body);
    assert.ok(res.status >= 400 && res.status < 500, `${res.status}: ${res.text.slice(0, 200)}`);
    assertApiError(res, res.status);
    assert.equal((await a.json('GET', `/v1/zoos/${zooId}`)).status, 200, 'still serving');
  });

  test('a __proto__ key does not pollute anything and is not stored', async () => {
    const res = await a.json('POST', '/v1/zoos', '{"name":"Proto","__proto__":{"admin":true}}');
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.admin, undefined);
    assert.equal(Object.hasOwn(res.body, '__proto__'), false);
  });
});

describe('content negotiation', () => {
  test('Accept: application/xml → 415 naming accept', async () => {
    assertApiError(await a.json('GET', '/v1/zoos', undefined, { accept: 'application/xml' }), 415, ['accept']);
    assertApiError(await a.json('GET', `/v1/zoos/${zooId}`, undefined, { accept: 'text/html' }), 415, ['accept']);
    assertApiError(await a.json('POST', '/v1/zoos', { name: 'x' }, { accept: 'application/xml' }), 415, ['accept']);
    assertApiError(await server.json('GET', '/', undefined, { accept: 'application/xml' }), 415);
    assertApiError(await server.json('GET', '/v1', undefined, { accept: 'text/plain' }), 415);
  });

  test('application/json;q=0 excludes JSON → 415', async () => {
    assertApiError(await a.json('GET', '/v1/zoos', undefined, { accept: 'application/json;q=0, text/html' }), 415);
  });

  test('Accept headers that allow JSON are served', async () => {
    for (const accept of ['application/json', '*/*', 'application/*', 'text/html, application/json;q=0.5', 'application/merge-patch+json', '']) {
      const res = await a.json('GET', '/v1/zoos', undefined, { accept });
      assert.equal(res.status, 200, `${accept}: ${res.text}`);
      assert.match(res.headers.get('content-type')!, /^application\/json/);
    }
  });
});

describe('what the HTTP parser rejects', () => {
  test('a lower-case method → 400 JSON', async () => {
    const res = await raw(`get /v1/zoos HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: Bearer ${a.token}\r\n\r\n`);
    assertRawError(res, 400, 'method');
  });

  test('a mixed-case method → 400 JSON', async () => {
    const res = await raw(`Post /v1/zoos HTTP/1.1\r\nHost: ${host()}\r\nContent-Length: 2\r\n\r\n{}`);
    assertRawError(res, 400);
  });

  test('an unknown method → 400 or 405, JSON either way', async () => {
    const res = await raw(`FROB /v1/zoos HTTP/1.1\r\nHost: ${host()}\r\nConnection: close\r\n\r\n`);
    assert.ok(res.status === 400 || res.status === 405, String(res.status));
    assertRawError(res, res.status);
  });

  test('oversized headers → 431 JSON', async () => {
    const res = await raw(`GET /v1/zoos HTTP/1.1\r\nHost: ${host()}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    assertRawError(res, 431, 'headers');
  });

  test('a garbage request line → 400 JSON', async () => {
    const res = await raw('HELLO\r\n\r\n');
    assertRawError(res, 400);
  });

  test('the server keeps serving after parser errors', async () => {
    assert.equal((await a.json('GET', `/v1/zoos/${zooId}`)).status, 200);
  });
});

describe('response headers', () => {
  test('no Server or X-Powered-By header on success, error, 404 and HEAD', async () => {
    const responses = [
      await a.json('GET', '/v1/zoos'),
      await a.json('GET', '/v1/nope'),
      await server.json('GET', '/nope'),
      await server.json('GET', '/'),
      await server.json('GET', '/health'),
      await a.json('POST', '/v1/zoos', '{'),
      await a.json('HEAD', `/v1/zoos/${zooId}`),
    ];
    for (const res of responses) {
      assert.equal(res.headers.get('server'), null);
      assert.equal(res.headers.get('x-powered-by'), null);
      assert.match(res.headers.get('strict-transport-security') ?? '', /max-age=\d+/);
    }
  });

  test('an error is never answered with 200, and every error has the JSON body', async () => {
    const checks = [
      await a.json('GET', `/v1/zoos/${randomUUID()}`),
      await server.json('GET', '/v1/zoos'),
      await a.json('POST', '/v1/zoos', {}),
      await a.json('DELETE', '/v1/zoos'),
      await a.json('GET', '/v1/zoos?limit=x'),
    ];
    for (const res of checks) {
      assert.ok(res.status >= 400);
      assertApiError(res, res.status);
    }
  });
});

describe('405 with Allow on routes that do not need a token', () => {
  for (const [method, path, allow] of [
    ['DELETE', '/', ['GET', 'HEAD']],
    ['POST', '/v1', ['GET', 'HEAD']],
    ['PUT', '/v1/openapi.json', ['GET', 'HEAD']],
    ['POST', '/health', ['GET', 'HEAD']],
    ['OPTIONS', '/v1', ['GET', 'HEAD']],
  ] as const) {
    test(`${method} ${path}`, async () => {
      const res = await server.json(method, path);
      assertApiError(res, 405);
      assert.deepEqual(res.headers.get('allow')!.split(/,\s*/).sort(), [...allow].sort());
    });
  }
});
