// The outbox on each engine: events appended by a write exist exactly when it commits, ids
// increase, a token's selection is the same rule in SQL and in memory, and the retention sweep
// makes an older resume point 410.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { migrateCore } from '../platform/store/migrations.js';
import { write } from '../platform/store/write-path.js';
import { latestEventId, readEvents } from '../platform/store/outbox.js';
import { ApiError } from '../platform/http/errors.js';
import { EventSelection, purgedThrough, readSelected, sweepEvents } from '../contract/event-bus.js';
import type { AppContext } from '../contract/context.js';
import { requireRetained, sseFrame } from './events.js';
import { testOnEachEngine } from '../../test/helpers/stores.js';

testOnEachEngine('the outbox: commit or nothing, increasing ids, one selection rule, retention → 410', async (store) => {
  await migrateCore(store);
  const ctx = { store, config: { events: { retention: 60 } } } as unknown as AppContext;
  const record = (collection: string, owner: string, id: string) => ({ type: 'record.created', collection, record_id: id, owner, actor: owner, data: JSON.stringify({ id }) });
  await write(store, async (tx) => {
    tx.emit(record('zoos', 'user:a', 'z1'));
    tx.emit(record('zoos', 'user:b', 'z2'));
  });
  await write(store, async (tx) => tx.emit(record('articles', 'user:b', 'a1')));
  await write(store, async (tx) => tx.emit({ type: 'client.created', record_id: 'shop', data: '{}' }));
  // A write that fails after emitting leaves nothing.
  await assert.rejects(
    write(store, async (tx) => {
      tx.emit(record('zoos', 'user:a', 'never'));
      throw new Error('refused');
    }),
    /refused/,
  );
  const all = await readEvents(store, { after: 0, limit: 100, types: null, collections: null });
  assert.deepEqual(
    all.map((e) => e.record_id),
    ['z1', 'z2', 'a1', 'shop'],
  );
  assert.ok(all.every((e, i) => i === 0 || e.id > all[i - 1].id));
  assert.equal(await latestEventId(store), all[3].id);
  assert.equal(all[0].data, '{"id":"z1"}');

  // user:a reading zoos (owner) and articles (shared): its own zoo and every article, never the client event.
  const selection = new EventSelection(['record.created'], ['zoos', 'articles'], { subject: 'user:a', collections: ['zoos'] });
  const picked = await readSelected(ctx, selection, 0, 100);
  assert.deepEqual(
    picked.map((e) => e.record_id),
    ['z1', 'a1'],
  );
  assert.deepEqual(
    all.filter((e) => selection.matches(e)).map((e) => e.record_id),
    ['z1', 'a1'],
  );
  assert.deepEqual(
    (await readSelected(ctx, selection, picked[0].id, 100)).map((e) => e.record_id),
    ['a1'],
  );

  // Retention: nothing is old yet; a minute and more later, everything goes and an old resume point is 410.
  assert.equal(await sweepEvents(ctx), 0);
  await requireRetained(ctx, 0);
  assert.equal(await sweepEvents(ctx, Date.now() + 61_000), 4);
  assert.equal(await purgedThrough(ctx), all[3].id);
  await assert.rejects(requireRetained(ctx, all[1].id), (e: unknown) => e instanceof ApiError && e.status === 410);
  await requireRetained(ctx, all[3].id);
  // Ids keep increasing after a sweep (never reused).
  await write(store, async (tx) => tx.emit(record('zoos', 'user:a', 'z3')));
  assert.ok((await latestEventId(store)) > all[3].id);
});

test('an SSE frame is id, event and data lines, made once per event; a line break never escapes its data line', () => {
  const e = { id: 7, type: 'record.created', time: 0, collection: 'zoos', record_id: 'z1', owner: null, actor: null, data: '{"a":1}' };
  const frame = sseFrame(e);
  assert.equal(frame, `id: 7\nevent: record.created\ndata: {"id":"7","type":"record.created","time":"1970-01-01T00:00:00.000Z","collection":"zoos","record_id":"z1","owner":null,"actor":null,"data":{"a":1}}\n\n`);
  assert.equal(sseFrame(e), frame);
  // Stored data is JSON text without raw line breaks; were one there, it would stay inside data lines.
  const odd = { ...e, id: 8, data: '{"a":\n1}' };
  const lines = sseFrame(odd).split('\n');
  assert.deepEqual(lines.slice(0, 2), ['id: 8', 'event: record.created']);
  assert.ok(lines.slice(2, -2).every((l) => l.startsWith('data: ')), sseFrame(odd));
  assert.deepEqual(lines.slice(-2), ['', '']);
});
