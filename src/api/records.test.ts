// The resource service without HTTP, on a real temporary SQLite store.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, DEMO_CONFIG } from '../platform/config/load.js';
import { ApiError } from '../platform/http/errors.js';
import { openStore } from '../platform/store/open-store.js';
import type { Store } from '../platform/store/store.js';
import { migrateCore } from '../platform/store/migrations.js';
import { syncCollectionTables } from './store/collection-tables.js';
import type { AppContext } from '../contract/context.js';
import type { Caller } from '../contract/caller.js';
import { buildCollections, type CollectionRegistry } from '../contract/collections.js';
import { Links } from './links.js';
import { Records, etagMatches, mergePatch, type Address, type RecordRow } from './records.js';
import { RECORD_COLUMNS } from './store/records.js';
import { parseListQuery } from './query.js';

describe('mergePatch (RFC 7396 appendix A)', () => {
  const cases: [unknown, unknown, unknown][] = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [target, patch, result] of cases)
    test(`${JSON.stringify(target)} + ${JSON.stringify(patch)}`, () => {
      assert.deepEqual(mergePatch(target as any, patch as any), result);
    });

  test('does not modify its inputs', () => {
    const target = { a: { b: 1 } };
    mergePatch(target, { a: { b: 2 } });
    assert.deepEqual(target, { a: { b: 1 } });
  });
});

describe('etagMatches (strong comparison)', () => {
  test('exact, list, star; weak and unquoted never match', () => {
    assert.equal(etagMatches('"3"', '"3"'), true);
    assert.equal(etagMatches('"1", "3"', '"3"'), true);
    assert.equal(etagMatches('*', '"3"'), true);
    assert.equal(etagMatches('"2"', '"3"'), false);
    assert.equal(etagMatches('W/"3"', '"3"'), false);
    assert.equal(etagMatches('3', '"3"'), false);
    assert.equal(etagMatches('', '"3"'), false);
  });
});

describe('Records on SQLite', () => {
  let dir: string;
  let store: Store;
  let collections: CollectionRegistry;
  let records: Records;
  const limits = { defaultLimit: 20, maxLimit: 100 };
  const who = (subject: string): Caller => ({
    subject,
    clientId: 'unit',
    scopes: new Set(),
    tokenHash: '',
    grantId: '',
    tokenType: 'bearer',
    origins: [],
    expiresAt: Number.MAX_SAFE_INTEGER,
  });
  const alice = who('user:alice');
  const bob = who('user:bob');
  const at = (name: string, parentId: string | null = null): Address => ({ model: collections.get(name)!, parentId });
  const count = async (name: string, caller = alice) =>
    (await records.list(at(name), caller, parseListQuery(collections.get(name)!, {}, limits))).total;
  const status = async (p: Promise<unknown>) => {
    try {
      await p;
      return 0;
    } catch (e) {
      assert.ok(e instanceof ApiError, String(e));
      return e.status;
    }
  };

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-records-'));
    const config = loadConfig({ file: DEMO_CONFIG, dataDir: dir, env: {} });
    store = await openStore(`sqlite:${path.join(dir, 'records.db')}`);
    collections = buildCollections(config.collections);
    await migrateCore(store);
    await syncCollectionTables(store, collections);
    const ctx = { config, store, redis: null, collections, keys: null } as unknown as AppContext;
    records = new Records(ctx, new Links(() => 'https://example.test', 1, collections));
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('create stores the document with server fields and version 1', async () => {
    const { row, replayed } = await records.create(at('zoos'), alice, { name: 'A', city: 'Rome', founded: 1911 });
    assert.equal(replayed, false);
    assert.equal(row.version, 1);
    assert.equal(row.owner, 'user:alice');
    assert.equal(records.etag(row), '"1"');
    const resource = records.toResource(collections.get('zoos')!, row);
    assert.equal(resource.name, 'A');
    assert.equal((resource.link as any).self.href, `https://example.test/v1/zoos/${row.id}`);
    assert.equal(row.x_city, 'Rome');
    assert.equal(row.x_founded, 1911);
  });

  test('owner collections: a subject lists only its own records; another subject gets 403 on read', async () => {
    const { row } = await records.create(at('zoos'), bob, { name: 'Bobs' });
    const mine = await records.list(at('zoos'), alice, parseListQuery(collections.get('zoos')!, {}, limits));
    assert.ok(mine.rows.every((r) => r.owner === 'user:alice'));
    assert.equal(await status(records.read(at('zoos'), alice, row.id)), 403);
    assert.equal((await records.read(at('zoos'), bob, row.id)).id, row.id);
  });

  test('a failed validation writes nothing', async () => {
    const before = await count('zoos');
    assert.equal(await status(records.create(at('zoos'), alice, { name: 7 })), 400);
    assert.equal(await status(records.create(at('zoos'), alice, { name: 'x', id: 'mine' })), 400);
    assert.equal(await count('zoos'), before);
  });

  test('a failed update leaves the row as it was, version included', async () => {
    const { row } = await records.create(at('zoos'), alice, { name: 'Keep', city: 'Pisa' });
    assert.equal(await status(records.update(at('zoos'), alice, row.id, { name: null }, 'merge', undefined)), 400);
    assert.equal(await status(records.update(at('zoos'), alice, row.id, { city: 'x' }, 'replace', undefined)), 400);
    assert.equal(await status(records.update(at('zoos'), alice, row.id, { name: 'New' }, 'merge', '"2"')), 412);
    const now = await records.read(at('zoos'), alice, row.id);
    const rendered = (r: RecordRow) => Object.fromEntries(RECORD_COLUMNS.map((c) => [c, r[c]]));
    assert.deepEqual(rendered(now), rendered(row));
  });

  test('update: replace drops omitted fields, merge keeps them; each bumps the version', async () => {
    const { row } = await records.create(at('zoos'), alice, { name: 'U', city: 'Bari', founded: 1 });
    const merged = await records.update(at('zoos'), alice, row.id, { founded: 2 }, 'merge', '"1"');
    assert.equal(merged.version, 2);
    assert.deepEqual(JSON.parse(merged.doc), { name: 'U', city: 'Bari', founded: 2 });
    assert.equal(merged.x_founded, 2);
    const replaced = await records.update(at('zoos'), alice, row.id, { name: 'V' }, 'replace', undefined);
    assert.equal(replaced.version, 3);
    assert.deepEqual(JSON.parse(replaced.doc), { name: 'V' });
    assert.equal(replaced.x_city, null, 'the filter column follows the document');
  });

  test('missing and deleted records: 404 then 410, inside write transactions too', async () => {
    const { row } = await records.create(at('zoos'), alice, { name: 'Gone' });
    assert.equal(await status(records.update(at('zoos'), alice, 'nope', { name: 'x' }, 'merge', undefined)), 404);
    assert.equal(await status(records.remove(at('zoos'), alice, 'nope', undefined)), 404);
    await records.remove(at('zoos'), alice, row.id, undefined);
    assert.equal(await status(records.read(at('zoos'), alice, row.id)), 410);
    assert.equal(await status(records.update(at('zoos'), alice, row.id, { name: 'x' }, 'replace', undefined)), 410);
    assert.equal(await status(records.remove(at('zoos'), alice, row.id, undefined)), 410);
    // The store still answers afterwards (no connection left waiting).
    assert.ok((await count('zoos')) >= 0);
  });

  test('children: created under their parent, 404 under a missing one, tombstoned with it', async () => {
    const { row: zoo } = await records.create(at('zoos'), alice, { name: 'Parent' });
    const { row: kid } = await records.create(at('animals', zoo.id), alice, { name: 'Kid', species: 'goat' });
    assert.equal(kid.parent_id, zoo.id);
    assert.equal(await status(records.create(at('animals', 'missing'), alice, { name: 'x', species: 'y' })), 404);
    assert.equal(await status(records.create(at('animals'), alice, { name: 'x', species: 'y', zoo_id: 'missing' })), 404);
    assert.equal(await status(records.create(at('animals', zoo.id), bob, { name: 'x', species: 'y' })), 403);
    const { row: other } = await records.create(at('zoos'), alice, { name: 'Other' });
    assert.equal(await status(records.read(at('animals', other.id), alice, kid.id)), 404);
    await records.remove(at('zoos'), alice, zoo.id, undefined);
    assert.equal(await status(records.read(at('animals'), alice, kid.id)), 410);
    assert.equal(await status(records.create(at('animals', zoo.id), alice, { name: 'Late', species: 'goat' })), 410);
  });

  test('idempotency: same key and body replays, another body is 400', async () => {
    const first = await records.create(at('zoos'), alice, { name: 'Idem' }, 'key-1');
    const again = await records.create(at('zoos'), alice, { name: 'Idem' }, 'key-1');
    assert.equal(again.replayed, true);
    assert.equal(again.row.id, first.row.id);
    assert.equal(await status(records.create(at('zoos'), alice, { name: 'Other' }, 'key-1')), 400);
    const bobs = await records.create(at('zoos'), bob, { name: 'Idem' }, 'key-1');
    assert.equal(bobs.replayed, false);
  });

  test('resourceJson is exactly JSON.stringify(toResource) for parents, children and empty documents', async () => {
    const zoo = (await records.create(at('zoos'), alice, { name: 'Json "quoted" \\ zoo', city: 'Zürich', founded: 1929 })).row;
    const animal = (await records.create(at('animals', zoo.id), alice, { name: 'Bär', species: 'bear' })).row;
    const article = (await records.create(at('articles'), alice, { title: 't' })).row;
    for (const [name, row] of [['zoos', zoo], ['animals', animal], ['articles', article]] as const) {
      const model = collections.get(name)!;
      assert.equal(records.resourceJson(model, row), JSON.stringify(records.toResource(model, row)));
    }
    const empty = { ...article, doc: '{}' };
    const model = collections.get('articles')!;
    assert.equal(records.resourceJson(model, empty), JSON.stringify(records.toResource(model, empty)));
  });

  test('a list page is exactly JSON.stringify of its records, for no, one and several rows', async () => {
    const model = collections.get('zoos')!;
    const rows = [];
    for (const name of ['One', 'Two', 'Three']) rows.push((await records.create(at('zoos'), alice, { name, city: 'Oslo', founded: 1900 })).row);
    const query = parseListQuery(model, {}, limits);
    for (const page of [[], rows.slice(0, 1), rows])
      assert.equal(await records.renderList(at('zoos'), alice, query, page), JSON.stringify(page.map((row) => records.toResource(model, row))));
  });
});
