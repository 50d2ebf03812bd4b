// The entry points that need no token: GET / (versions), GET /v1 (collections with links) and
// GET /v1/openapi.json (a valid OpenAPI 3.1 document generated from the config).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { validate } from '@readme/openapi-parser';
import { startApp, type InProcessApp } from './helpers/app.js';

let server: InProcessApp;
before(async () => {
  server = await startApp();
});
after(async () => {
  await server.cleanup();
});

function assertLink(l: any, href: string) {
  assert.equal(l.href, href);
  assert.equal(typeof l.title, 'string');
  assert.ok(l.title.length > 0);
  assert.equal(l.type, 'application/json');
}

test('GET / lists the versions: v1 current, v0 retired, with absolute https links', async () => {
  const res = await server.json('GET', '/');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^application\/json/);
  const current = res.body.versions.find((v: any) => v.status === 'current');
  assert.equal(current.version, 'v1');
  assertLink(current.link.self, `${server.url}/v1`);
  assert.deepEqual(
    res.body.versions.filter((v: any) => v.status === 'retired').map((v: any) => v.version),
    ['v0'],
  );
  assertLink(res.body.link.self, `${server.url}/`);
  assertLink(res.body.link.openapi, `${server.url}/v1/openapi.json`);
  for (const l of Object.values(res.body.link) as any[]) assert.match(l.href, /^https:\/\//);
  // The links lead somewhere real.
  assert.equal((await server.json('GET', res.body.link.openapi.href)).status, 200);
  assert.equal((await server.json('GET', res.body.link.health.href)).status, 200);
});

test('GET /v1 lists every configured collection with its parent, scopes and link', async () => {
  const res = await server.json('GET', '/v1');
  assert.equal(res.status, 200);
  assert.equal(res.body.version, 'v1');
  const byName = Object.fromEntries(res.body.collections.map((c: any) => [c.name, c]));
  assert.deepEqual(Object.keys(byName).sort(), ['animals', 'articles', 'orders', 'zoos']);
  assert.equal(byName.animals.parent, 'zoos');
  assert.equal(byName.zoos.parent, null);
  assert.deepEqual(byName.zoos.scopes, ['zoos:read', 'zoos:write']);
  for (const c of res.body.collections) assertLink(c.link.self, `${server.url}/v1/${c.name}`);
  assertLink(res.body.link.self, `${server.url}/v1`);
  assertLink(res.body.link.openapi, `${server.url}/v1/openapi.json`);
  for (const name of Object.keys(byName)) assertLink(res.body.link[name], `${server.url}/v1/${name}`);
});

test('HEAD / and HEAD /v1 answer like GET without a body', async () => {
  for (const path of ['/', '/v1', '/v1/openapi.json']) {
    const get = await server.fetch(path);
    const getBody = await get.arrayBuffer();
    const head = await server.fetch(path, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal((await head.arrayBuffer()).byteLength, 0);
    assert.equal(head.headers.get('content-length'), String(getBody.byteLength));
    assert.equal(head.headers.get('content-type'), get.headers.get('content-type'));
  }
});

test('GET /v1/openapi.json is a valid OpenAPI 3.1 document (checked by @readme/openapi-parser)', async () => {
  const res = await server.json('GET', '/v1/openapi.json');
  assert.equal(res.status, 200);
  assert.match(res.body.openapi, /^3\.1\.\d+$/);
  const result = await validate(structuredClone(res.body));
  assert.equal(result.valid, true, JSON.stringify((result as any).errors ?? result, null, 2));
});

test('the OpenAPI document describes the configured collections, their routes and their schemas', async () => {
  const doc = (await server.json('GET', '/v1/openapi.json')).body;
  const paths = Object.keys(doc.paths);
  for (const p of ['/zoos', '/zoos/{id}', '/zoos/{id}/animals', '/animals', '/animals/{id}', '/orders', '/orders/{id}', '/articles']) {
    const full = paths.find((x) => x === p || x === `/v1${p}` || x.replace(/\{[^}]+\}/g, '{id}') === p || x.replace(/\{[^}]+\}/g, '{id}') === `/v1${p}`);
    assert.ok(full, `path ${p} in ${paths.join(', ')}`);
  }
  const server0 = doc.servers?.[0]?.url ?? '';
  assert.ok(server0.startsWith(server.url), `servers[0].url ${server0} under ${server.url}`);
  const zoosList = doc.paths[paths.find((x) => /zoos$/.test(x) && !x.includes('{'))!];
  assert.ok(zoosList.get && zoosList.post);
  const paramNames = (zoosList.get.parameters ?? []).map((p: any) => p.name ?? p.$ref);
  for (const n of ['limit', 'offset', 'sortby', 'order', 'city', 'founded']) assert.ok(paramNames.some((x: string) => x.includes(n)), `list parameter ${n}`);
  const zoosRecord = doc.paths[paths.find((x) => /zoos\/\{[^}]+\}$/.test(x))!];
  for (const m of ['get', 'put', 'patch', 'delete']) assert.ok(zoosRecord[m], `zoos record ${m}`);
  const schemas = JSON.stringify(doc.components?.schemas ?? {});
  assert.match(schemas, /"founded"/);
  assert.match(schemas, /"species"/);
  assert.ok(doc.components?.securitySchemes, 'security schemes are declared');
});
