import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openStore } from '../store/open-store.js';
import type { StoreInternals } from '../store/store.js';
import { migrateCore } from '../store/migrations.js';
import { KeyRing, rotateKeys } from './keys.js';

const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-keys-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The store with every statement that reads signing_keys counted. */
function counting(store: StoreInternals): { store: StoreInternals; reads: () => number } {
  let reads = 0;
  const plugin: Parameters<StoreInternals['db']['withPlugin']>[0] = {
    transformQuery(args) {
      const node = args.node as { kind: string; from?: { froms: { table: { identifier: { name: string } } }[] } };
      if (node.kind === 'SelectQueryNode' && node.from?.froms.some((f) => f.table?.identifier?.name === 'signing_keys')) reads++;
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  return { store: { ...store, db: store.db.withPlugin(plugin) }, reads: () => reads };
}

test('requests that find the keys stale together read the table once; an unknown key id reads it anew', async () => {
  const opened = (await openStore(`sqlite:${path.join(dir, 'keys.db')}`)) as StoreInternals;
  try {
    await migrateCore(opened);
    const { store, reads } = counting(opened);
    const ring = new KeyRing(store);
    await ring.refresh();
    assert.equal(reads(), 2, 'the first load: none yet, one made, read again');

    // 50 requests in flight when the keys age: one read between them, every one signs with the same key.
    const signatures = await Promise.all(Array.from({ length: 50 }, () => ring.refresh(-1).then(() => ring.sign('payload'))));
    assert.equal(reads(), 3);
    assert.equal(new Set(signatures).size, 1);

    // A key added by another instance is found at the first text signed with it, while a periodic reload shares its read.
    const id = await rotateKeys(opened);
    assert.equal((await ring.currentKey()).id === id, false, 'not yet: the keys are fresh');
    const found = await Promise.all([ring.refresh(-1), ring.key(id)]);
    assert.equal(found[1]?.id, id);
    assert.equal(reads(), 5, 'the shared periodic read and the unknown id read of its own');
  } finally {
    await opened.close();
  }
});
