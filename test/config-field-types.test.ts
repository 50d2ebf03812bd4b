// Filter and sort fields whose type the config implies rather than states: an `enum` (or `const`)
// without `type` takes the type of its values, and `type: [T, "null"]` is a nullable T. On SQLite
// and, when it is reachable, PostgreSQL; a mixed enum stops the server with a message naming the field.
// Spawned server (test/helpers/server.ts), not in process: a bad config must stop the process with its message.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { createPgDatabase, pgAvailable, startServer, tempDir, type Json, type TestServer } from './helpers/server.js';
import { apiClient, assertApiError, type ApiClient } from './helpers/tokens.js';

const ORDERS: Json = {
  collections: {
    orders: {
      schema: {
        properties: {
          status: { enum: ['pending', 'paid', 'shipped'] },
          priority: { enum: [1, 2, 3, 10] },
          note: { type: ['null', 'string'] },
        },
      },
      filters: ['status', 'priority', 'note'],
      sort: ['status', 'priority', 'note'],
    },
  },
};

// [item, status, priority, note]; undefined leaves the field out, null stores it as null.
const ROWS: [string, string | undefined, number, string | null | undefined][] = [
  ['a', 'pending', 2, 'x'],
  ['b', 'paid', 10, null],
  ['c', 'shipped', 1, 'y'],
  ['d', 'paid', 2, undefined],
  ['e', undefined, 3, 'x'],
  ['f', 'pending', 10, null],
];

function engineSuite(engine: 'SQLite' | 'PostgreSQL', skip: string | false): void {
  describe(`enum, const and nullable fields on ${engine}`, { skip }, () => {
    let server: TestServer;
    let database: { url: string; drop(): Promise<void> } | null = null;
    let a: ApiClient;
    const ids = new Map<string, string>(); // item → id

    before(async () => {
      if (engine === 'PostgreSQL') database = await createPgDatabase();
      server = await startServer({ config: ORDERS, env: database ? { DATABASE_URL: database.url } : {} });
      if (database) assert.match(server.output(), /database\s+PostgreSQL/);
      a = await apiClient(server, `types-${engine.toLowerCase()}`);
      for (const [item, status, priority, note] of ROWS) {
        const body: Json = { item, quantity: 1, priority };
        if (status !== undefined) body.status = status;
        if (note !== undefined) body.note = note;
        const res = await a.json('POST', '/v1/orders', body);
        assert.equal(res.status, 201, res.text);
        ids.set(item, res.body.id);
      }
    });
    after(async () => {
      await server?.cleanup();
      await database?.drop();
    });

    const items = (body: Json[]) => body.map((r) => r.item);
    async function list(query: string): Promise<string[]> {
      const res = await a.json('GET', `/v1/orders?${query}`);
      assert.equal(res.status, 200, `${query}: ${res.text}`);
      assert.equal(res.headers.get('x-total-count'), String(res.body.length));
      return items(res.body);
    }

    test('status=paid returns exactly the paid orders', async () => {
      assert.deepEqual(await list('status=paid'), ['b', 'd']);
      assert.deepEqual(await list('status=pending&sortby=priority'), ['a', 'f']);
      assert.deepEqual(await list('status=shipped'), ['c']);
    });

    test('sortby=status orders by value, a missing value first ascending and last descending', async () => {
      assert.deepEqual(await list('sortby=status'), ['e', 'b', 'd', 'a', 'f', 'c']);
      assert.deepEqual(await list('sortby=status&order=desc'), ['c', 'f', 'a', 'd', 'b', 'e']);
    });

    test('an integer enum filters and sorts as integers', async () => {
      assert.deepEqual(await list('priority=2'), ['a', 'd']);
      assert.deepEqual(await list('priority=02'), ['a', 'd']);
      // 10 after 3: numeric order, not text order.
      assert.deepEqual(await list('sortby=priority'), ['c', 'a', 'd', 'e', 'b', 'f']);
    });

    test('a nullable string filters and sorts; null matches no filter', async () => {
      assert.deepEqual(await list('note=x'), ['a', 'e']);
      assert.deepEqual(await list('note=null'), []);
      assert.deepEqual(await list('note='), []);
      // null and missing alike come first ascending (ties in id order), last descending.
      assert.deepEqual(await list('sortby=note'), ['b', 'd', 'f', 'a', 'e', 'c']);
      assert.deepEqual(await list('sortby=note&order=desc'), ['c', 'e', 'a', 'f', 'd', 'b']);
    });

    test('a value outside the enum is a 400 naming the field', async () => {
      const res = await a.json('GET', '/v1/orders?status=unknown');
      assertApiError(res, 400, ['status']);
      assert.match(res.body.detail.status, /pending, paid, shipped/);
      assertApiError(await a.json('GET', '/v1/orders?priority=4'), 400, ['priority']);
      assertApiError(await a.json('GET', '/v1/orders?priority=two'), 400, ['priority']);
    });

    test('the OpenAPI document shows the enum of each filter', async () => {
      const doc = (await server.json('GET', '/v1/openapi.json')).body;
      const params = doc.paths['/orders'].get.parameters as Json[];
      const schemaOf = (name: string) => params.find((p) => p.name === name)?.schema;
      assert.deepEqual(schemaOf('status'), { type: 'string', enum: ['pending', 'paid', 'shipped'] });
      assert.deepEqual(schemaOf('priority'), { type: 'integer', enum: [1, 2, 3, 10] });
      assert.deepEqual(schemaOf('note'), { type: 'string' });
    });
  });
}

engineSuite('SQLite', false);
engineSuite('PostgreSQL', pgAvailable ? false : 'needs PostgreSQL');

test('a mixed enum as a filter stops the server with a message naming the field', async () => {
  const bad = { collections: { orders: { schema: { properties: { status: { enum: ['paid', 2] } } }, filters: ['status'] } } };
  const dataDir = tempDir();
  let started: TestServer | null = null;
  try {
    await assert.rejects(
      startServer({ config: bad, dataDir }).then((s) => (started = s)),
      /exited with [1-9]\d* before listening:[\s\S]*collections\.orders\.filters\[0\]: "status" cannot be filtered: it mixes string and integer values in its enum/,
    );
  } finally {
    await (started as TestServer | null)?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
