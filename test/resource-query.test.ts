// The query language (docs/api.md#listing-the-query-language) on both engines: operators, several sort
// keys, keyset paging, count=none, fields, expand and full-text search. A fast-check property
// compares the API's answer with the same filter and sort computed here over the same records,
// and walks every result by its `next` links (each record exactly once).
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createPgDatabase, pgAvailable, type Json } from './helpers/server.js';
import { startApp, type InProcessApp } from './helpers/app.js';
import { asBearer, assertApiError, clientToken, type ApiClient } from './helpers/tokens.js';

const SCOPES = 'items:read items:write parts:read parts:write';
const config = {
  api: { rateLimit: null, maxLimit: 100, expandLimit: 3 },
  collections: {
    items: {
      access: 'owner',
      schema: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string' },
          label: { type: ['string', 'null'] },
          rank: { type: 'integer' },
          score: { type: 'number' },
          open: { type: 'boolean' },
          state: { enum: ['new', 'open', 'done'] },
          at: { type: 'string', format: 'date-time' },
          text: { type: 'string' },
        },
      },
      filters: ['name', 'label', 'rank', 'score', 'open', 'state', 'at'],
      sort: ['name', 'label', 'rank', 'score', 'open', 'state', 'at', 'created_at'],
      search: ['name', 'text'],
    },
    parts: {
      parent: { collection: 'items', field: 'item_id' },
      schema: { type: 'object', required: ['part'], properties: { part: { type: 'string' } } },
      filters: ['part'],
      sort: ['part'],
    },
  },
};

type Item = Record<string, any>;
const FIELDS = ['name', 'label', 'rank', 'score', 'open', 'state', 'at'] as const;
const NAMES = ['apple', 'Apple', 'apricot', 'banana', 'b%n_a', 'cherry', 'ÉCLAIR', 'éclair', 'zebra', 'a'];
const LABELS = ['red', 'green', 'Red', 'blue', null, null];
const TIMES = ['2024-01-01T00:00:00Z', '2024-01-01T01:30:00+02:00', '2023-12-31T22:00:00-03:00', '2024-06-15T12:00:00.5Z', '2025-02-28T23:59:59Z'];
const WORDS = ['lion', 'tiger', 'bear', 'otter', 'seal'];

/** A deterministic data set with ties and absent values, so that every operator and tie-break matters. */
function dataset(): Item[] {
  let seed = 7;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
  const items: Item[] = [];
  for (let i = 0; i < 48; i++) {
    const item: Item = { name: NAMES[rnd(NAMES.length)] };
    if (rnd(4)) item.label = LABELS[rnd(LABELS.length)];
    if (rnd(5)) item.rank = rnd(7) - 2;
    if (rnd(5)) item.score = (rnd(9) - 3) / 2;
    if (rnd(3)) item.open = rnd(2) === 1;
    if (rnd(4)) item.state = ['new', 'open', 'done'][rnd(3)];
    if (rnd(4)) item.at = TIMES[rnd(TIMES.length)];
    item.text = `${WORDS[rnd(WORDS.length)]} ${WORDS[rnd(WORDS.length)]}`;
    items.push(item);
  }
  return items;
}

// --- the reference implementation -------------------------------------------------------------
type Op = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'prefix' | 'contains' | 'null';
interface Filter {
  field: (typeof FIELDS)[number];
  op: Op;
  value: string;
}

const typeOf = (field: string) => (field === 'rank' ? 'integer' : field === 'score' ? 'number' : field === 'open' ? 'boolean' : field === 'at' ? 'time' : 'string');
const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
function stored(item: Item, field: string): any {
  const v = item[field];
  if (v === undefined || v === null) return null;
  if (field === 'at') return new Date(v).toISOString();
  return v;
}
function parse(field: string, raw: string): any {
  const t = typeOf(field);
  if (t === 'integer' || t === 'number') return Number(raw);
  if (t === 'boolean') return raw === 'true';
  if (t === 'time') return new Date(raw).toISOString();
  return raw;
}
function cmp(a: any, b: any): number {
  if (typeof a === 'boolean') return Number(a) - Number(b);
  return a < b ? -1 : a > b ? 1 : 0;
}
function matches(item: Item, f: Filter): boolean {
  const v = stored(item, f.field);
  if (f.op === 'null') return (v === null) === (f.value === 'true');
  if (v === null) return false;
  switch (f.op) {
    case 'eq': return cmp(v, parse(f.field, f.value)) === 0;
    case 'ne': return cmp(v, parse(f.field, f.value)) !== 0;
    case 'gt': return cmp(v, parse(f.field, f.value)) > 0;
    case 'gte': return cmp(v, parse(f.field, f.value)) >= 0;
    case 'lt': return cmp(v, parse(f.field, f.value)) < 0;
    case 'lte': return cmp(v, parse(f.field, f.value)) <= 0;
    case 'in': return f.value.split(',').some((x) => cmp(v, parse(f.field, x)) === 0);
    case 'prefix': return String(v).startsWith(f.value);
    case 'contains': return asciiLower(String(v)).includes(asciiLower(f.value));
  }
}
/** NULLs first ascending, last descending; ties by id in the direction of the last key. */
function sorted(items: Item[], keys: { field: string; order: 'asc' | 'desc' }[]): Item[] {
  const last = keys[keys.length - 1]?.order ?? 'asc';
  return [...items].sort((x, y) => {
    for (const k of keys) {
      const a = k.field === 'created_at' ? x.created_at : stored(x, k.field);
      const b = k.field === 'created_at' ? y.created_at : stored(y, k.field);
      const dir = k.order === 'asc' ? 1 : -1;
      if (a === null && b === null) continue;
      if (a === null) return -dir;
      if (b === null) return dir;
      const c = cmp(a, b);
      if (c) return c * dir;
    }
    return (x.id < y.id ? -1 : x.id > y.id ? 1 : 0) * (last === 'asc' ? 1 : -1);
  });
}

// --- query generation --------------------------------------------------------------------------
const valueFor = (field: string): fc.Arbitrary<string> => {
  switch (typeOf(field)) {
    case 'integer': return fc.integer({ min: -3, max: 5 }).map(String);
    case 'number': return fc.integer({ min: -4, max: 6 }).map((n) => String(n / 2));
    case 'boolean': return fc.constantFrom('true', 'false');
    case 'time': return fc.constantFrom(...TIMES, '2024-01-01T00:00:00.000Z');
    default: return field === 'state' ? fc.constantFrom('new', 'open', 'done') : fc.constantFrom(...NAMES, ...LABELS.filter((l): l is string => l !== null));
  }
};
const opsFor = (field: string): Op[] => {
  const t = typeOf(field);
  if (t === 'boolean') return ['eq', 'ne', 'in', 'null'];
  if (t === 'string') return ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'prefix', 'contains', 'null'];
  return ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'null'];
};
const filterArb: fc.Arbitrary<Filter> = fc.constantFrom(...FIELDS).chain((field) =>
  fc.constantFrom(...opsFor(field)).chain((op) => {
    if (op === 'null') return fc.constantFrom('true', 'false').map((value) => ({ field, op, value }));
    if (op === 'in') return fc.uniqueArray(valueFor(field), { minLength: 1, maxLength: 3 }).map((v) => ({ field, op, value: v.join(',') }));
    if (op === 'prefix' || op === 'contains')
      return fc.constantFrom('a', 'ap', 'A', 'é', 'É', '%', '_', 'b%', 're', 'zz', 'E').map((value) => ({ field, op, value }));
    return valueFor(field).map((value) => ({ field, op, value }));
  }),
);
const sortArb = fc.uniqueArray(fc.constantFrom(...FIELDS, 'created_at'), { minLength: 0, maxLength: 3 }).chain((fields) =>
  fc.tuple(fc.constant(fields), fc.array(fc.constantFrom<'asc' | 'desc'>('asc', 'desc'), { minLength: fields.length, maxLength: fields.length })),
);

function queryString(filters: Filter[], sort: [string[], ('asc' | 'desc')[]], limit: number): string {
  const p = new URLSearchParams();
  const seen = new Set<string>();
  for (const f of filters) {
    const key = f.op === 'eq' ? f.field : `${f.field}[${f.op}]`;
    if (seen.has(key)) continue;
    seen.add(key);
    p.set(key, f.value);
  }
  if (sort[0].length) {
    p.set('sortby', sort[0].join(','));
    p.set('order', sort[1].join(','));
  }
  p.set('limit', String(limit));
  return p.toString();
}

// --- the engines ---------------------------------------------------------------------------------
for (const engine of ['SQLite', 'PostgreSQL'] as const) {
  const skip = engine === 'PostgreSQL' && !pgAvailable ? 'PostgreSQL not available' : false;
  describe(`query language on ${engine}`, { skip }, () => {
    let server: InProcessApp;
    let database: { url: string; drop(): Promise<void> } | null = null;
    let a: ApiClient;
    let other: ApiClient;
    let items: Item[] = [];

    before(async () => {
      if (skip) return;
      if (engine === 'PostgreSQL') database = await createPgDatabase();
      server = await startApp({ config, database: database?.url });
      a = asBearer(server, await clientToken(server, 'query-a', SCOPES));
      other = asBearer(server, await clientToken(server, 'query-b', SCOPES));
      for (const item of dataset()) {
        const res = await a.json('POST', '/v1/items', item);
        assert.equal(res.status, 201, res.text);
        items.push(res.body);
      }
      // Another owner's records never appear in a's lists.
      for (const name of ['apple', 'zebra']) assert.equal((await other.json('POST', '/v1/items', { name, rank: 1 })).status, 201);
      for (const item of items.slice(0, 5)) for (const part of ['p1', 'p2', 'p3', 'p4', 'p5'].slice(0, 1 + (items.indexOf(item) % 5)))
        assert.equal((await a.json('POST', `/v1/items/${item.id}/parts`, { part })).status, 201);
    });
    after(async () => {
      if (server) await server.cleanup();
      if (database) await database.drop();
    });

    const relation = (res: { headers: Headers }, rel: string) => {
      const m = new RegExp(`<([^>]+)>; rel="${rel}"`).exec(res.headers.get('link') ?? '');
      return m ? m[1].slice(server.url.length) : null;
    };

    /**
     * Every record of a list, following `next` links; asserts no record comes twice. Then back
     * from the last page by `prev` links: each gives exactly the page before, in the same order,
     * and the first page has no `prev`.
     */
    async function walk(target: string): Promise<{ ids: string[]; total: string | null; pages: number }> {
      const ids: string[] = [];
      const pages: { ids: string[]; prev: string | null }[] = [];
      let url: string | null = target;
      let total: string | null = null;
      while (url) {
        const res = await a.json('GET', url);
        assert.equal(res.status, 200, `${url}: ${res.text}`);
        if (pages.length === 0) total = res.headers.get('x-total-count');
        const page = res.body.map((r: Item) => r.id);
        ids.push(...page);
        pages.push({ ids: page, prev: relation(res, 'prev') });
        url = relation(res, 'next');
        assert.ok(pages.length < 100, 'the walk ends');
      }
      assert.equal(new Set(ids).size, ids.length, `no record twice: ${target}`);
      assert.equal(pages[0].prev, null, `the first page has no prev: ${target}`);
      // A last full page links to an empty one; the walk back starts at the last page with records.
      let at = pages.length - 1;
      while (at > 0 && pages[at].ids.length === 0) at--;
      let prev = pages[at].prev;
      for (let i = at - 1; i >= 0; i--) {
        assert.ok(prev, `page ${i + 2} of ${target} links prev`);
        const res = await a.json('GET', prev);
        assert.equal(res.status, 200, `${prev}: ${res.text}`);
        assert.deepEqual(res.body.map((r: Item) => r.id), pages[i].ids, `prev of page ${i + 2} is page ${i + 1}: ${target}`);
        prev = relation(res, 'prev');
      }
      assert.equal(prev, null, `walking back ends on the first page, which has no prev: ${target}`);
      return { ids, total, pages: pages.length };
    }

    test('random filters and sorts: the API answers what the same filter and sort computed here answer, page by page', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(filterArb, { maxLength: 3 }), sortArb, fc.integer({ min: 1, max: 7 }), async (filters, sort, limit) => {
          const qs = queryString(filters, sort, limit);
          const used = new URLSearchParams(qs);
          const applied = filters.filter((f) => used.get(f.op === 'eq' ? f.field : `${f.field}[${f.op}]`) === f.value);
          const expected = sorted(items.filter((i) => applied.every((f) => matches(i, f))), sort[0].map((field, i) => ({ field, order: sort[1][i] })));
          const { ids, total } = await walk(`/v1/items?${qs}`);
          assert.deepEqual(ids, expected.map((i) => i.id), qs);
          assert.equal(total, String(expected.length), qs);
        }),
        { numRuns: 60, seed: Number(process.env.QUERY_SEED ?? 20261123) },
      );
    });

    test('a walk by next links visits every record once even while records are inserted', async () => {
      const seen: string[] = [];
      let url: string | null = '/v1/items?sortby=rank,name&order=desc,asc&limit=5';
      let added = 0;
      while (url) {
        const res = await a.json('GET', url);
        assert.equal(res.status, 200, res.text);
        seen.push(...res.body.map((r: Item) => r.id));
        // A record that sorts before the cursor and one that sorts after it.
        if (added < 3) {
          const early = await a.json('POST', '/v1/items', { name: `early-${added}`, rank: 100 });
          const late = await a.json('POST', '/v1/items', { name: `late-${added}`, rank: -100 });
          items.push(early.body, late.body);
          added++;
        }
        const next = /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '');
        url = next ? next[1].slice(server.url.length) : null;
      }
      assert.equal(new Set(seen).size, seen.length, 'no record twice');
      const before = items.filter((i) => !String(i.name).startsWith('early-') && !String(i.name).startsWith('late-'));
      for (const i of before) assert.ok(seen.includes(i.id), `${i.name} was visited`);
      assert.equal(seen.filter((id) => items.find((i) => i.id === id && String(i.name).startsWith('late-'))).length, 3, 'the later records are reached');
    });

    test('prefix, contains and in take % _ * [ \\ literally', async () => {
      const { ids } = await walk('/v1/items?name[prefix]=b%25n_&limit=50');
      assert.deepEqual(ids.sort(), items.filter((i) => i.name === 'b%n_a').map((i) => i.id).sort());
      assert.ok(ids.length > 0);
      const underscore = await walk('/v1/items?name[contains]=_&limit=50');
      assert.deepEqual(underscore.ids.sort(), items.filter((i) => String(i.name).includes('_')).map((i) => i.id).sort());
    });

    test('count=none leaves out X-Total-Count; next links still come while pages are full', async () => {
      const res = await a.json('GET', '/v1/items?count=none&limit=5');
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-total-count'), null);
      assert.match(res.headers.get('link') ?? '', /rel="next"/);
      const offset = await a.json('GET', '/v1/items?count=none&limit=5&offset=5');
      assert.equal(offset.headers.get('x-total-count'), null);
      assert.match(offset.headers.get('link') ?? '', /offset=10[^>]*>; rel="next"/);
    });

    test('fields= returns those fields, id and link always', async () => {
      const res = await a.json('GET', '/v1/items?fields=name,rank&limit=3');
      assert.equal(res.status, 200, res.text);
      for (const r of res.body) assert.deepEqual(Object.keys(r).sort(), ['id', 'link', 'name', 'rank'].filter((k) => k !== 'rank' || 'rank' in r).sort());
      assertApiError(await a.json('GET', '/v1/items?fields=name,colour'), 400, ['fields']);
    });

    test('expand=parts carries at most expandLimit children per record; expand=parent carries the parent', async () => {
      const res = await a.json('GET', `/v1/items?expand=parts&limit=5`);
      assert.equal(res.status, 200, res.text);
      for (const r of res.body) {
        const i = items.findIndex((x) => x.id === r.id);
        assert.ok(Array.isArray(r.parts));
        assert.equal(r.parts.length, Math.min(3, i < 5 ? 1 + (i % 5) : 0), r.name);
        for (const p of r.parts) assert.equal(p.item_id, r.id);
      }
      const parts = await a.json('GET', '/v1/parts?expand=parent&limit=50');
      assert.equal(parts.status, 200, parts.text);
      for (const p of parts.body) assert.equal(p.parent.id, p.item_id);
      assertApiError(await a.json('GET', '/v1/items?expand=owners'), 400, ['expand']);
      // The related collection's scope is required.
      const narrow = asBearer(server, await clientToken(server, 'query-narrow', 'items:read'));
      assertApiError(await narrow.json('GET', '/v1/items?expand=parts'), 403, ['expand']);
    });

    test('q= finds records with every word, ranked by relevance; sortby orders instead; access rules apply', async () => {
      const word = (w: string) => items.filter((i) => String(i.text).split(' ').includes(w) || String(i.name).toLowerCase() === w);
      const lion = await walk('/v1/items?q=lion&limit=100');
      assert.deepEqual(lion.ids.sort(), word('lion').map((i) => i.id).sort());
      const both = await walk('/v1/items?q=lion%20tiger&sortby=name&limit=4');
      const expected = sorted(items.filter((i) => String(i.text).includes('lion') && String(i.text).includes('tiger')), [{ field: 'name', order: 'asc' }]);
      assert.deepEqual(both.ids, expected.map((i) => i.id));
      const theirs = await other.json('GET', '/v1/items?q=lion');
      assert.deepEqual(theirs.body, [], 'another owner sees none of them');
      assertApiError(await a.json('GET', '/v1/parts?q=x'), 400, ['q']);
    });

    test('q= on an owner collection finds, counts and pages the caller\'s matches only, each once; a change or a delete shows at once', async () => {
      // Another owner writes the same words (on SQLite each owner's records are a range of the
      // search index: collection-tables.ts syncSearch).
      const theirs: Item[] = [];
      for (const text of ['lion lion lion', 'lion otter', 'seal']) {
        const res = await other.json('POST', '/v1/items', { name: 'theirs', text });
        assert.equal(res.status, 201, res.text);
        theirs.push(res.body);
      }
      try {
        const mine = items.filter((i) => String(i.text).split(' ').includes('lion') || String(i.name).toLowerCase() === 'lion').map((i) => i.id).sort();
        assert.ok(mine.length > 3, `the data set has several lions: ${mine.length}`);
        const ranked = await walk('/v1/items?q=lion&limit=3');
        assert.deepEqual(ranked.ids.sort(), mine, 'a ranked walk by offset visits each of my matches once');
        assert.equal(ranked.total, String(mine.length));
        const sortedWalk = await walk('/v1/items?q=lion&sortby=name&limit=3');
        assert.deepEqual(sortedWalk.ids.sort(), mine, 'and so does a walk by cursor in name order');
        assert.equal(sortedWalk.total, String(mine.length));

        const seen = async () => {
          const res = await other.json('GET', '/v1/items?q=lion&limit=100');
          assert.equal(res.status, 200, res.text);
          return { ids: res.body.map((r: Item) => r.id), total: res.headers.get('x-total-count') };
        };
        assert.deepEqual(await seen(), { ids: [theirs[0].id, theirs[1].id], total: '2' }, 'the other owner: its own two, the one with three lions first');
        const changed = await other.json('PATCH', `/v1/items/${theirs[2].id}`, { text: 'sea lion' });
        assert.equal(changed.status, 200, changed.text);
        assert.deepEqual((await seen()).total, '3', 'a changed record is found by its new words');
        assert.equal((await other.json('GET', '/v1/items?q=seal')).headers.get('x-total-count'), '0', 'and no longer by its old ones');
        const gone = await other.fetch(`/v1/items/${theirs[0].id}`, { method: 'DELETE', headers: { accept: 'application/json' } });
        assert.equal(gone.status, 204);
        theirs.shift();
        assert.deepEqual(await seen(), { ids: [theirs[0].id, theirs[1].id].sort(), total: '2' });
        assert.equal((await walk('/v1/items?q=lion&limit=3')).total, String(mine.length), 'my count never moved');
      } finally {
        for (const t of theirs) await other.fetch(`/v1/items/${t.id}`, { method: 'DELETE', headers: { accept: 'application/json' } });
      }
    });

    test('bad parameters are 400 naming them, never 5xx', async () => {
      const cases: [string, string][] = [
        ['rank[gt]=x', 'rank[gt]'],
        ['rank[prefix]=1', 'rank[prefix]'],
        ['open[gt]=true', 'open[gt]'],
        ['colour[eq]=red', 'colour[eq]'],
        ['name[like]=a', 'name[like]'],
        ['name[in]=', 'name[in]'],
        ['name[in]=a,,b', 'name[in]'],
        [`name[in]=${Array.from({ length: 101 }, (_, i) => i).join(',')}`, 'name[in]'],
        ['label[null]=maybe', 'label[null]'],
        ['state=closed', 'state'],
        ['at[gt]=yesterday', 'at[gt]'],
        ['sortby=name,colour', 'sortby'],
        ['sortby=name,rank&order=asc,desc,asc', 'order'],
        ['after=garbage', 'after'],
        ['after=a.b.c', 'after'],
        ['after=x&offset=3', 'after'],
        ['count=some', 'count'],
        ['q=', 'q'],
      ];
      for (const [qs, param] of cases) assertApiError(await a.json('GET', `/v1/items?${qs}`), 400, [param]);
    });

    test('prev links on keyset pages: back from any page by before= gives the page before, for asc, desc and mixed sorts with ties and NULLs', async () => {
      for (const qs of ['limit=5', 'sortby=rank&limit=4', 'sortby=rank&order=desc&limit=4', 'sortby=label,rank&order=asc,desc&limit=3',
        'sortby=open,state,score&order=desc&limit=6', 'sortby=name&order=desc&limit=7', 'sortby=at,label&limit=5', 'q=lion&sortby=name&limit=2',
        'rank[gte]=0&sortby=score&order=desc&limit=3']) {
        const { ids } = await walk(`/v1/items?${qs}`);
        assert.ok(ids.length > 0, qs);
      }
      // A page reached by prev links next to the page it came back from, and keeps the other parameters.
      const first = await a.json('GET', '/v1/items?sortby=rank&order=desc&fields=name&limit=3');
      const second = await a.json('GET', relation(first, 'next')!);
      const back = await a.json('GET', relation(second, 'prev')!);
      assert.deepEqual(back.body, first.body);
      assert.match(relation(second, 'prev')!, /fields=name/);
      assert.doesNotMatch(relation(second, 'prev')!, /after=/);
      assert.equal(relation(back, 'prev'), null, 'back on the first page: no prev');
      assert.deepEqual((await a.json('GET', relation(back, 'next')!)).body, second.body);
    });

    test('before= is checked like after=: malformed, altered, foreign, or combined with after, offset or page → 400 naming it', async () => {
      const res = await a.json('GET', '/v1/items?sortby=rank&limit=2');
      const cursor = new URL(server.url + relation(res, 'next')!).searchParams.get('after')!;
      for (const [qs, param] of [
        ['before=garbage', 'before'],
        ['before=a.b.c', 'before'],
        [`sortby=name&before=${cursor}`, 'before'],
        [`sortby=rank&before=${cursor}&after=${cursor}`, 'before'],
        [`sortby=rank&before=${cursor}&offset=2`, 'before'],
        [`sortby=rank&before=${cursor}&page=2`, 'before'],
        [`q=lion&before=${cursor}`, 'before'],
        [`sortby=rank&before=${cursor}&before=${cursor}`, 'before'],
      ] as const)
        assertApiError(await a.json('GET', `/v1/items?${qs}`), 400, [param]);
      assert.equal((await a.json('GET', `/v1/items?sortby=rank&limit=2&before=${cursor}`)).status, 200);
    });

    test('GET of one record takes fields= and expand= as lists do; any other query parameter is 400 naming it (HEAD too); writes take none', async () => {
      const item = items[0];
      const one = await a.json('GET', `/v1/items/${item.id}?fields=name,rank`);
      assert.equal(one.status, 200, one.text);
      assert.deepEqual(Object.keys(one.body).sort(), ['id', 'link', 'name', ...('rank' in item ? ['rank'] : [])].sort());
      assert.ok(one.headers.get('etag'), 'the ETag of the record (If-Match on writes)');
      const withParts = await a.json('GET', `/v1/items/${item.id}?expand=parts`);
      assert.equal(withParts.status, 200, withParts.text);
      assert.equal(withParts.body.parts.length, 1);
      assert.equal(withParts.body.parts[0].item_id, item.id);
      const both = await a.json('GET', `/v1/items/${item.id}?expand=parts&fields=name`);
      assert.deepEqual(Object.keys(both.body).sort(), ['id', 'link', 'name', 'parts']);
      const part = withParts.body.parts[0];
      for (const path of [`/v1/parts/${part.id}`, `/v1/items/${item.id}/parts/${part.id}`]) {
        const child = await a.json('GET', `${path}?expand=parent&fields=part`);
        assert.equal(child.status, 200, child.text);
        assert.deepEqual(Object.keys(child.body).sort(), ['id', 'link', 'parent', 'part']);
        assert.equal(child.body.parent.id, item.id);
      }
      // The expanded collection's scope is required.
      const narrow = asBearer(server, await clientToken(server, 'query-narrow-one', 'items:read items:write'));
      const own = await narrow.json('POST', '/v1/items', { name: 'narrow' });
      assert.equal(own.status, 201, own.text);
      assertApiError(await narrow.json('GET', `/v1/items/${own.body.id}?expand=parts`), 403, ['expand']);
      assert.equal((await narrow.json('GET', `/v1/items/${own.body.id}?fields=name`)).status, 200);
      for (const [qs, param] of [['fields=colour', 'fields'], ['expand=owners', 'expand'], ['name=apple', 'name'], ['limit=5', 'limit'], ['sortby=name', 'sortby'], ['fields=name&fields=rank', 'fields']] as const) {
        assertApiError(await a.json('GET', `/v1/items/${item.id}?${qs}`), 400, [param]);
        assertApiError(await a.json('GET', `/v1/items/${item.id}/parts/${part.id}?${qs}`), 400, [param]);
      }
      const head = await a.fetch(`/v1/items/${item.id}?limit=5`, { method: 'HEAD', headers: { accept: 'application/json' } });
      assert.equal(head.status, 400);
      assert.equal((await a.fetch(`/v1/items/${item.id}?fields=name`, { method: 'HEAD', headers: { accept: 'application/json' } })).status, 200);
      // PUT, PATCH and DELETE take no query parameter: a 400 naming it, and nothing is changed.
      assertApiError(await a.json('PATCH', `/v1/items/${item.id}?fields=name`, { name: 'changed' }), 400, ['fields']);
      assertApiError(await a.json('PUT', `/v1/items/${item.id}?dry_run=1`, { name: 'changed' }), 400, ['dry_run']);
      const del = await a.fetch(`/v1/items/${item.id}?force=true`, { method: 'DELETE', headers: { accept: 'application/json' } });
      assert.equal(del.status, 400);
      assert.equal((await a.json('GET', `/v1/items/${item.id}`)).body.name, item.name, 'unchanged, not deleted');
    });

    test('no query value reaches a prototype: constructor, __proto__, toString as names and values answer like any unknown one (never 5xx)', async () => {
      const item = items[0];
      const cases: [string, number, string[]][] = [];
      for (const word of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
        cases.push(
          [`/v1/items?${word}=1`, 400, [word]],
          [`/v1/items?${word}[in]=1`, 400, [`${word}[in]`]],
          [`/v1/items?name[${word}]=1`, 400, [`name[${word}]`]],
          [`/v1/items?state=${word}`, 400, ['state']],
          [`/v1/items?sortby=${word}`, 400, ['sortby']],
          [`/v1/items?order=${word}`, 400, ['order']],
          [`/v1/items?fields=${word}`, 400, ['fields']],
          [`/v1/items?expand=${word}`, 400, ['expand']],
          [`/v1/items?count=${word}`, 400, ['count']],
          [`/v1/items?after=${word}`, 400, ['after']],
          [`/v1/items?before=${word}`, 400, ['before']],
          [`/v1/items/${item.id}?${word}=1`, 400, [word]],
          [`/v1/items/${item.id}?fields=${word}`, 400, ['fields']],
          [`/v1/items/${item.id}?expand=${word}`, 400, ['expand']],
          [`/v1/${word}`, 404, ['collection']],
          [`/v1/${word}/x`, 404, ['collection']],
          [`/v1/items/${item.id}/${word}`, 404, ['path']],
          [`/v1/items/${item.id}/${word}/x`, 404, ['path']],
          [`/v1/events?types=${word}`, 400, ['types']],
          [`/v1/events?collections=${word}`, 400, ['collections']],
          [`/v1/events?${word}=1`, 400, [word]],
        );
      }
      for (const [url, status, params] of cases) {
        const res = await a.json('GET', url);
        assert.equal(res.status, status, `${url}: ${res.text}`);
        assertApiError(res, status, params);
        // `k in detail` would find `constructor` on any object: the detail names it itself.
        for (const k of params) assert.ok(Object.hasOwn(res.body.detail, k), `${url} names ${k}: ${res.text}`);
      }
      // As filter values of a string field they are just strings: found where they are stored.
      const odd = await a.json('POST', '/v1/items', { name: '__proto__', label: 'constructor' });
      assert.equal(odd.status, 201, odd.text);
      items.push(odd.body);
      for (const qs of ['name=__proto__', 'label=constructor', 'name[in]=__proto__,toString', 'name[prefix]=__pro', 'label[contains]=STRUCT']) {
        const res = await a.json('GET', `/v1/items?${qs}`);
        assert.equal(res.status, 200, `${qs}: ${res.text}`);
        assert.deepEqual(res.body.map((r: Item) => r.id), [odd.body.id], qs);
      }
      assert.deepEqual((await a.json('GET', '/v1/items?name=toString')).body, []);
    });

    test('a cursor is tamper-evident and bound to its sort: altered → 400, another sort → 400', async () => {
      const res = await a.json('GET', '/v1/items?sortby=rank&limit=2');
      const next = new URL(/<([^>]+)>; rel="next"/.exec(res.headers.get('link')!)![1]);
      const cursor = next.searchParams.get('after')!;
      const [payload, key, mac] = cursor.split('.');
      const body = JSON.parse(Buffer.from(payload, 'base64url').toString());
      body.v[0] = -1000;
      const forged = `${Buffer.from(JSON.stringify(body)).toString('base64url')}.${key}.${mac}`;
      assertApiError(await a.json('GET', `/v1/items?sortby=rank&limit=2&after=${forged}`), 400, ['after']);
      assertApiError(await a.json('GET', `/v1/items?sortby=name&limit=2&after=${cursor}`), 400, ['after']);
      assertApiError(await a.json('GET', `/v1/parts?sortby=rank&limit=2&after=${cursor}`), 400, ['sortby']);
      // Another owner with a's cursor gets only their own records.
      const theirs = await other.json('GET', `/v1/items?sortby=rank&limit=50&after=${cursor}`);
      assert.equal(theirs.status, 200, theirs.text);
      assert.ok(theirs.body.every((r: Item) => r.owner === 'client:query-b'));
    });

    test('the OpenAPI document lists every list parameter, operators per field type', async () => {
      const doc = (await server.json('GET', '/v1/openapi.json')).body;
      const names = doc.paths['/items'].get.parameters.map((p: Json) => p.name);
      for (const n of ['after', 'count', 'fields', 'expand', 'q', 'sortby', 'order', 'name[prefix]', 'name[contains]', 'rank[gte]', 'rank[in]', 'label[null]', 'open[ne]', 'at[lt]'])
        assert.ok(names.includes(n), `${n} is listed`);
      for (const n of ['rank[prefix]', 'open[gt]', 'open[contains]']) assert.ok(!names.includes(n), `${n} is not listed`);
      const expand = doc.paths['/items'].get.parameters.find((p: Json) => p.name === 'expand');
      assert.deepEqual(expand.schema.enum, ['parts']);
      const partNames = doc.paths['/parts'].get.parameters.map((p: Json) => p.name);
      assert.ok(!partNames.includes('q'), 'no q where nothing is searched');
      assert.deepEqual(doc.paths['/parts'].get.parameters.find((p: Json) => p.name === 'expand').schema.enum, ['parent']);
    });

    test('the same filters on the nested and the flat child URL give the same records', async () => {
      const parent = items[4];
      const nested = await a.json('GET', `/v1/items/${parent.id}/parts?part[in]=p1,p3,p5&sortby=part&order=desc`);
      const flat = await a.json('GET', `/v1/parts?item_id=${parent.id}&part[in]=p1,p3,p5&sortby=part&order=desc`);
      assert.equal(nested.status, 200, nested.text);
      assert.deepEqual(nested.body.map((p: Item) => p.part), ['p5', 'p3', 'p1']);
      assert.deepEqual(flat.body.map((p: Item) => p.id), nested.body.map((p: Item) => p.id));
    });
  });
}

void ({} as Json);
