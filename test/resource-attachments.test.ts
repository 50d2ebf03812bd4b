// Attachments (docs/api.md#attachments): multipart or raw uploads; a file over maxBytes, of an undeclared type,
// or whose bytes do not match its type is 422 and nothing is stored; metadata by default, the
// bytes when Accept names the file's type; access rules as for the record. Bytes are validated
// deeply (src/api/file-types.ts): a corrupt file is 422 with what is wrong.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FormData } from 'undici';
import { startApp, type InProcessApp } from './helpers/app.js';
import { apiClient, assertApiError, type ApiClient } from './helpers/tokens.js';
import { tinyPdf, tinyPng } from './helpers/files.js';

const PNG = tinyPng();
let server: InProcessApp;
let owner: ApiClient;
let article: string;

before(async () => {
  server = await startApp({ config: { collections: { articles: { attachments: { maxBytes: 1024, types: ['image/png', 'application/pdf'] } } } } });
  owner = await apiClient(server, 'writer', 'articles:read articles:write');
  article = (await owner.json('POST', '/v1/articles', { title: 'With files' })).body.id;
});
after(async () => {
  await server?.cleanup();
});

const base = () => `/v1/articles/${article}/attachments`;
async function upload(client: ApiClient, body: Buffer | FormData, headers: Record<string, string> = {}) {
  const res = await client.fetch(base(), { method: 'POST', body, headers: { accept: 'application/json', ...headers } });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : null };
}
const count = async () => (await owner.json('GET', base())).body.length as number;

test('a raw upload of a declared type is stored: 201, Location, metadata; listed; downloadable by Accept', async () => {
  const res = await upload(owner, PNG, { 'content-type': 'image/png', 'content-disposition': 'attachment; filename="dot.png"' });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.filename, 'dot.png');
  assert.equal(res.body.content_type, 'image/png');
  assert.equal(res.body.size, PNG.length);
  assert.equal(res.headers.get('location'), res.body.link.self.href);
  const list = await owner.json('GET', base());
  assert.ok(list.body.some((a: { id: string }) => a.id === res.body.id));
  const meta = await owner.json('GET', `${base()}/${res.body.id}`);
  assert.equal(meta.body.sha256.length, 64);
  const file = await owner.fetch(`${base()}/${res.body.id}`, { headers: { accept: 'image/png' } });
  assert.equal(file.status, 200);
  assert.equal(file.headers.get('content-type'), 'image/png');
  assert.deepEqual(Buffer.from(await file.arrayBuffer()), PNG);
  assertApiError(await owner.json('GET', `${base()}/${res.body.id}`, undefined, { accept: 'application/xml' }), 415);
});

test('a multipart upload is stored too', async () => {
  const form = new FormData();
  form.append('file', new File([PNG], 'form.png', { type: 'image/png' }));
  const res = await upload(owner, form);
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.filename, 'form.png');
});

test('too large, undeclared type, or bytes that are not what the type says: 422 and nothing stored', async () => {
  const before = await count();
  const big = Buffer.concat([Buffer.from('%PDF-'), Buffer.alloc(2000)]);
  assertApiError(await upload(owner, big, { 'content-type': 'application/pdf' }), 422, ['file']);
  const form = new FormData();
  form.append('file', new File([big], 'big.pdf', { type: 'application/pdf' }));
  assertApiError(await upload(owner, form), 422, ['file']);
  assertApiError(await upload(owner, Buffer.from('GIF89a...'), { 'content-type': 'image/gif' }), 422, ['content-type']);
  assertApiError(await upload(owner, Buffer.from('not a png at all'), { 'content-type': 'image/png' }), 422, ['file']);
  assert.equal(await count(), before);
});

test('access: another owner gets 403, a read-only token 405 on upload, no token 401; DELETE answers 204', async () => {
  const other = await apiClient(server, 'stranger', 'articles:read articles:write');
  assert.equal((await upload(other, PNG, { 'content-type': 'image/png' })).status, 403);
  const reader = await apiClient(server, 'writer', 'articles:read');
  const denied = await upload(reader, PNG, { 'content-type': 'image/png' });
  assert.equal(denied.status, 405);
  assert.equal(denied.headers.get('allow'), 'GET, HEAD');
  assert.equal((await server.json('GET', base())).status, 401);
  const created = await upload(owner, PNG, { 'content-type': 'image/png' });
  assert.equal((await owner.json('DELETE', `${base()}/${created.body.id}`)).status, 204);
  assert.equal((await owner.json('GET', `${base()}/${created.body.id}`)).status, 404);
  assert.equal((await owner.json('GET', '/v1/orders/x/attachments')).status, 404, 'orders have no attachments');
});

test('a corrupt or truncated file of a validated type: 422 naming file and what is wrong, nothing stored', async () => {
  const before = await count();
  const badCrc = Buffer.from(PNG);
  badCrc[PNG.length - 13] ^= 0xff;
  const res = await upload(owner, badCrc, { 'content-type': 'image/png' });
  assertApiError(res, 422, ['file']);
  assert.equal(res.body.detail.file, 'is not a valid image/png file: chunk IDAT has a bad CRC');
  const truncated = await upload(owner, PNG.subarray(0, PNG.length - 12), { 'content-type': 'image/png' });
  assert.equal(truncated.body.detail.file, 'is not a valid image/png file: ends without an IEND chunk');
  const form = new FormData();
  form.append('file', new File([tinyPdf().subarray(0, 100)], 'cut.pdf', { type: 'application/pdf' }));
  const pdf = await upload(owner, form);
  assertApiError(pdf, 422, ['file']);
  assert.equal(pdf.body.detail.file, 'is not a valid application/pdf file: does not end with %%EOF');
  assert.equal(await count(), before);
  assert.equal((await upload(owner, tinyPdf(), { 'content-type': 'application/pdf' })).status, 201);
});

test('link.content answers the bytes whatever Accept says (*/*, none, application/json, the type itself), with download headers', async () => {
  const created = await upload(owner, PNG, { 'content-type': 'image/png', 'content-disposition': 'attachment; filename="dot.png"' });
  const href: string = created.body.link.content.href;
  assert.equal(href, `${created.body.link.self.href}/content`);
  assert.deepEqual(created.body.link.content, { href, title: 'The file dot.png', type: 'image/png' });
  assert.deepEqual((await owner.json('GET', `${base()}/${created.body.id}`)).body.link.content, created.body.link.content);
  const listed = (await owner.json('GET', base())).body.find((a: { id: string }) => a.id === created.body.id);
  assert.deepEqual(listed.link.content, created.body.link.content);

  const sha = createHash('sha256').update(PNG).digest('hex');
  const check = (status: number, headers: { get(name: string): string | null }, body: Buffer, accept: string) => {
    assert.equal(status, 200, accept);
    assert.equal(headers.get('content-type'), 'image/png', accept);
    assert.equal(headers.get('content-disposition'), 'attachment; filename="dot.png"', accept);
    assert.equal(headers.get('x-content-type-options'), 'nosniff', accept);
    assert.equal(headers.get('etag'), `"${sha}"`, accept);
    assert.equal(headers.get('content-length'), String(PNG.length), accept);
    assert.deepEqual(body, PNG, accept);
  };
  for (const accept of ['*/*', 'application/json', 'image/png', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'application/xml']) {
    const res = await owner.fetch(href, { headers: { accept } });
    check(res.status, res.headers, Buffer.from(await res.arrayBuffer()), accept);
  }
  // No Accept header at all (fetch would add */*): request sends only what it is given.
  const bare = await server.request(href, { headers: { authorization: `Bearer ${owner.token}` } });
  check(bare.statusCode, { get: (n) => (bare.headers[n] as string | undefined) ?? null }, Buffer.from(await bare.body.arrayBuffer()), 'none');

  const head = await owner.fetch(href, { method: 'HEAD', headers: { accept: '*/*' } });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get('content-length'), String(PNG.length));
  assert.equal(head.headers.get('content-type'), 'image/png');
  assert.equal(head.headers.get('etag'), `"${sha}"`);
  assert.equal(head.headers.get('content-disposition'), 'attachment; filename="dot.png"');
  assert.equal((await head.arrayBuffer()).byteLength, 0);

  // The metadata URL negotiates as before: JSON for */*, the bytes only when Accept names the type.
  assert.equal((await owner.json('GET', `${base()}/${created.body.id}`, undefined, { accept: '*/*' })).body.id, created.body.id);
  const named = await owner.fetch(`${base()}/${created.body.id}`, { headers: { accept: 'image/png' } });
  check(named.status, named.headers, Buffer.from(await named.arrayBuffer()), 'metadata URL, image/png');
});

test('a non-ASCII file name: an ASCII filename and the real one in filename* (RFC 6266/8187)', async () => {
  const created = await upload(owner, PNG, { 'content-type': 'image/png', 'content-disposition': "attachment; filename*=UTF-8''%C3%A9t%C3%A9%20(1).png" });
  assert.equal(created.body.filename, 'été (1).png');
  const res = await owner.fetch(created.body.link.content.href);
  assert.equal(res.headers.get('content-disposition'), `attachment; filename="_t_ (1).png"; filename*=UTF-8''%C3%A9t%C3%A9%20%281%29.png`);
  assert.deepEqual(Buffer.from(await res.arrayBuffer()), PNG);
});

test('the content URL answers 401/403/404/405 exactly as the metadata URL', async () => {
  const created = await upload(owner, PNG, { 'content-type': 'image/png' });
  const meta = `${base()}/${created.body.id}`;
  const clients: [string, ApiClient | null][] = [
    ['no token', null],
    ['another owner', await apiClient(server, 'stranger', 'articles:read articles:write')],
    ['no scope on articles', await apiClient(server, 'writer', 'zoos:read')],
    ['write scope only', await apiClient(server, 'writer', 'articles:write')],
    ['the owner', owner],
  ];
  const expected: Record<string, number> = { 'no token': 401, 'another owner': 403, 'no scope on articles': 403, 'write scope only': 405, 'the owner': 200 };
  for (const [who, client] of clients) {
    const get = (url: string) => (client ? client.fetch(url, { headers: { accept: '*/*' } }) : server.fetch(url, { headers: { accept: '*/*' } }));
    const [m, c] = await Promise.all([get(meta), get(`${meta}/content`)]);
    assert.equal(c.status, expected[who], who);
    assert.equal(c.status, m.status, who);
    // Allow lists what this token may do on each URL: the content URL has no write method.
    assert.equal(c.headers.get('allow'), who === 'write scope only' ? '' : m.headers.get('allow'), who);
    const text = await c.text();
    if (c.status !== 200) assertApiError({ status: c.status, headers: c.headers, text, body: JSON.parse(text) }, expected[who]);
  }
  assertApiError(await owner.json('GET', `${base()}/00000000-0000-7000-8000-000000000000/content`), 404, ['attachmentId']);
  assert.equal((await owner.json('GET', `/v1/articles/00000000-0000-7000-8000-000000000000/attachments/${created.body.id}/content`)).status, 404);
  const del = await owner.json('DELETE', `${meta}/content`);
  assertApiError(del, 405);
  assert.equal(del.headers.get('allow'), 'GET, HEAD');
});

test('the OpenAPI document lists the content URL', async () => {
  const doc = (await server.json('GET', '/v1/openapi.json')).body;
  const path = doc.paths['/articles/{id}/attachments/{attachment_id}/content'];
  assert.equal(path.get.operationId, 'get_articles_attachment_content');
  assert.deepEqual(Object.keys(path.get.responses['200'].content), ['image/png', 'application/pdf']);
});

test('a JSON body shaped like a spooled upload names no file: 422, nothing stored, nothing read or removed', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'not-an-upload-'));
  const file = path.join(dir, 'body');
  writeFileSync(file, tinyPdf());
  try {
    const before = await count();
    const res = await owner.json('POST', base(), { file, size: tinyPdf().length, sha256: Buffer.alloc(32).toString('hex') });
    assertApiError(res, 422, ['file']);
    assert.match(res.body.error, /file is required/i);
    assert.equal(await count(), before);
    assert.ok(existsSync(file), 'the named file is still there');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
