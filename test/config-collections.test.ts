// The resource API follows the config, not the demo: other collections (shared access, boolean
// and number filters), another API version with retired ones, other limits, and a publicUrl
// with a path under which every route is served.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { validate } from '@readme/openapi-parser';
import { freePort } from './helpers/server.js';
import { startApp, type InProcessApp } from './helpers/app.js';
import { apiClient, assertApiError, type ApiClient } from './helpers/tokens.js';

let server: InProcessApp;
let base: string; // https://127.0.0.1:<port>/api
let a: ApiClient;
let b: ApiClient;
const SCOPES = 'notes:read notes:write tags:read tags:write';

before(async () => {
  const port = await freePort();
  base = `https://127.0.0.1:${port}/api`;
  server = await startApp({
    rawConfig: {
      server: { host: '127.0.0.1', port, publicUrl: base },
      auth: { demo: false },
      api: { version: 2, retiredVersions: [0, 1], defaultLimit: 3, maxLimit: 5 },
      collections: {
        notes: {
          access: 'shared',
          schema: {
            type: 'object',
            required: ['text'],
            properties: { text: { type: 'string' }, pinned: { type: 'boolean' }, score: { type: 'number' }, meta: { type: 'object' } },
          },
          filters: ['pinned', 'score'],
          sort: ['score'],
        },
        tags: { parent: { collection: 'notes', field: 'note_id' }, schema: { type: 'object', properties: { label: { type: 'string' } } } },
      },
    },
  });
  assert.equal(server.url, base);
  a = await apiClient(server, 'cfg-a', SCOPES);
  b = await apiClient(server, 'cfg-b', SCOPES);
  for (const [text, pinned, score] of [['one', true, 1.5], ['two', false, 2.5], ['three', true, 2.5], ['four', false, 4], ['five', true, 5], ['six', false, 6]] as const)
    assert.equal((await a.json('POST', '/v2/notes', { text, pinned, score })).status, 201);
});
after(async () => {
  await server.cleanup();
});

test('every route is served under the path of publicUrl, and links carry it', async () => {
  assert.equal(new URL(server.authUrl).pathname, '/api/oauth');
  const res = await a.json('POST', '/v2/notes', { text: 'linked' });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.headers.get('location'), `${base}/v2/notes/${res.body.id}`);
  assert.equal(res.body.link.self.href, `${base}/v2/notes/${res.body.id}`);
  assert.equal(res.body.link.tags.href, `${base}/v2/notes/${res.body.id}/tags`);
  const root = await server.json('GET', '/');
  assert.equal(root.status, 200);
  assert.equal(root.body.link.self.href, `${base}/`);
  const outside = await server.fetch(`${new URL(base).origin}/v2/notes`, { headers: { accept: 'application/json', authorization: `Bearer ${a.token}` } });
  assert.equal(outside.status, 404, 'nothing is served outside the base path');
  assert.match(outside.headers.get('content-type')!, /^application\/json/);
});

test('the configured version is current, the retired ones answer 410', async () => {
  assertApiError(await a.json('GET', '/v1/notes'), 410, ['version']);
  assertApiError(await a.json('GET', '/v0/notes'), 410, ['version']);
  assertApiError(await a.json('GET', '/v3/notes'), 404);
  const index = await server.json('GET', '/v2');
  assert.deepEqual(index.body.collections.map((c: any) => c.name).sort(), ['notes', 'tags']);
});

test('a shared collection: every subject sees and changes the same records', async () => {
  const note = (await a.json('POST', '/v2/notes', { text: 'shared' })).body;
  const seen = await b.json('GET', `/v2/notes/${note.id}`);
  assert.equal(seen.status, 200);
  assert.equal(seen.body.owner, 'client:cfg-a');
  const patched = await b.json('PATCH', `/v2/notes/${note.id}`, { text: 'edited by b' });
  assert.equal(patched.status, 200);
  assert.equal(patched.body.owner, 'client:cfg-a', 'the owner stays the creator');
  const tag = await b.json('POST', `/v2/notes/${note.id}/tags`, { label: 'x' });
  assert.equal(tag.status, 201, 'children inherit the shared access');
  assert.equal((await a.json('GET', `/v2/notes/${note.id}/tags`)).body.length, 1);
});

test('boolean and number filters take typed values; malformed ones are 400 naming the field', async () => {
  const pinned = await a.json('GET', '/v2/notes?pinned=true&limit=5');
  assert.deepEqual(pinned.body.map((n: any) => n.text), ['one', 'three', 'five']);
  assert.equal(pinned.headers.get('x-total-count'), '3');
  const scored = await a.json('GET', '/v2/notes?score=2.5');
  assert.deepEqual(scored.body.map((n: any) => n.text), ['two', 'three']);
  const both = await a.json('GET', '/v2/notes?score=2.5&pinned=false');
  assert.deepEqual(both.body.map((n: any) => n.text), ['two']);
  for (const bad of ['pinned=1', 'pinned=yes', 'score=abc', 'score=']) assertApiError(await a.json('GET', `/v2/notes?${bad}`), 400, [bad.split('=')[0]]);
});

test('the configured limits: defaultLimit 3, maxLimit 5', async () => {
  const res = await a.json('GET', '/v2/notes?sortby=score&order=desc');
  assert.equal(res.body.length, 3);
  assert.deepEqual(res.body.map((n: any) => n.score), [6, 5, 4]);
  assert.match(res.headers.get('link')!, new RegExp(`<${base.replace(/\./g, '\\.')}/v2/notes\\?[^>]*limit=3&after=[^>]*>; rel="next"`));
  assert.equal((await a.json('GET', '/v2/notes?limit=5')).body.length, 5);
  assertApiError(await a.json('GET', '/v2/notes?limit=6'), 400, ['limit']);
});

test('a nested object field is merged by PATCH (RFC 7396) and validated', async () => {
  const note = (await a.json('POST', '/v2/notes', { text: 'meta', meta: { a: 1, b: { c: 2, d: 3 } } })).body;
  const res = await a.json('PATCH', `/v2/notes/${note.id}`, { meta: { b: { c: null, e: 4 }, f: 5 } });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body.meta, { a: 1, b: { d: 3, e: 4 }, f: 5 });
  assertApiError(await a.json('PATCH', `/v2/notes/${note.id}`, { meta: 'flat' }), 400, ['meta']);
});

test('a very deeply nested object field is a 4xx, never a 500, and the server keeps serving', async () => {
  const note = (await a.json('POST', '/v2/notes', { text: 'deep' })).body;
  const depth = 150_000;
  const deep = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  for (const [method, url] of [['POST', '/v2/notes'], ['PATCH', `/v2/notes/${note.id}`], ['PUT', `/v2/notes/${note.id}`]] as const) {
    const res = await a.json(method, url, `{"text":"deep","meta":${deep}}`);
    assert.ok(res.status >= 400 && res.status < 500, `${method}: ${res.status} ${res.text.slice(0, 200)}`);
    assertApiError(res, res.status);
  }
  assert.deepEqual((await a.json('GET', `/v2/notes/${note.id}`)).body, note);
});

test('the OpenAPI document of this config is valid and lists its routes under the base path', async () => {
  const doc = (await server.json('GET', '/v2/openapi.json')).body;
  const result = await validate(structuredClone(doc));
  assert.equal(result.valid, true, JSON.stringify((result as any).errors));
  const urls = Object.keys(doc.paths).map((p) => `${doc.servers[0].url}${p}`);
  assert.ok(urls.some((u) => u === `${base}/v2/notes`), urls.join(', '));
  assert.ok(urls.some((u) => /\/v2\/notes\/\{[^}]+\}\/tags$/.test(u)));
});

test('under a public URL with a path, browser cookies are __Host- (Path=/) and carry the path in their names', async () => {
  const res = await server.fetch(`${base}/oauth/account`, { headers: { accept: 'text/html' } });
  assert.equal(res.status, 200);
  const cookies = res.headers.getSetCookie();
  assert.equal(cookies.length, 1, cookies.join('\n'));
  assert.match(cookies[0], /^__Host-gatehouse_browser_api=[A-Za-z0-9_.-]+; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
  const admin = await server.fetch(`${base}/admin`, { headers: { accept: 'text/html' } });
  assert.match(admin.headers.getSetCookie()[0] ?? '', /^__Host-gatehouse_admin_browser_api=[A-Za-z0-9_.-]+; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
});
