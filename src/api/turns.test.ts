import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Turns } from './turns.js';

/** Counts the event loop's turns (its check phase) while `work` runs. */
async function countingTurns<T>(work: (turn: () => number) => Promise<T>): Promise<T> {
  let turn = 0;
  let on = true;
  const tick = () => {
    turn++;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  try {
    return await work(() => turn);
  } finally {
    on = false;
  }
}

test('pieces queued together run one at a time, in order, each in a later turn of the event loop', async () => {
  const turns = new Turns();
  const log: { name: string; turn: number; start: number; end: number }[] = [];
  let clock = 0;
  await countingTurns(async (turn) => {
    const piece = (name: string, ms: number) => async () => {
      const start = clock++;
      await new Promise((r) => setTimeout(r, ms)); // an asynchronous piece (PostgreSQL) ...
      log.push({ name, turn: turn(), start, end: clock++ });
    };
    const sync = (name: string) => () => {
      const start = clock++; // ... and a synchronous one (SQLite)
      log.push({ name, turn: turn(), start, end: clock++ });
    };
    await Promise.all([turns.take(piece('a1', 5)), turns.take(sync('b1')), turns.take(piece('a2', 1)), turns.take(sync('b2')), turns.take(sync('c1'))]);
  });
  assert.deepEqual(log.map((l) => l.name), ['a1', 'b1', 'a2', 'b2', 'c1']);
  for (let i = 1; i < log.length; i++) {
    assert.ok(log[i].start > log[i - 1].end, `${log[i].name} started before ${log[i - 1].name} ended`);
    assert.ok(log[i].turn > log[i - 1].turn, `${log[i].name} ran in the same turn of the event loop as ${log[i - 1].name}`);
  }
});

test('a piece that fails fails its caller only; the next runs', async () => {
  const turns = new Turns();
  const failed = turns.take(() => {
    throw new Error('boom');
  });
  const next = turns.take(() => 'ran');
  await assert.rejects(failed, /boom/);
  assert.equal(await next, 'ran');
});

test('a width of 2 runs two pieces at once, never three, starting them in the order queued', async () => {
  const turns = new Turns(2);
  let now = 0;
  let most = 0;
  const started: string[] = [];
  const piece = (name: string) => async () => {
    started.push(name);
    most = Math.max(most, ++now);
    await new Promise((r) => setTimeout(r, 5));
    now--;
  };
  await Promise.all(['a', 'b', 'c', 'd', 'e'].map((n) => turns.take(piece(n))));
  assert.equal(most, 2);
  assert.deepEqual(started, ['a', 'b', 'c', 'd', 'e']);
  assert.throws(() => new Turns(0), /at least 1/);
});
