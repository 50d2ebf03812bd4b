// Where a person is looking (the authorization server's URLs), a browser that prefers HTML gets
// the styled error page for 404, 405 and 503; API clients get the JSON body; /v1 is JSON always.
// A maintenance 503 is logged as a warning without a stack.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { sleep } from './helpers/oauth.js';

const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'; // what Chromium sends
let server: InProcessApp;
before(async () => {
  server = await startApp({ file: true });
});
after(async () => server?.cleanup());

async function get(target: string, accept?: string, method = 'GET') {
  const res = await server.fetch(target, { method, headers: accept ? { accept } : {} });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

function assertPage(r: { status: number; headers: Headers; text: string }, status: number, title: RegExp) {
  assert.equal(r.status, status);
  assert.match(r.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(r.text, title);
  assert.match(r.headers.get('content-security-policy') ?? '', /default-src 'none'.*frame-ancestors 'none'/);
  assert.equal(r.headers.get('cache-control'), 'no-store');
}

function assertJson(r: { status: number; headers: Headers; text: string }, status: number) {
  assert.equal(r.status, status, r.text);
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
  const body = JSON.parse(r.text);
  assert.equal(typeof body.error, 'string');
}

test('an unknown /oauth URL: a 404 page for a browser, JSON for an API client', async () => {
  assertPage(await get('/oauth/account-typo', HTML), 404, /<title>Page not found · gatehouse<\/title>/);
  assertJson(await get('/oauth/account-typo', 'application/json'), 404);
  assertJson(await get('/oauth/account-typo'), 404);
});

test('a method /oauth/authorize does not take: a 405 page with Allow', async () => {
  const r = await get('/oauth/authorize', HTML, 'DELETE');
  assertPage(r, 405, /Not available this way/);
  assert.match(r.headers.get('allow') ?? '', /GET/);
  assertJson(await get('/oauth/authorize', 'application/json', 'DELETE'), 405);
});

test('/v1 answers JSON whatever the browser prefers', async () => {
  const r = await get('/v1/zoos-typo', HTML);
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
  assert.ok(r.status >= 400);
});

test('maintenance: a 503 page with Retry-After on /oauth for a browser, JSON elsewhere, logged as a warning without a stack', async () => {
  assert.equal((await server.cli(['maintenance', 'on'])).status, 0);
  try {
    let r = await get('/oauth/authorize?response_type=code&client_id=x', HTML);
    for (let i = 0; i < 30 && r.status !== 503; i++) {
      await sleep(100);
      r = await get('/oauth/authorize?response_type=code&client_id=x', HTML);
    }
    assertPage(r, 503, /Temporarily unavailable[^]*maintenance/);
    assert.ok(Number(r.headers.get('retry-after')) > 0);
    assertJson(await get('/oauth/authorize?response_type=code&client_id=x', 'application/json'), 503);
    assertJson(await get('/v1/zoos', HTML), 503);
    await sleep(200);
    const lines = server
      .output()
      .split('\n')
      .filter((l) => l.includes('"statusCode":503') || l.includes('"status":503'));
    assert.ok(lines.length > 0, 'the 503s are logged');
    for (const line of lines) {
      const record = JSON.parse(line);
      assert.equal(record.level, 40, line);
      assert.equal(JSON.stringify(record).includes('"stack"'), false, line);
    }
  } finally {
    assert.equal((await server.cli(['maintenance', 'off'])).status, 0);
  }
});
