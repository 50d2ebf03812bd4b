import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { checkpointInBackground } from './checkpointer.js';

function walDatabase() {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-checkpoint-'));
  const file = path.join(dir, 'test.db');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('create table t (k text primary key, v text)');
  return { dir, file, db };
}

const autocheckpoint = (db: Database.Database) => db.pragma('wal_autocheckpoint', { simple: true });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fast = { watchMs: 50, idleMs: 1000 };

async function until(what: string, condition: () => boolean, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for: ${what}`);
    await sleep(25);
  }
}

test('checkpoints run in the worker: the database file receives the log while the writer only appends', async () => {
  const { dir, file, db } = walDatabase();
  const problems: string[] = [];
  const checkpointer = checkpointInBackground(db, file, (m) => problems.push(m), fast);
  try {
    await sleep(200);
    assert.equal(checkpointer.active, false, 'no worker before the first write');
    assert.equal(autocheckpoint(db), 1000);
    const insert = db.prepare('insert into t values (?, ?)');
    const before = statSync(file).size;
    // ~500 pages of log: far below the writer's own threshold, so only the worker can copy them.
    for (let i = 0; i < 10; i++) {
      db.transaction(() => {
        for (let j = 0; j < 200; j++) insert.run(`${i}-${j}-${Math.random()}`, 'x'.repeat(800));
      })();
    }
    await until('the worker starts', () => checkpointer.active);
    assert.equal(autocheckpoint(db), 10_000, 'while the worker runs, the writer checkpoints itself only as a safety net');
    const deadline = Date.now() + 5000;
    while (statSync(file).size <= before + 1_000_000 && Date.now() < deadline) await sleep(50);
    assert.ok(statSync(file).size > before + 1_000_000, `the database file grew from ${before} to ${statSync(file).size}`);
    assert.equal((db.prepare('select count(*) as n from t').get() as { n: number }).n, 2000);
    assert.deepEqual(problems, []);
  } finally {
    await checkpointer.stop();
    assert.equal(autocheckpoint(db), 1000, 'stop() gives the writer its default threshold back');
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a worker that cannot run reports the problem and the writer checkpoints itself again', async () => {
  const { dir, db } = walDatabase();
  const problems: string[] = [];
  const checkpointer = checkpointInBackground(db, path.join(dir, 'missing.db'), (m) => problems.push(m), fast);
  try {
    db.prepare('insert into t values (?, ?)').run('first', 'write');
    await until('a problem is reported', () => problems.length > 0);
    assert.equal(problems.length, 1, 'one problem reported');
    assert.match(problems[0], /background checkpoints stopped/);
    assert.equal(autocheckpoint(db), 1000);
    assert.equal(checkpointer.active, false);
    // Later writes do not start a worker that cannot run over and over.
    db.prepare('insert into t values (?, ?)').run('second', 'write');
    await sleep(300);
    assert.equal(problems.length, 1, 'still one problem');
    assert.equal(checkpointer.active, false);
  } finally {
    await checkpointer.stop();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the worker stops after a quiet spell, with the log copied, and comes back with the next write', async () => {
  const { dir, file, db } = walDatabase();
  const problems: string[] = [];
  const checkpointer = checkpointInBackground(db, file, (m) => problems.push(m), fast);
  const insert = db.prepare('insert into t values (?, ?)');
  const write = (tag: string) => db.transaction(() => {
    for (let j = 0; j < 200; j++) insert.run(`${tag}-${j}`, 'x'.repeat(800));
  })();
  try {
    write('a');
    await until('the worker starts', () => checkpointer.active);
    await until('the worker stops after the quiet spell', () => !checkpointer.active);
    await until('the writer checkpoints itself at the default threshold again', () => autocheckpoint(db) === 1000);
    // The worker copied the log before it stopped: 200 rows of 800 bytes are in the database file.
    assert.ok(statSync(file).size > 160_000, `the database file holds the writes (${statSync(file).size} bytes)`);
    write('b');
    await until('a write after the quiet spell starts the worker again', () => checkpointer.active);
    assert.equal(autocheckpoint(db), 10_000);
    assert.deepEqual(problems, []);
  } finally {
    await checkpointer.stop();
    assert.equal(checkpointer.active, false);
    assert.equal(autocheckpoint(db), 1000);
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
