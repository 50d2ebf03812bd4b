// Property (fast-check): random writes by two subjects across an `owner` collection (zoos) and a
// `shared` one (articles); readers of either subject with random read scopes. Every reader's feed
// and stream carry exactly the events of the records that token could GET, in order — nothing
// more, nothing less — and refused writes leave no event.
// Spawned server (test/helpers/server.ts), not in process: event streams (Server-Sent Events) stay open, which inject cannot read.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startServer, type TestServer } from './helpers/server.js';
import { apiClient, type ApiClient } from './helpers/tokens.js';
import { openStream } from './helpers/events.js';

let server: TestServer;
let writers: ApiClient[];
before(async () => {
  server = await startServer({ config: { api: { rateLimit: null }, collections: { articles: { access: 'shared' } } } });
  const all = 'zoos:read zoos:write articles:read articles:write';
  writers = [await apiClient(server, 'evp-a', all), await apiClient(server, 'evp-b', all)];
});
after(async () => server?.cleanup());

type Who = 0 | 1;
type Collection = 'zoos' | 'articles';
type Command = { kind: 'create'; who: Who; collection: Collection } | { kind: 'update' | 'delete'; who: Who; target: number };
interface Expected {
  type: string;
  collection: Collection;
  record_id: string;
  owner: Who;
}

const who = fc.constantFrom<Who>(0, 1);
const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('create' as const), who, collection: fc.constantFrom<Collection>('zoos', 'articles') }) },
  fc.record({ kind: fc.constantFrom('update' as const, 'delete' as const), who, target: fc.nat(30) }),
);
const readScopes = fc.subarray(['zoos:read', 'articles:read'], { minLength: 1 });

const records: { id: string; collection: Collection; owner: Who; deleted: boolean }[] = [];

async function lastId(client: ApiClient): Promise<string> {
  let after = '0';
  for (;;) {
    const page = (await client.json('GET', `/v1/events?after=${after}&limit=100`)).body;
    if (page.length === 0) return after;
    after = page[page.length - 1].id;
  }
}

async function feed(client: ApiClient, after: string): Promise<{ id: string; type: string; collection: string; record_id: string; owner: string }[]> {
  const out = [];
  for (;;) {
    const res = await client.json('GET', `/v1/events?after=${after}&limit=7`);
    assert.equal(res.status, 200, res.text);
    if (res.body.length === 0) return out;
    out.push(...res.body);
    after = res.body[res.body.length - 1].id;
  }
}

test('every feed and stream carries exactly the events of the records its token could GET', async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(who, readScopes), { minLength: 1, maxLength: 3 }), fc.array(command, { minLength: 1, maxLength: 12 }), async (readerSpecs, commands) => {
      run++;
      const readers = await Promise.all(readerSpecs.map(async ([w, scopes], i) => ({ who: w, scopes, client: await apiClient(server, `evp-${'ab'[w]}`, scopes.join(' ')), i })));
      // Every event so far is one of the two writers' views: the newest of both is the start.
      const start = String(Math.max(Number(await lastId(writers[0])), Number(await lastId(writers[1]))));
      // One stream per run, from the start point: it must end up with the same events as the feed.
      const streamReader = readers[0];
      const stream = await openStream(server, '/v1/events', { authorization: `Bearer ${streamReader.client.token}`, 'last-event-id': start });
      assert.equal(stream.status, 200);
      const expected: Expected[] = [];
      for (const c of commands) {
        const me = writers[c.who];
        if (c.kind === 'create') {
          const body = c.collection === 'zoos' ? { name: `p${run}`, city: 'X', founded: 1900 } : { title: `p${run}` };
          const res = await me.json('POST', `/v1/${c.collection}`, body);
          assert.equal(res.status, 201, res.text);
          records.push({ id: res.body.id, collection: c.collection, owner: c.who, deleted: false });
          expected.push({ type: 'record.created', collection: c.collection, record_id: res.body.id, owner: c.who });
          continue;
        }
        const live = records.filter((r) => !r.deleted);
        const target = live[c.target % Math.max(live.length, 1)];
        if (!target) continue;
        const url = `/v1/${target.collection}/${target.id}`;
        const res = c.kind === 'update' ? await me.json('PATCH', url, target.collection === 'zoos' ? { city: `c${run}` } : { body: `b${run}` }) : await me.json('DELETE', url);
        const allowed = target.collection === 'articles' || target.owner === c.who;
        if (!allowed) {
          assert.equal(res.status, 403, res.text);
          continue;
        }
        assert.equal(res.status, c.kind === 'update' ? 200 : 204, res.text);
        if (c.kind === 'delete') target.deleted = true;
        expected.push({ type: c.kind === 'update' ? 'record.updated' : 'record.deleted', collection: target.collection, record_id: target.id, owner: target.owner });
      }
      const visibleTo = (r: { who: Who; scopes: string[] }) =>
        expected.filter((e) => r.scopes.includes(`${e.collection}:read`) && (e.collection === 'articles' || e.owner === r.who)).map((e) => `${e.type} ${e.collection} ${e.record_id}`);
      for (const r of readers) {
        const got = (await feed(r.client, start)).map((e) => `${e.type} ${e.collection} ${e.record_id}`);
        assert.deepEqual(got, visibleTo(r), `reader ${r.i} (${'ab'[r.who]}, ${r.scopes.join(' ')})`);
      }
      const want = visibleTo(streamReader);
      if (want.length) await stream.waitFor(want.length, 5000);
      else await new Promise((resolve) => setTimeout(resolve, 300));
      stream.close();
      assert.deepEqual(
        stream.events.map((e) => {
          const d = JSON.parse(e.data);
          assert.equal(e.id, d.id);
          assert.equal(e.event, d.type);
          return `${d.type} ${d.collection} ${d.record_id}`;
        }),
        want,
        'the stream',
      );
    }),
    { numRuns: 15 },
  );
});
