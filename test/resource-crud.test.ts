// Every resource operation of docs/api.md over HTTPS against a real server: zoos and animals nested
// under zoos, links, ETags and If-Match, validation, server-owned fields, tombstones, ownership,
// method override and 405 + Allow.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startApp, type InProcessApp } from './helpers/app.js';
import { apiClient, assertApiError, type ApiClient } from './helpers/tokens.js';

let server: InProcessApp;
let a: ApiClient; // owner A: every scope
let b: ApiClient; // owner B: every scope
let readOnly: ApiClient; // client A's subject? no: a third client with zoos:read only
let noZoos: ApiClient; // orders only

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

before(async () => {
  server = await startApp();
  a = await apiClient(server, 'crud-a');
  b = await apiClient(server, 'crud-b');
  readOnly = await apiClient(server, 'crud-reader', 'zoos:read');
  noZoos = await apiClient(server, 'crud-orders', 'orders:read orders:write');
});
after(async () => {
  await server.cleanup();
});

async function createZoo(client: ApiClient, body: Record<string, unknown> = { name: 'Tierpark', city: 'Berlin', founded: 1955 }) {
  const res = await client.json('POST', '/v1/zoos', body);
  assert.equal(res.status, 201, res.text);
  return res.body;
}

async function zooCount(client: ApiClient): Promise<number> {
  const res = await client.json('GET', '/v1/zoos?limit=1');
  assert.equal(res.status, 200);
  return Number(res.headers.get('x-total-count'));
}

function link(href: string, title?: string) {
  return title === undefined ? { href, title: assert.ok, type: 'application/json' } : { href, title, type: 'application/json' };
}

describe('zoos: create, read, list', () => {
  test('POST answers 201 with Location, ETag and the whole record', async () => {
    const res = await a.json('POST', '/v1/zoos', { name: 'Tierpark', city: 'Berlin', founded: 1955 });
    assert.equal(res.status, 201, res.text);
    assert.match(res.headers.get('content-type')!, /^application\/json/);
    const z = res.body;
    assert.match(z.id, UUID_V7);
    assert.equal(res.headers.get('location'), `${server.url}/v1/zoos/${z.id}`);
    assert.equal(res.headers.get('etag'), '"1"');
    assert.ok(res.headers.get('last-modified'));
    assert.equal(z.name, 'Tierpark');
    assert.equal(z.city, 'Berlin');
    assert.equal(z.founded, 1955);
    assert.equal(z.owner, 'client:crud-a');
    assert.match(z.created_at, RFC3339);
    assert.equal(z.updated_at, z.created_at);
    assert.deepEqual(Object.keys(z).sort(), ['city', 'created_at', 'founded', 'id', 'link', 'name', 'owner', 'updated_at']);
  });

  test('links are absolute https: self, collection and one per child collection', async () => {
    const z = await createZoo(a);
    assert.deepEqual(Object.keys(z.link).sort(), ['animals', 'collection', 'self']);
    for (const l of Object.values(z.link) as { href: string; title: string; type: string }[]) {
      assert.match(l.href, /^https:\/\//);
      assert.equal(typeof l.title, 'string');
      assert.ok(l.title.length > 0);
      assert.equal(l.type, 'application/json');
    }
    assert.equal(z.link.self.href, `${server.url}/v1/zoos/${z.id}`);
    assert.equal(z.link.collection.href, `${server.url}/v1/zoos`);
    assert.equal(z.link.animals.href, `${server.url}/v1/zoos/${z.id}/animals`);
    // Following the links works.
    assert.equal((await a.json('GET', z.link.self.href)).status, 200);
    assert.equal((await a.json('GET', z.link.animals.href)).status, 200);
  });

  test('GET one answers what POST answered, with ETag and Last-Modified', async () => {
    const created = await createZoo(a);
    const res = await a.json('GET', `/v1/zoos/${created.id}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, created);
    assert.equal(res.headers.get('etag'), '"1"');
    assert.equal(res.headers.get('last-modified'), new Date(created.updated_at).toUTCString());
  });

  test('GET list is a JSON array that holds the created records', async () => {
    const created = await createZoo(a, { name: 'Listed' });
    const res = await a.json('GET', '/v1/zoos?limit=100');
    assert.equal(res.status, 200);
    assert.ok(Array.isArray(res.body));
    const found = res.body.find((z: { id: string }) => z.id === created.id);
    assert.deepEqual(found, created);
    assert.equal(Number(res.headers.get('x-total-count')), res.body.length);
  });

  test('GET of an unknown id is 404 with the JSON error body', async () => {
    const res = await a.json('GET', `/v1/zoos/${randomUUID()}`);
    assertApiError(res, 404, ['id']);
  });

  test('HEAD on a record: GET status and headers, no body', async () => {
    const z = await createZoo(a);
    const get = await a.fetch(`/v1/zoos/${z.id}`, { headers: { accept: 'application/json' } });
    const getBody = await get.arrayBuffer();
    const head = await a.fetch(`/v1/zoos/${z.id}`, { method: 'HEAD', headers: { accept: 'application/json' } });
    assert.equal(head.status, 200);
    assert.equal((await head.arrayBuffer()).byteLength, 0);
    for (const h of ['content-type', 'content-length', 'etag', 'last-modified'])
      assert.equal(head.headers.get(h), get.headers.get(h), `header ${h}`);
    assert.equal(Number(head.headers.get('content-length')), getBody.byteLength);
  });

  test('HEAD on a list: GET status and headers (X-Total-Count, Link), no body', async () => {
    const get = await a.fetch('/v1/zoos?limit=2', { headers: { accept: 'application/json' } });
    await get.arrayBuffer();
    const head = await a.fetch('/v1/zoos?limit=2', { method: 'HEAD', headers: { accept: 'application/json' } });
    assert.equal(head.status, 200);
    assert.equal((await head.arrayBuffer()).byteLength, 0);
    for (const h of ['content-type', 'content-length', 'x-total-count', 'link']) assert.equal(head.headers.get(h), get.headers.get(h), `header ${h}`);
  });

  test('HEAD of an unknown record answers 404 like GET', async () => {
    const head = await a.fetch(`/v1/zoos/${randomUUID()}`, { method: 'HEAD', headers: { accept: 'application/json' } });
    assert.equal(head.status, 404);
    assert.match(head.headers.get('content-type')!, /^application\/json/);
  });
});

describe('zoos: PUT, PATCH, DELETE', () => {
  test('PUT replaces the whole representation', async () => {
    const z = await createZoo(a, { name: 'Old', city: 'Köln', founded: 1860 });
    const res = await a.json('PUT', `/v1/zoos/${z.id}`, { name: 'New' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.name, 'New');
    assert.equal('city' in res.body, false, 'fields left out of a PUT are gone');
    assert.equal('founded' in res.body, false);
    assert.equal(res.body.id, z.id);
    assert.equal(res.body.created_at, z.created_at);
    assert.ok(res.body.updated_at >= z.updated_at);
    assert.equal(res.headers.get('etag'), '"2"');
    const again = await a.json('GET', `/v1/zoos/${z.id}`);
    assert.deepEqual(again.body, res.body);
  });

  test('PUT accepts back the representation GET returned (server fields unchanged)', async () => {
    const z = await createZoo(a);
    const res = await a.json('PUT', `/v1/zoos/${z.id}`, { ...z, city: 'Leipzig' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.city, 'Leipzig');
    assert.equal(res.body.name, z.name);
  });

  test('PUT without a required field is 400 naming it, and changes nothing', async () => {
    const z = await createZoo(a);
    const res = await a.json('PUT', `/v1/zoos/${z.id}`, { city: 'Nowhere' });
    assertApiError(res, 400, ['name']);
    assert.deepEqual((await a.json('GET', `/v1/zoos/${z.id}`)).body, z);
  });

  test('PATCH is a JSON merge patch: set one field, keep the rest', async () => {
    const z = await createZoo(a, { name: 'Merge', city: 'Bonn', founded: 1900 });
    const res = await a.json('PATCH', `/v1/zoos/${z.id}`, { city: 'Hamburg' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.city, 'Hamburg');
    assert.equal(res.body.name, 'Merge');
    assert.equal(res.body.founded, 1900);
    assert.equal(res.headers.get('etag'), '"2"');
  });

  test('PATCH with null removes the member', async () => {
    const z = await createZoo(a, { name: 'Nulls', city: 'Bonn', founded: 1900 });
    const res = await a.json('PATCH', `/v1/zoos/${z.id}`, { founded: null });
    assert.equal(res.status, 200, res.text);
    assert.equal('founded' in res.body, false);
    assert.equal(res.body.city, 'Bonn');
    assert.equal('founded' in (await a.json('GET', `/v1/zoos/${z.id}`)).body, false);
  });

  test('PATCH accepts Content-Type application/merge-patch+json', async () => {
    const z = await createZoo(a);
    const res = await a.json('PATCH', `/v1/zoos/${z.id}`, JSON.stringify({ city: 'Dresden' }), { 'content-type': 'application/merge-patch+json' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.city, 'Dresden');
  });

  test('PATCH is validated after merging: removing a required field is 400, nothing changes', async () => {
    const z = await createZoo(a);
    const res = await a.json('PATCH', `/v1/zoos/${z.id}`, { name: null, founded: 'long ago' });
    assertApiError(res, 400, ['name', 'founded']);
    const after = await a.json('GET', `/v1/zoos/${z.id}`);
    assert.deepEqual(after.body, z);
    assert.equal(after.headers.get('etag'), '"1"');
  });

  test('DELETE answers 204 with an empty body; the URL then answers 410', async () => {
    const z = await createZoo(a);
    const res = await a.fetch(`/v1/zoos/${z.id}`, { method: 'DELETE', headers: { accept: 'application/json' } });
    assert.equal(res.status, 204);
    assert.equal(await res.text(), '');
    assertApiError(await a.json('GET', `/v1/zoos/${z.id}`), 410);
    assertApiError(await a.json('PUT', `/v1/zoos/${z.id}`, { name: 'back' }), 410);
    assertApiError(await a.json('PATCH', `/v1/zoos/${z.id}`, { name: 'back' }), 410);
    assertApiError(await a.json('DELETE', `/v1/zoos/${z.id}`), 410);
    const list = await a.json('GET', '/v1/zoos?limit=100');
    assert.equal(list.body.some((r: { id: string }) => r.id === z.id), false);
  });

  test('PUT, PATCH and DELETE of an unknown id are 404', async () => {
    const id = randomUUID();
    assertApiError(await a.json('PUT', `/v1/zoos/${id}`, { name: 'x' }), 404);
    assertApiError(await a.json('PATCH', `/v1/zoos/${id}`, { name: 'x' }), 404);
    assertApiError(await a.json('DELETE', `/v1/zoos/${id}`), 404);
  });
});

describe('ETag and If-Match', () => {
  test('a stale If-Match on PUT, PATCH and DELETE is 412 and changes nothing', async () => {
    const z = await createZoo(a);
    const v2 = await a.json('PATCH', `/v1/zoos/${z.id}`, { city: 'Essen' });
    assert.equal(v2.headers.get('etag'), '"2"');
    for (const [method, body] of [['PUT', { name: 'lost' }], ['PATCH', { name: 'lost' }], ['DELETE', undefined]] as const) {
      const res = await a.json(method, `/v1/zoos/${z.id}`, body, { 'if-match': '"1"' });
      assertApiError(res, 412);
    }
    const now = await a.json('GET', `/v1/zoos/${z.id}`);
    assert.equal(now.status, 200);
    assert.deepEqual(now.body, v2.body);
    assert.equal(now.headers.get('etag'), '"2"');
  });

  test('a matching If-Match (or *) lets the write through', async () => {
    const z = await createZoo(a);
    const res = await a.json('PATCH', `/v1/zoos/${z.id}`, { city: 'Ulm' }, { 'if-match': '"1"' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('etag'), '"2"');
    const put = await a.json('PUT', `/v1/zoos/${z.id}`, { name: 'Star' }, { 'if-match': '*' });
    assert.equal(put.status, 200);
    const list = await a.json('PATCH', `/v1/zoos/${z.id}`, { city: 'Ulm' }, { 'if-match': '"7", "3"' });
    assert.equal(list.status, 200, 'one of a list of tags matches');
    const del = await a.fetch(`/v1/zoos/${z.id}`, { method: 'DELETE', headers: { 'if-match': '"4"' } });
    assert.equal(del.status, 204);
  });

  test('a weak tag never matches (strong comparison)', async () => {
    const z = await createZoo(a);
    assertApiError(await a.json('PATCH', `/v1/zoos/${z.id}`, { city: 'x' }, { 'if-match': 'W/"1"' }), 412);
  });
});

describe('validation and server-owned fields', () => {
  test('each bad field is named in detail; nothing is created', async () => {
    const before = await zooCount(a);
    const res = await a.json('POST', '/v1/zoos', { name: 5, founded: 'old', colour: 'red' });
    assertApiError(res, 400, ['name', 'founded', 'colour']);
    assert.equal(await zooCount(a), before);
  });

  test('a missing required field is named', async () => {
    assertApiError(await a.json('POST', '/v1/zoos', { city: 'Rome' }), 400, ['name']);
  });

  test('schema keywords apply (minLength)', async () => {
    assertApiError(await a.json('POST', '/v1/zoos', { name: '' }), 400, ['name']);
  });

  test('the body must be a JSON object', async () => {
    for (const body of ['"a string"', '42', 'null', 'true']) assertApiError(await a.json('POST', '/v1/zoos', body), 400);
    assertApiError(await a.json('POST', '/v1/zoos'), 400);
    const z = await createZoo(a);
    assertApiError(await a.json('PUT', `/v1/zoos/${z.id}`, '[1]'), 400);
    assertApiError(await a.json('PATCH', `/v1/zoos/${z.id}`, '"x"'), 400);
  });

  for (const field of ['id', 'created_at', 'updated_at', 'owner']) {
    test(`POST cannot set ${field}`, async () => {
      const before = await zooCount(a);
      const value = field === 'owner' ? 'client:crud-b' : field === 'id' ? randomUUID() : '2000-01-01T00:00:00Z';
      const res = await a.json('POST', '/v1/zoos', { name: 'Sneaky', [field]: value });
      assertApiError(res, 400, [field]);
      assert.equal(await zooCount(a), before);
    });

    test(`PUT and PATCH cannot change ${field}`, async () => {
      const z = await createZoo(a);
      const value = field === 'owner' ? 'client:crud-b' : field === 'id' ? randomUUID() : '2000-01-01T00:00:00.000Z';
      assertApiError(await a.json('PUT', `/v1/zoos/${z.id}`, { name: 'Sneaky', [field]: value }), 400, [field]);
      assertApiError(await a.json('PATCH', `/v1/zoos/${z.id}`, { [field]: value }), 400, [field]);
      assert.deepEqual((await a.json('GET', `/v1/zoos/${z.id}`)).body, z);
    });
  }

  test('a body with both a server-owned field and a schema error names both', async () => {
    const before = await zooCount(a);
    assertApiError(await a.json('POST', '/v1/zoos', { id: randomUUID(), name: 5, colour: 'red' }), 400, ['id', 'name', 'colour']);
    assertApiError(await a.json('POST', '/v1/animals', { owner: 'x', species: 3 }), 400, ['owner', 'species', 'name', 'zoo_id']);
    assert.equal(await zooCount(a), before);
    const z = await createZoo(a);
    assertApiError(await a.json('PATCH', `/v1/zoos/${z.id}`, { created_at: 'x', founded: 'y' }), 400, ['created_at', 'founded']);
    assertApiError(await a.json('PUT', `/v1/zoos/${z.id}`, { owner: 'x', city: 1 }), 400, ['owner', 'city', 'name']);
    assert.deepEqual((await a.json('GET', `/v1/zoos/${z.id}`)).body, z);
  });
});

describe('animals nested under zoos', () => {
  let zoo: any;
  let otherZoo: any;
  let animal: any;

  before(async () => {
    zoo = await createZoo(a, { name: 'Parent' });
    otherZoo = await createZoo(a, { name: 'Other parent' });
    const res = await a.json('POST', `/v1/zoos/${zoo.id}/animals`, { name: 'Knut', species: 'polar bear' });
    assert.equal(res.status, 201, res.text);
    animal = res.body;
  });

  test('POST under a zoo: 201, the parent field comes from the URL, links to the parent', async () => {
    assert.equal(animal.zoo_id, zoo.id);
    assert.equal(animal.owner, 'client:crud-a');
    assert.match(animal.id, UUID_V7);
    assert.equal(animal.link.parent.href, `${server.url}/v1/zoos/${zoo.id}`);
    assert.equal(animal.link.collection.href, `${server.url}/v1/zoos/${zoo.id}/animals`);
    assert.match(animal.link.self.href, new RegExp(`^${server.url.replace(/\./g, '\\.')}/v1/(zoos/${zoo.id}/)?animals/${animal.id}$`));
    assert.equal((await a.json('GET', animal.link.self.href)).status, 200);
    assert.equal((await a.json('GET', animal.link.parent.href)).body.id, zoo.id);
  });

  test('GET /v1/zoos/{id}/animals equals GET /v1/animals?zoo_id={id}', async () => {
    await a.json('POST', `/v1/zoos/${zoo.id}/animals`, { name: 'Bao', species: 'panda' });
    await a.json('POST', '/v1/animals', { zoo_id: otherZoo.id, name: 'Elsewhere', species: 'lynx' });
    const nested = await a.json('GET', `/v1/zoos/${zoo.id}/animals`);
    const flat = await a.json('GET', `/v1/animals?zoo_id=${zoo.id}`);
    assert.equal(nested.status, 200);
    assert.equal(flat.status, 200);
    assert.equal(nested.body.length, 2);
    assert.deepEqual(nested.body, flat.body);
    assert.equal(nested.headers.get('x-total-count'), '2');
    assert.equal(flat.headers.get('x-total-count'), '2');
    assert.ok(nested.body.every((x: { zoo_id: string }) => x.zoo_id === zoo.id));
  });

  test('GET one child through the nested and the flat URL', async () => {
    const nested = await a.json('GET', `/v1/zoos/${zoo.id}/animals/${animal.id}`);
    const flat = await a.json('GET', `/v1/animals/${animal.id}`);
    assert.equal(nested.status, 200);
    assert.deepEqual(nested.body, animal);
    assert.deepEqual(flat.body, animal);
  });

  test('a child under the wrong parent is 404 for every method, and nothing changes', async () => {
    const url = `/v1/zoos/${otherZoo.id}/animals/${animal.id}`;
    assertApiError(await a.json('GET', url), 404);
    assertApiError(await a.json('PUT', url, { name: 'x', species: 'y' }), 404);
    assertApiError(await a.json('PATCH', url, { name: 'x' }), 404);
    assertApiError(await a.json('DELETE', url), 404);
    assert.deepEqual((await a.json('GET', `/v1/animals/${animal.id}`)).body, animal);
  });

  test('creating or listing children under a missing parent is 404', async () => {
    const missing = randomUUID();
    const count = Number((await a.json('GET', '/v1/animals?limit=1')).headers.get('x-total-count'));
    assertApiError(await a.json('POST', `/v1/zoos/${missing}/animals`, { name: 'Orphan', species: 'cat' }), 404);
    assertApiError(await a.json('GET', `/v1/zoos/${missing}/animals`), 404);
    assertApiError(await a.json('GET', `/v1/zoos/${missing}/animals/${animal.id}`), 404);
    assertApiError(await a.json('POST', '/v1/animals', { zoo_id: missing, name: 'Orphan', species: 'cat' }), 404);
    assert.equal(Number((await a.json('GET', '/v1/animals?limit=1')).headers.get('x-total-count')), count);
  });

  test('the flat route needs the parent field; the nested route refuses it', async () => {
    assertApiError(await a.json('POST', '/v1/animals', { name: 'No zoo', species: 'cat' }), 400, ['zoo_id']);
    assertApiError(await a.json('POST', `/v1/zoos/${zoo.id}/animals`, { zoo_id: otherZoo.id, name: 'x', species: 'y' }), 400, ['zoo_id']);
    assertApiError(await a.json('PATCH', `/v1/zoos/${zoo.id}/animals/${animal.id}`, { zoo_id: otherZoo.id }), 400, ['zoo_id']);
    assertApiError(await a.json('PUT', `/v1/zoos/${zoo.id}/animals/${animal.id}`, { zoo_id: otherZoo.id, name: 'x', species: 'y' }), 400, ['zoo_id']);
    assert.deepEqual((await a.json('GET', `/v1/animals/${animal.id}`)).body, animal);
  });

  test('PUT and PATCH through the nested URL', async () => {
    const c = (await a.json('POST', `/v1/zoos/${zoo.id}/animals`, { name: 'Flocke', species: 'polar bear' })).body;
    const put = await a.json('PUT', `/v1/zoos/${zoo.id}/animals/${c.id}`, { name: 'Flocke', species: 'ursus maritimus' });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.species, 'ursus maritimus');
    assert.equal(put.body.zoo_id, zoo.id, 'the parent stays');
    const patch = await a.json('PATCH', `/v1/zoos/${zoo.id}/animals/${c.id}`, { name: 'Flocke II' });
    assert.equal(patch.status, 200);
    assert.equal(patch.body.name, 'Flocke II');
    assert.equal(patch.body.species, 'ursus maritimus');
    assert.equal(patch.headers.get('etag'), '"3"');
  });

  test('DELETE a child through the nested URL: 204, then 410', async () => {
    const c = (await a.json('POST', `/v1/zoos/${zoo.id}/animals`, { name: 'Short', species: 'mayfly' })).body;
    const res = await a.fetch(`/v1/zoos/${zoo.id}/animals/${c.id}`, { method: 'DELETE' });
    assert.equal(res.status, 204);
    assert.equal(await res.text(), '');
    assertApiError(await a.json('GET', `/v1/zoos/${zoo.id}/animals/${c.id}`), 410);
    assertApiError(await a.json('GET', `/v1/animals/${c.id}`), 410);
  });

  test('an unknown child collection or a second nesting level is 404', async () => {
    assertApiError(await a.json('GET', `/v1/zoos/${zoo.id}/orders`), 404);
    assertApiError(await a.json('GET', `/v1/animals/${animal.id}/zoos`), 404);
    assertApiError(await a.json('GET', `/v1/zoos/${zoo.id}/animals/${animal.id}/x`), 404);
  });

  test('deleting a zoo tombstones its animals: their URLs answer 410', async () => {
    const z = await createZoo(a, { name: 'Closing' });
    const kids = [];
    for (const name of ['One', 'Two']) kids.push((await a.json('POST', `/v1/zoos/${z.id}/animals`, { name, species: 'goat' })).body);
    const del = await a.fetch(`/v1/zoos/${z.id}`, { method: 'DELETE' });
    assert.equal(del.status, 204);
    for (const k of kids) {
      assertApiError(await a.json('GET', `/v1/animals/${k.id}`), 410);
      assertApiError(await a.json('GET', `/v1/zoos/${z.id}/animals/${k.id}`), 410);
      assertApiError(await a.json('PATCH', `/v1/animals/${k.id}`, { name: 'x' }), 410);
    }
    assertApiError(await a.json('GET', `/v1/zoos/${z.id}/animals`), 410);
    assertApiError(await a.json('POST', `/v1/zoos/${z.id}/animals`, { name: 'Late', species: 'goat' }), 410);
    const flat = await a.json('GET', '/v1/animals?limit=100');
    assert.equal(flat.body.some((x: { zoo_id: string }) => x.zoo_id === z.id), false);
  });
});

describe('ownership and access rules', () => {
  test("another owner's record is 403 and absent from its list", async () => {
    const z = await createZoo(a, { name: 'Private' });
    assertApiError(await b.json('GET', `/v1/zoos/${z.id}`), 403);
    assertApiError(await b.json('PUT', `/v1/zoos/${z.id}`, { name: 'Mine' }), 403);
    assertApiError(await b.json('PATCH', `/v1/zoos/${z.id}`, { name: 'Mine' }), 403);
    assertApiError(await b.json('DELETE', `/v1/zoos/${z.id}`), 403);
    assertApiError(await b.json('POST', `/v1/zoos/${z.id}/animals`, { name: 'Cuckoo', species: 'bird' }), 403);
    assertApiError(await b.json('GET', `/v1/zoos/${z.id}/animals`), 403);
    const list = await b.json('GET', '/v1/zoos?limit=100');
    assert.equal(list.body.some((r: { id: string }) => r.id === z.id), false);
    assert.ok(list.body.every((r: { owner: string }) => r.owner === 'client:crud-b'));
    assert.deepEqual((await a.json('GET', `/v1/zoos/${z.id}`)).body, z);
  });

  test('no token: 401 with WWW-Authenticate and the JSON body', async () => {
    const res = await server.json('GET', '/v1/zoos');
    assertApiError(res, 401);
    assert.match(res.headers.get('www-authenticate')!, /^Bearer/);
    assertApiError(await server.json('GET', '/v1/zoos', undefined, { authorization: 'Bearer not-a-token' }), 401);
  });

  test('a token with no scope on the collection: 403', async () => {
    assertApiError(await noZoos.json('GET', '/v1/zoos'), 403);
    assertApiError(await noZoos.json('POST', '/v1/zoos', { name: 'x' }), 403);
  });

  test('a read-only token: GET works, writes are 405 with Allow listing what it may do', async () => {
    assert.equal((await readOnly.json('GET', '/v1/zoos')).status, 200);
    const res = await readOnly.json('POST', '/v1/zoos', { name: 'x' });
    assertApiError(res, 405);
    assert.equal(res.headers.get('allow'), 'GET, HEAD');
  });

  test('a method the URL never supports: 405 with Allow', async () => {
    const z = await createZoo(a);
    const onCollection = await a.json('PATCH', '/v1/zoos', { name: 'x' });
    assertApiError(onCollection, 405);
    assert.deepEqual(onCollection.headers.get('allow')!.split(/,\s*/).sort(), ['GET', 'HEAD', 'POST']);
    const onRecord = await a.json('POST', `/v1/zoos/${z.id}`, { name: 'x' });
    assertApiError(onRecord, 405);
    assert.deepEqual(onRecord.headers.get('allow')!.split(/,\s*/).sort(), ['DELETE', 'GET', 'HEAD', 'PATCH', 'PUT']);
    const del = await a.json('DELETE', '/v1/zoos');
    assertApiError(del, 405);
    assert.ok(del.headers.get('allow'));
  });
});

describe('method override (POST + X-HTTP-Method-Override)', () => {
  test('PATCH, PUT and DELETE through POST', async () => {
    const z = await createZoo(a, { name: 'Override', city: 'Bern' });
    const patch = await a.json('POST', `/v1/zoos/${z.id}`, { city: 'Basel' }, { 'x-http-method-override': 'PATCH' });
    assert.equal(patch.status, 200, patch.text);
    assert.equal(patch.body.city, 'Basel');
    assert.equal(patch.body.name, 'Override');
    const put = await a.json('POST', `/v1/zoos/${z.id}`, { name: 'Replaced' }, { 'x-http-method-override': 'put' });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual([put.body.name, 'city' in put.body], ['Replaced', false]);
    const del = await a.json('POST', `/v1/zoos/${z.id}`, undefined, { 'x-http-method-override': 'Delete' });
    assert.equal(del.status, 204);
    assertApiError(await a.json('GET', `/v1/zoos/${z.id}`), 410);
  });

  test('the overridden method goes through the access rules', async () => {
    const z = await createZoo(a);
    const res = await readOnly.json('POST', `/v1/zoos/${z.id}`, { name: 'x' }, { 'x-http-method-override': 'PATCH' });
    // crud-reader cannot see crud-a's record, but first of all it may not write: 405 or 403, never a change.
    assert.ok(res.status === 405 || res.status === 403, res.text);
    const own = await readOnly.json('POST', `/v1/zoos/${z.id}`, undefined, { 'x-http-method-override': 'DELETE' });
    assert.ok(own.status === 405 || own.status === 403);
    assert.deepEqual((await a.json('GET', `/v1/zoos/${z.id}`)).body, z);
    const other = await b.json('POST', `/v1/zoos/${z.id}`, { name: 'x' }, { 'x-http-method-override': 'PATCH' });
    assertApiError(other, 403);
  });

  test('a read-only token overriding to a write on its own collection URL gets 405 + Allow', async () => {
    const res = await readOnly.json('POST', '/v1/zoos/some-id', { name: 'x' }, { 'x-http-method-override': 'PUT' });
    assertApiError(res, 405);
    assert.equal(res.headers.get('allow'), 'GET, HEAD');
  });

  test('other override values, or the header on another method, are 400', async () => {
    const z = await createZoo(a);
    for (const value of ['GET', 'HEAD', 'POST', 'OPTIONS', 'TRACE', 'FOO', '']) {
      const res = await a.json('POST', `/v1/zoos/${z.id}`, { name: 'x' }, { 'x-http-method-override': value });
      assertApiError(res, 400, ['x-http-method-override']);
    }
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
      const res = await a.json(method, `/v1/zoos/${z.id}`, method === 'PUT' || method === 'PATCH' ? { name: 'x' } : undefined, {
        'x-http-method-override': 'DELETE',
      });
      assertApiError(res, 400, ['x-http-method-override']);
    }
    assert.deepEqual((await a.json('GET', `/v1/zoos/${z.id}`)).body, z);
  });
});

describe('every configured collection', () => {
  test('orders and articles: create, read, list, patch, delete', async () => {
    for (const [name, body, patch] of [
      ['orders', { item: 'hay', quantity: 3, status: 'pending' }, { status: 'paid' }],
      ['articles', { title: 'Hello', body: 'World' }, { body: 'Zoo' }],
    ] as const) {
      const created = await a.json('POST', `/v1/${name}`, body);
      assert.equal(created.status, 201, created.text);
      assert.equal(created.headers.get('location'), `${server.url}/v1/${name}/${created.body.id}`);
      assert.deepEqual((await a.json('GET', `/v1/${name}/${created.body.id}`)).body, created.body);
      const list = await a.json('GET', `/v1/${name}`);
      assert.ok(list.body.some((r: { id: string }) => r.id === created.body.id));
      const patched = await a.json('PATCH', `/v1/${name}/${created.body.id}`, patch);
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual({ ...patched.body, ...patch }, patched.body);
      const del = await a.fetch(`/v1/${name}/${created.body.id}`, { method: 'DELETE' });
      assert.equal(del.status, 204);
    }
  });

  test('orders validate their schema (minimum, enum)', async () => {
    const res = await a.json('POST', '/v1/orders', { item: 'hay', quantity: 0, status: 'lost' });
    assertApiError(res, 400, ['quantity', 'status']);
  });
});
