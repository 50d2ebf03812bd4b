// A config that changed after records were stored (docs/api.md, "PATCH"): a merge patch is checked
// on the fields it sets and the required ones, so a record stored under an earlier schema can
// still be edited; a whole replacement (PUT) is checked whole. Two apps, one after the other, on
// one SQLite file: the first with the earlier config.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startApp, type InProcessApp } from './helpers/app.js';
import { demoConfig } from './helpers/server.js';
import { asBearer, assertApiError, clientToken, type ApiClient } from './helpers/tokens.js';

const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-evolution-'));
const database = `sqlite:${path.join(dir, 'gatehouse.db')}`;
let server: InProcessApp;
let a: ApiClient;
let legacyId: string;

before(async () => {
  // The earlier config: zoos had a `region` string, and `founded` was a string.
  const zoos = demoConfig().collections.zoos;
  const earlier = await startApp({
    database,
    config: { collections: { zoos: { schema: { ...zoos.schema, properties: { ...zoos.schema.properties, region: { type: 'string' }, founded: { type: 'string' } } } } } },
  });
  const token = await clientToken(earlier, 'evolution');
  const created = await asBearer(earlier, token).json('POST', '/v1/zoos', { name: 'Old Zoo', city: 'Berlin', region: 'Brandenburg', founded: '1844' });
  assert.equal(created.status, 201, created.text);
  legacyId = created.body.id;
  await earlier.cleanup();

  server = await startApp({ database });
  a = asBearer(server, token);
});
after(async () => {
  await server?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

test('PATCH of a field the request sets works on a record stored under an earlier schema; the rest stays as stored', async () => {
  const patched = await a.json('PATCH', `/v1/zoos/${legacyId}`, { name: 'Renamed Zoo' }, { 'content-type': 'application/merge-patch+json' });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.body.name, 'Renamed Zoo');
  assert.equal(patched.body.region, 'Brandenburg', 'not touched, kept');
  const fixed = await a.json('PATCH', `/v1/zoos/${legacyId}`, { founded: 1844, region: null }, { 'content-type': 'application/merge-patch+json' });
  assert.equal(fixed.status, 200, fixed.text);
  assert.equal(fixed.body.founded, 1844);
  assert.equal('region' in fixed.body, false);
});

test('what a PATCH sets is checked against the schema; a required field stays required', async () => {
  const created = await a.json('POST', '/v1/zoos', { name: 'New Zoo', city: 'Vienna', founded: 1752 });
  assert.equal(created.status, 201, created.text);
  const wrongType = await a.json('PATCH', `/v1/zoos/${created.body.id}`, { founded: 'long ago' }, { 'content-type': 'application/merge-patch+json' });
  assertApiError(wrongType, 400, ['founded']);
  const unknown = await a.json('PATCH', `/v1/zoos/${created.body.id}`, { region: 'Lower Austria' }, { 'content-type': 'application/merge-patch+json' });
  assertApiError(unknown, 400, ['region']);
  assert.equal(unknown.body.detail.region, 'is not a field of zoos');
  const unset = await a.json('PATCH', `/v1/zoos/${created.body.id}`, { name: null }, { 'content-type': 'application/merge-patch+json' });
  assertApiError(unset, 400, ['name']);
  assert.equal(unset.body.detail.name, 'is required');
  const read = await a.json('GET', `/v1/zoos/${created.body.id}`);
  assert.equal(read.body.name, 'New Zoo', 'nothing changed');
  assert.equal(read.body.founded, 1752);
});

test('PUT replaces the whole record and checks all of it', async () => {
  const created = await a.json('POST', '/v1/zoos', { name: 'Put Zoo', city: 'Prague', founded: 1931 });
  const put = await a.json('PUT', `/v1/zoos/${created.body.id}`, { name: 'Put Zoo', city: 'Prague', founded: 'then' });
  assertApiError(put, 400, ['founded']);
});
