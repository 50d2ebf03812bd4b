import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TurnGate, type TurnClock } from './turn-gate.js';

/** A clock the test moves by hand; `later` callbacks run when the test ends a turn. */
class FakeLoop implements TurnClock {
  time = 0;
  private pending: (() => void)[] = [];
  now = () => this.time;
  later = (fn: () => void) => void this.pending.push(fn);
  /** The end of a turn: what was scheduled before it runs (not what it schedules), then the microtasks. */
  async endTurn(): Promise<void> {
    const due = this.pending;
    this.pending = [];
    for (const fn of due) fn();
    await new Promise<void>((r) => queueMicrotask(r));
  }
}

/** Requests of `cost` ms each, one after another in a turn: which went at once. */
function requests(loop: FakeLoop, gate: TurnGate, n: number, cost: number): boolean[] {
  const went: boolean[] = [];
  for (let i = 0; i < n; i++) {
    const now = gate.admit();
    went.push(now);
    if (now) loop.time += cost;
  }
  return went;
}

test('while a turn is within its budget every request goes on at once, whatever came before', async () => {
  const loop = new FakeLoop();
  const gate = new TurnGate(20, loop);
  for (let t = 0; t < 50; t++) {
    assert.deepEqual(requests(loop, gate, 19, 1), Array(19).fill(true));
    await loop.endTurn();
  }
  assert.equal(gate.perRequest, 1);
  assert.equal(gate.queued, 0);
  assert.equal(gate.oldestWait(), 0);
});

test('once a turn has spent its budget the next requests wait, and go in order in later turns, after a poll', async () => {
  const loop = new FakeLoop();
  const gate = new TurnGate(20, loop);
  assert.deepEqual(requests(loop, gate, 6, 5), [true, true, true, true, false, false], '4 requests of 5 ms spend 20 ms');
  assert.equal(gate.perRequest, 5);
  const went: number[] = [];
  const waits = Array.from({ length: 10 }, (_, i) => gate.wait().then(() => void went.push(i)));
  assert.equal(gate.queued, 10);
  loop.time += 7;
  assert.equal(gate.oldestWait(), 7);

  await loop.endTurn(); // this turn's immediates: nothing resumes before the event loop has polled again
  assert.deepEqual(went, []);
  assert.equal(gate.admit(), false, 'a request that comes while others wait queues behind them, even in a new turn');
  waits.push(gate.wait().then(() => void went.push(10)));
  await loop.endTurn();
  assert.deepEqual(went, [0, 1, 2, 3], 'the next turn lets 4 through, the first that came');
  await loop.endTurn();
  assert.deepEqual(went, [0, 1, 2, 3, 4, 5, 6, 7]);
  await loop.endTurn();
  assert.deepEqual(went, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  await Promise.all(waits);
  assert.equal(gate.queued, 0);
  assert.equal(gate.oldestWait(), 0);

  await loop.endTurn();
  assert.equal(gate.admit(), true, 'once nobody waits, a new turn lets requests through again');
});

test('a request costlier than the budget still goes, one per turn', async () => {
  const loop = new FakeLoop();
  const gate = new TurnGate(20, loop);
  assert.deepEqual(requests(loop, gate, 2, 50), [true, false], 'the first of a turn always goes');
  assert.equal(gate.perRequest, 50);
  const went: number[] = [];
  const waits = [0, 1, 2].map((i) => gate.wait().then(() => void went.push(i)));
  await loop.endTurn();
  await loop.endTurn();
  assert.deepEqual(went, [0]);
  await loop.endTurn();
  assert.deepEqual(went, [0, 1]);
  await loop.endTurn();
  await Promise.all(waits);
  assert.deepEqual(went, [0, 1, 2]);
});

test('work outside the requests (a bulk job between turns) is not taken for their cost', async () => {
  const loop = new FakeLoop();
  const gate = new TurnGate(20, loop);
  for (let t = 0; t < 20; t++) {
    assert.deepEqual(requests(loop, gate, 3, 2), [true, true, true]);
    loop.time += 50; // a chunk of a bulk job in the check phase
    await loop.endTurn();
  }
  assert.equal(gate.perRequest, 2);
});

test('a budget must be above zero', () => {
  assert.throws(() => new TurnGate(0), /above 0/);
});
