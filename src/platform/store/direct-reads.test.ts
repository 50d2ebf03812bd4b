// SQLite reads that need not wait run at once (sqlite.ts readNow, sql.ts rowsOf): the same rows
// as through Kysely, and never a transaction's uncommitted rows — a read from outside an open
// transaction still waits for its end.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CompiledQuery } from 'kysely';
import { openStore } from './open-store.js';
import type { StoreInternals } from './store.js';
import { rowsOf, sqlOf } from './sql.js';
import { write } from './write-path.js';

const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-direct-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const SELECT = CompiledQuery.raw('select k, v from kv where k = ?', ['a']);

test('a read outside any transaction is answered at once, with the rows Kysely gives', async () => {
  const store = (await openStore(`sqlite:${path.join(dir, 'now.db')}`)) as StoreInternals;
  try {
    await sqlOf(store).executeQuery(CompiledQuery.raw('create table kv (k text primary key, v integer)'));
    await sqlOf(store).executeQuery(CompiledQuery.raw("insert into kv values ('a', 1)"));
    assert.deepEqual(store.readNow!(SELECT), [{ k: 'a', v: 1 }]);
    assert.deepEqual(await rowsOf(store, SELECT), (await sqlOf(store).executeQuery(SELECT)).rows);
  } finally {
    await store.close();
  }
});

test("while a write's transaction is open, a read from outside waits for the commit and never sees its rows before", async () => {
  const store = (await openStore(`sqlite:${path.join(dir, 'wait.db')}`)) as StoreInternals;
  try {
    await sqlOf(store).executeQuery(CompiledQuery.raw('create table kv (k text primary key, v integer)'));
    await sqlOf(store).executeQuery(CompiledQuery.raw("insert into kv values ('a', 1)"));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let changed!: () => void;
    const inside = new Promise<void>((r) => (changed = r));
    const writing = write(store, async (tx) => {
      await sqlOf(tx).executeQuery(CompiledQuery.raw("update kv set v = 2 where k = 'a'"));
      // Inside the transaction its own reads see the change, at once or not.
      assert.deepEqual(await rowsOf(tx, SELECT), [{ k: 'a', v: 2 }]);
      changed();
      await held; // the transaction stays open across turns of the event loop (as an upload's does)
    });
    await inside;
    assert.equal(store.readNow!(SELECT), null, 'no direct read while the transaction is open');
    let seen: unknown = 'not yet';
    const reading = rowsOf(store, SELECT).then((rows) => (seen = rows));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(seen, 'not yet', 'the read waits for the transaction');
    release();
    await writing;
    await reading;
    assert.deepEqual(seen, [{ k: 'a', v: 2 }], 'and then sees the committed row');
    assert.deepEqual(store.readNow!(SELECT), [{ k: 'a', v: 2 }]);
  } finally {
    await store.close();
  }
});

test('PostgreSQL has no direct read: rowsOf goes through Kysely', { skip: process.env.GATEHOUSE_TEST_PG !== '1' && 'PostgreSQL is not reachable (TEST_DATABASE_URL)' }, async () => {
  const store = (await openStore(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test')) as StoreInternals;
  try {
    assert.equal(store.readNow, undefined);
    assert.deepEqual(await rowsOf(store, CompiledQuery.raw('select 1 as one', [])), [{ one: 1 }]);
  } finally {
    await store.close();
  }
});
