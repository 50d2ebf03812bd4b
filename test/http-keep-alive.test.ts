// Keep-alive after an early answer: whatever answers a request before its body was read (401,
// 400, 404, 405, 413, 415, 429, 503 in maintenance, a request that waited for the turn gate), the
// connection still serves its next request — or the answer said `Connection: close` and the
// connection closed. Raw HTTP/1.1 over node:tls, so that nothing but the server decides.
// Spawned server (test/helpers/server.ts), not in process: what happens to the connection after an early answer.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:tls';
import { startServer, type TestServer } from './helpers/server.js';
import { clientToken } from './helpers/tokens.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const BODY_LIMIT = 1_048_576;
const NEXT_WITHIN_MS = 1000;
/** The server takes in a closed connection's remaining body for at most a second. */
const CLOSE_WITHIN_MS = 2000;

interface Outcome {
  /** Status codes of the responses received, in order. */
  statuses: number[];
  /** Whether every `Connection: close` answer was followed by the connection closing. */
  closed: boolean;
  saidClose: boolean;
  text: string;
}

function statusesIn(text: string): number[] {
  return [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
}

/** A JSON body of exactly `size` bytes. */
function jsonBody(size: number): Buffer {
  return Buffer.from(JSON.stringify({ name: 'x'.repeat(size - 12) }));
}

function chunked(body: Buffer, chunk = 8192): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < body.length; at += chunk) {
    const piece = body.subarray(at, at + chunk);
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

const NEXT = 'GET /health HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\n\r\n';

/**
 * Sends `first` (a request with its body); `pipelined` writes the next request (GET /health) right
 * behind it, otherwise it goes once the first answer arrived. Resolves when both answers arrived,
 * when the connection closed, or NEXT_WITHIN_MS after the first answer.
 */
function exchange(server: TestServer, first: Buffer, pipelined: boolean, rounds = 1, next: string | Buffer = NEXT): Promise<Outcome> {
  const url = new URL(server.url);
  return new Promise((resolve) => {
    let received = '';
    let settled = false;
    let sentNext = 0;
    let timer: NodeJS.Timeout | undefined;
    const expected = 2 * rounds;
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(overall);
      socket.destroy();
      resolve({ statuses: statusesIn(received), closed, saidClose: /\r\nconnection: close\r\n/i.test(received), text: received });
    };
    const overall = setTimeout(() => finish(false), 30_000);
    const socket = connect({ host: url.hostname, port: Number(url.port), ca: server.ca, servername: 'localhost' }, () => {
      if (!pipelined) return void socket.write(first);
      for (let i = 0; i < rounds; i++) socket.write(Buffer.concat([first, Buffer.from(next)]));
    });
    socket.on('data', (d: Buffer) => {
      received += d.toString('latin1');
      const count = statusesIn(received).length;
      if (!pipelined && count > sentNext * 2 && sentNext < rounds) {
        // The first answer is in: the next request, and a limited wait for its answer.
        sentNext++;
        socket.write(next);
        if (sentNext < rounds) socket.write(first);
      }
      if (count >= expected && /\r\n\r\n\{[^]*\}$/.test(received)) finish(false);
      else if (count >= 1 && !timer)
        // An answer that closes the connection may take in the body's bytes for a second first (LINGER_MS).
        timer = setTimeout(() => finish(false), rounds * NEXT_WITHIN_MS + (/\r\nconnection: close\r\n/i.test(received) ? CLOSE_WITHIN_MS : 0));
    });
    socket.on('error', () => undefined);
    socket.on('close', () => finish(true));
  });
}

function request(method: string, target: string, headers: Record<string, string>, body: Buffer, framing: 'length' | 'chunked' = 'length'): Buffer {
  const lines = [`${method} ${target} HTTP/1.1`, 'Host: localhost', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  lines.push(framing === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${body.length}`);
  return Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'), framing === 'chunked' ? chunked(body) : body]);
}

/** Either the next request was answered, or the early answer said `Connection: close` and the connection closed. */
function assertUsable(o: Outcome, earlyStatus: number, rounds = 1): void {
  const why = `statuses ${JSON.stringify(o.statuses)}, closed ${o.closed}, said close ${o.saidClose}: ${JSON.stringify(process.env.KA_FULL ? o.text : o.text.slice(0, 400))}`;
  assert.equal(o.statuses[0], earlyStatus, why);
  if (o.saidClose) {
    assert.ok(o.closed, `said Connection: close but kept the connection open; ${why}`);
    return;
  }
  const expected: number[] = [];
  for (let i = 0; i < rounds; i++) expected.push(earlyStatus, 200);
  assert.deepEqual(o.statuses, expected, `the next request on the connection got no answer within ${NEXT_WITHIN_MS} ms; ${why}`);
}

const SIZES = [20_000, 200_000, BODY_LIMIT + 100_000];

interface EarlyCase {
  name: string;
  status: number;
  make(body: Buffer, framing: 'length' | 'chunked'): Buffer;
}

const json = { 'Content-Type': 'application/json', Accept: 'application/json' };
let token = '';

const cases: EarlyCase[] = [
  { name: '401 (no token, answered before the body is read)', status: 401, make: (b, f) => request('PUT', '/v1/animals', json, b, f) },
  { name: '400 (the token endpoint takes no JSON)', status: 400, make: (b, f) => request('POST', '/oauth/token', json, b, f) },
  { name: '404', status: 404, make: (b, f) => request('POST', '/nothing-here', json, b, f) },
  { name: '405', status: 405, make: (b, f) => request('PATCH', '/oauth/token', json, b, f) },
  { name: '415 (Accept without JSON)', status: 415, make: (b, f) => request('POST', '/v1/animals', { ...json, Accept: 'application/xml', Authorization: `Bearer ${token}` }, b, f) },
];

describe('keep-alive after an early answer', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    token = await clientToken(server, 'keep-alive');
  });
  after(() => server?.cleanup());

  for (const c of cases)
    for (const size of SIZES)
      for (const pipelined of [false, true])
        for (const framing of ['length', 'chunked'] as const)
          test(`${c.name}: ${size} bytes (${framing}), next request ${pipelined ? 'pipelined behind it' : 'after the answer'}`, async () => {
            // A body declared over the limit is refused before the route is looked up.
            const status = size > BODY_LIMIT && c.status !== 401 && c.status !== 415 ? 413 : c.status;
            const first = c.make(jsonBody(size), framing);
            assertUsable(await exchange(server, first, pipelined, 2), status, 2);
          });

  test('413: a Content-Length over the limit is answered at once, with Connection: close', async () => {
    assert.ok(token, 'a client_credentials token');
    for (const pipelined of [false, true]) {
      const first = request('POST', '/v1/animals', { ...json, Authorization: `Bearer ${token}` }, jsonBody(BODY_LIMIT + 100_000));
      const o = await exchange(server, first, pipelined);
      assertUsable(o, 413);
      assert.ok(o.saidClose, 'a body over the limit is not drained: the connection closes');
    }
  });

  test('413: a chunked body over the limit', async () => {
    const first = request('POST', '/v1/animals', { ...json, Authorization: `Bearer ${token}` }, jsonBody(BODY_LIMIT + 100_000), 'chunked');
    assertUsable(await exchange(server, first, false), 413);
  });

  test('a request sent behind an answer that closes the connection is not processed', async () => {
    // A chunked body answered 401 closes the connection; the POST sent after that answer would
    // create a zoo. (One sent in the same packets as the body may be read, and run, before the
    // 401 is decided: Node reads pipelined requests ahead.)
    const name = `behind-close-${Date.now()}`;
    const create = Buffer.from(JSON.stringify({ name }));
    const behind = request('POST', '/v1/zoos', { ...json, Authorization: `Bearer ${token}` }, create);
    const o = await exchange(server, request('PUT', '/v1/animals', json, jsonBody(200_000), 'chunked'), false, 1, behind);
    assert.deepEqual(o.statuses, [401], o.text.slice(0, 300));
    assert.ok(o.saidClose && o.closed);
    const list = await server.json('GET', '/v1/zoos?limit=100', undefined, { authorization: `Bearer ${token}` });
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.filter((z: { name: string }) => z.name === name), []);
    // The same POST on a connection of its own does create it (the check above can fail).
    const made = await server.json('POST', '/v1/zoos', { name }, { authorization: `Bearer ${token}` });
    assert.equal(made.status, 201, made.text);
  });

  test('503 in maintenance', async () => {
    assert.equal(server.cli(['maintenance', 'on']).status, 0);
    try {
      for (let i = 0; i < 40 && (await server.json('GET', '/v1/animals')).status !== 503; i++) await sleep(100);
      for (const size of SIZES)
        for (const pipelined of [false, true]) {
          const o = await exchange(server, request('PUT', '/v1/animals', json, jsonBody(size)), pipelined, 2);
          if (process.env.KA_FULL) console.log(size, pipelined, o.statuses, o.closed, o.saidClose);
          assertUsable(o, 503, 2);
        }
    } finally {
      server.cli(['maintenance', 'off']);
    }
  });
});

describe('keep-alive after an early answer: quota and turn gate', () => {
  test('429 (quota per IP exceeded)', async () => {
    const server = await startServer({ config: { api: { rateLimit: { max: 2, window: 600 } } } });
    try {
      for (let i = 0; i < 3; i++) await server.json('GET', '/v1/animals');
      for (const size of SIZES)
        for (const pipelined of [false, true]) assertUsable(await exchange(server, request('PUT', '/v1/animals', json, jsonBody(size)), pipelined, 2), 429, 2);
    } finally {
      await server.cleanup();
    }
  });

  test('requests that waited for the turn gate, answered 401', async () => {
    // A budget this small makes every request after a turn's first wait for a later turn.
    const server = await startServer({ env: { GATEHOUSE_TURN_BUDGET_MS: '0.001' } });
    try {
      for (const size of SIZES)
        for (const pipelined of [false, true])
          for (const framing of ['length', 'chunked'] as const)
            assertUsable(await exchange(server, request('PUT', '/v1/animals', json, jsonBody(size), framing), pipelined, 3), 401, 3);
    } finally {
      await server.cleanup();
    }
  });
});
