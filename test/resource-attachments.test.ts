// Attachments (DESIGN 422): multipart or raw uploads; a file over maxBytes, of an undeclared type,
// or whose bytes do not match its type is 422 and nothing is stored; metadata by default, the
// bytes when Accept names the file's type; access rules as for the record. Bytes are validated
// deeply (src/api/file-types.ts): a corrupt file is 422 with what is wrong.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { FormData } from 'undici';
import { startServer, type TestServer } from './helpers/server.js';
import { apiClient, assertApiError, type ApiClient } from './helpers/tokens.js';
import { tinyPdf, tinyPng } from './helpers/files.js';

const PNG = tinyPng();
let server: TestServer;
let owner: ApiClient;
let article: string;

before(async () => {
  server = await startServer({ config: { collections: { articles: { attachments: { maxBytes: 1024, types: ['image/png', 'application/pdf'] } } } } });
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
