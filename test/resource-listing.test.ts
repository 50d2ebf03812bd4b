// Filtering and paging of collection lists: limit/offset, page/per_page, sortby/order, equality
// filters with typed values, 400 naming the parameter, Link (first/prev/next) and X-Total-Count.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { apiClient, assertApiError, type ApiClient } from './helpers/tokens.js';

let server: InProcessApp;
let a: ApiClient;
let b: ApiClient;
const CITIES = ['Berlin', 'Paris', 'Rome'];
const zoos: any[] = []; // a's 25 zoos in creation order (= id order: UUIDv7)
let parent: any;

before(async () => {
  server = await startApp({ config: { api: { defaultLimit: 20, maxLimit: 100 } } });
  a = await apiClient(server, 'list-a');
  b = await apiClient(server, 'list-b');
  for (let i = 0; i < 25; i++) {
    const name = `Zoo ${String((i * 7) % 25).padStart(2, '0')}`; // names in another order than ids
    const res = await a.json('POST', '/v1/zoos', { name, city: CITIES[i % 3], founded: 1900 + (i % 10) });
    assert.equal(res.status, 201, res.text);
    zoos.push(res.body);
  }
  for (const name of ['B one', 'B two']) await b.json('POST', '/v1/zoos', { name, city: 'Berlin', founded: 1901 });
  parent = zoos[0];
  for (const [name, species] of [['Ann', 'cat'], ['Bob', 'dog'], ['Cid', 'cat']])
    assert.equal((await a.json('POST', `/v1/zoos/${parent.id}/animals`, { name, species })).status, 201);
  await a.json('POST', `/v1/zoos/${zoos[1].id}/animals`, { name: 'Dot', species: 'cat' });
});
after(async () => {
  await server.cleanup();
});

/** Parses an RFC 8288 Link header into { rel: url }. */
function links(header: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(/,\s*(?=<)/)) {
    const m = /^<([^>]+)>\s*;\s*rel="([^"]+)"$/.exec(part.trim());
    if (m) out[m[2]] = m[1];
  }
  return out;
}

const ids = (body: { id: string }[]) => body.map((r) => r.id);

describe('paging', () => {
  test('the default page: defaultLimit records, X-Total-Count, Link first and next only', async () => {
    const res = await a.json('GET', '/v1/zoos');
    assert.equal(res.status, 200);
    assert.deepEqual(ids(res.body), ids(zoos.slice(0, 20)), 'sorted by id (creation order) by default');
    assert.equal(res.headers.get('x-total-count'), '25');
    const l = links(res.headers.get('link'));
    assert.deepEqual(Object.keys(l).sort(), ['first', 'next']);
    assert.equal(new URL(l.first).origin, server.url);
    assert.equal(new URL(l.first).pathname, '/v1/zoos');
    // docs/api.md#paging: without offset/page, Link: next carries an after= cursor (keyset paging).
    const next = new URL(l.next);
    assert.equal(next.searchParams.get('offset'), null);
    assert.equal(next.searchParams.get('limit'), '20');
    assert.match(next.searchParams.get('after') ?? '', /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const rest = await a.json('GET', next.pathname + next.search);
    assert.deepEqual(ids(rest.body), ids(zoos.slice(20)), 'the next page continues where the first ended');
    const restLinks = links(rest.headers.get('link'));
    assert.deepEqual(Object.keys(restLinks), ['first', 'prev'], 'the last page has no next; it links prev (before=)');
    const prev = new URL(restLinks.prev);
    assert.equal(prev.searchParams.get('after'), null);
    assert.deepEqual(ids((await a.json('GET', prev.pathname + prev.search)).body), ids(zoos.slice(0, 20)), 'prev is the first page');
  });

  test('limit and offset select the window; prev, next and first point to the right windows', async () => {
    const res = await a.json('GET', '/v1/zoos?limit=10&offset=10');
    assert.deepEqual(ids(res.body), ids(zoos.slice(10, 20)));
    assert.equal(res.headers.get('x-total-count'), '25');
    const l = links(res.headers.get('link'));
    assert.deepEqual(Object.keys(l).sort(), ['first', 'next', 'prev']);
    for (const [rel, offset] of [['first', '0'], ['prev', '0'], ['next', '20']]) {
      const u = new URL(l[rel]);
      assert.equal(u.protocol, 'https:');
      assert.equal(u.searchParams.get('offset'), offset, rel);
      assert.equal(u.searchParams.get('limit'), '10', rel);
    }
    const last = await a.json('GET', l.next);
    assert.deepEqual(ids(last.body), ids(zoos.slice(20)));
    assert.equal(last.headers.get('x-total-count'), '25', 'a short last page tells the same total');
    assert.deepEqual(Object.keys(links(last.headers.get('link'))).sort(), ['first', 'prev']);
  });

  test('prev from a window that does not start on a page boundary stops at 0', async () => {
    const res = await a.json('GET', '/v1/zoos?limit=10&offset=5');
    const prev = new URL(links(res.headers.get('link')).prev);
    assert.equal(prev.searchParams.get('offset'), '0');
  });

  test('following next from the first page visits every record exactly once', async () => {
    let url: string | undefined = `${server.url}/v1/zoos?limit=7`;
    const seen: string[] = [];
    let pages = 0;
    while (url) {
      const res = await a.json('GET', url);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-total-count'), '25');
      seen.push(...ids(res.body));
      url = links(res.headers.get('link')).next;
      assert.ok(++pages <= 4);
    }
    assert.equal(pages, 4);
    assert.deepEqual(seen, ids(zoos));
  });

  test('page and per_page; Link answers in the same terms', async () => {
    const res = await a.json('GET', '/v1/zoos?page=2&per_page=10');
    assert.deepEqual(ids(res.body), ids(zoos.slice(10, 20)));
    const l = links(res.headers.get('link'));
    assert.equal(new URL(l.first).searchParams.get('page'), '1');
    assert.equal(new URL(l.prev).searchParams.get('page'), '1');
    assert.equal(new URL(l.next).searchParams.get('page'), '3');
    assert.equal(new URL(l.next).searchParams.get('per_page'), '10');
    assert.equal(new URL(l.next).searchParams.get('offset'), null);
    const third = await a.json('GET', l.next);
    assert.deepEqual(ids(third.body), ids(zoos.slice(20)));
    assert.equal(links(third.headers.get('link')).next, undefined);
  });

  test('an offset past the end is an empty array, not an error', async () => {
    const res = await a.json('GET', '/v1/zoos?offset=1000');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, []);
    assert.equal(res.headers.get('x-total-count'), '25');
    assert.equal(links(res.headers.get('link')).next, undefined);
  });

  test('limit=maxLimit is allowed', async () => {
    const res = await a.json('GET', '/v1/zoos?limit=100');
    assert.equal(res.body.length, 25);
    assert.deepEqual(Object.keys(links(res.headers.get('link'))), ['first']);
  });
});

describe('sorting', () => {
  test('sortby a declared field, ascending and descending', async () => {
    const byName = [...zoos].sort((x, y) => (x.name < y.name ? -1 : 1)).map((z) => z.name);
    const asc = await a.json('GET', '/v1/zoos?sortby=name&limit=100');
    assert.deepEqual(asc.body.map((z: any) => z.name), byName);
    const desc = await a.json('GET', '/v1/zoos?sortby=name&order=desc&limit=100');
    assert.deepEqual(desc.body.map((z: any) => z.name), [...byName].reverse());
  });

  test('ties are broken by id so that pages do not overlap', async () => {
    const all = (await a.json('GET', '/v1/zoos?sortby=founded&limit=100')).body;
    const founded = all.map((z: any) => z.founded);
    assert.deepEqual(founded, [...founded].sort((x: number, y: number) => x - y));
    const paged = [
      ...(await a.json('GET', '/v1/zoos?sortby=founded&limit=12')).body,
      ...(await a.json('GET', '/v1/zoos?sortby=founded&limit=12&offset=12')).body,
      ...(await a.json('GET', '/v1/zoos?sortby=founded&limit=12&offset=24')).body,
    ];
    assert.deepEqual(ids(paged), ids(all));
  });

  test('sortby created_at and order=DESC (case-insensitive)', async () => {
    const res = await a.json('GET', '/v1/zoos?sortby=created_at&order=DESC&limit=100');
    assert.equal(res.status, 200);
    assert.deepEqual(ids(res.body), ids([...zoos].reverse()));
  });

  test('the sort parameters are kept in the Link URLs', async () => {
    const res = await a.json('GET', '/v1/zoos?sortby=name&order=desc&limit=5');
    const next = new URL(links(res.headers.get('link')).next);
    assert.equal(next.searchParams.get('sortby'), 'name');
    assert.equal(next.searchParams.get('order'), 'desc');
  });
});

describe('filters', () => {
  test('equality filter on a string field, with X-Total-Count of the filtered set', async () => {
    const res = await a.json('GET', '/v1/zoos?city=Berlin');
    const expected = zoos.filter((z) => z.city === 'Berlin');
    assert.equal(expected.length, 9);
    assert.deepEqual(ids(res.body), ids(expected));
    assert.equal(res.headers.get('x-total-count'), '9');
  });

  test('a filter value with spaces and non-ASCII characters', async () => {
    const res = await a.json('GET', `/v1/zoos?name=${encodeURIComponent('Zoo 07')}`);
    assert.deepEqual(res.body.map((z: any) => z.name), ['Zoo 07']);
    const none = await a.json('GET', `/v1/zoos?city=${encodeURIComponent('Zürich')}`);
    assert.deepEqual(none.body, []);
    assert.equal(none.headers.get('x-total-count'), '0');
  });

  test('typed filter values: an integer field takes integers', async () => {
    const res = await a.json('GET', '/v1/zoos?founded=1905');
    assert.deepEqual(ids(res.body), ids(zoos.filter((z) => z.founded === 1905)));
    assert.ok(res.body.length > 0);
    for (const bad of ['abc', '1905.5', '', '1e3', '0x10']) assertApiError(await a.json('GET', `/v1/zoos?founded=${encodeURIComponent(bad)}`), 400, ['founded']);
  });

  test('filters combine with each other and with paging; Link keeps the filters', async () => {
    const both = await a.json('GET', '/v1/zoos?city=Berlin&founded=1903');
    assert.deepEqual(ids(both.body), ids(zoos.filter((z) => z.city === 'Berlin' && z.founded === 1903)));
    assert.equal(both.headers.get('x-total-count'), '1');
    const res = await a.json('GET', '/v1/zoos?city=Berlin&limit=4&sortby=founded');
    const expected = zoos.filter((z) => z.city === 'Berlin').sort((x, y) => x.founded - y.founded || (x.id < y.id ? -1 : 1));
    assert.equal(res.headers.get('x-total-count'), '9');
    assert.deepEqual(ids(res.body), ids(expected.slice(0, 4)));
    const next = new URL(links(res.headers.get('link')).next);
    assert.equal(next.searchParams.get('city'), 'Berlin');
    assert.equal(next.searchParams.get('sortby'), 'founded');
    assert.deepEqual(ids((await a.json('GET', next.href)).body), ids(expected.slice(4, 8)));
  });

  test('an owner sees only its own records, filters included', async () => {
    const res = await b.json('GET', '/v1/zoos?city=Berlin');
    assert.deepEqual(res.body.map((z: any) => z.name).sort(), ['B one', 'B two']);
    assert.equal(res.headers.get('x-total-count'), '2');
  });

  test('the parent field is a filter on the flat child collection; nested lists filter too', async () => {
    const flat = await a.json('GET', `/v1/animals?zoo_id=${parent.id}&species=cat`);
    assert.deepEqual(flat.body.map((x: any) => x.name), ['Ann', 'Cid']);
    const nested = await a.json('GET', `/v1/zoos/${parent.id}/animals?species=cat`);
    assert.deepEqual(nested.body, flat.body);
    assert.equal(nested.headers.get('x-total-count'), '2');
    const all = await a.json('GET', '/v1/animals?species=cat');
    assert.equal(all.body.length, 3);
  });

  test('the parent field is refused on the nested URL (the path already sets it)', async () => {
    assertApiError(await a.json('GET', `/v1/zoos/${parent.id}/animals?zoo_id=${parent.id}`), 400, ['zoo_id']);
  });
});

describe('bad parameters: 400 naming the parameter', () => {
  const cases: [string, string][] = [
    ['colour=red', 'colour'],
    ['owner=client:list-b', 'owner'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=', 'limit'],
    ['limit=1.5', 'limit'],
    ['offset=-1', 'offset'],
    ['offset=x', 'offset'],
    ['page=0', 'page'],
    ['page=x', 'page'],
    ['per_page=0', 'per_page'],
    ['per_page=1000', 'per_page'],
    ['page=1&limit=5', 'page'],
    ['sortby=city', 'sortby'],
    ['sortby=doc', 'sortby'],
    ['order=up', 'order'],
    ['limit=1&limit=2', 'limit'],
    ['city=Berlin&city=Paris', 'city'],
    ['sortby=name&sortby=founded', 'sortby'],
    ['page=99999999999999999999', 'page'],
  ];
  for (const [query, param] of cases) {
    test(`?${query} → 400 naming ${param}`, async () => {
      const res = await a.json('GET', `/v1/zoos?${query}`);
      assertApiError(res, 400, [param]);
    });
  }

  test('an unknown parameter on a child collection', async () => {
    assertApiError(await a.json('GET', '/v1/animals?city=Berlin'), 400, ['city']);
  });

  test('the filter of one collection is not a filter of another', async () => {
    assertApiError(await a.json('GET', '/v1/orders?city=Berlin'), 400, ['city']);
  });
});
