import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import type { Database as SqliteDatabase } from 'better-sqlite3';

// SQLite in WAL mode appends every commit to the log and, once the log passes a threshold, the
// committing connection copies it back into the database file and fsyncs both ("checkpoint").
// On the server that copy and fsync would run on the event loop: milliseconds in which no request
// is served. A worker thread with its own connection checkpoints instead, every INTERVAL_MS,
// never waiting on a lock (PASSIVE); the server's own automatic checkpoint stays as a safety net
// at a far higher threshold, and comes back at the default if the worker fails.
//
// The worker is a second V8 instance (a few MiB of resident set: docs/benchmarks.md, "Why the
// code is as it is"), worth it only while the server writes: it starts with the first write (the connection's change
// counter, read every WATCH_MS) and stops once nothing was written for IDLE_MS, after a last
// checkpoint; in between the serving connection checkpoints by itself at SQLite's default
// threshold, which occasional writes rarely reach.

const INTERVAL_MS = 200;
const WATCH_MS = 1000;
const IDLE_MS = 60_000;
const DEFAULT_AUTOCHECKPOINT = 1000; // pages: SQLite's default
const SAFETY_NET_AUTOCHECKPOINT = 10_000; // pages (≈ 40 MB of log): the remainder the worker has not copied yet

// Runs as CommonJS in the worker: the driver is passed by absolute path.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('synchronous = NORMAL');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (e) {
    parentPort.postMessage({ error: String((e && e.message) || e) });
  }
}, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // The serving connection's own threshold, or the next worker, copies what is left.
  }
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  /** Whether the worker is running now (it runs while the server writes). */
  readonly active: boolean;
  stop(): Promise<void>;
}

interface RunningWorker {
  stop(): Promise<void>;
}

/**
 * Moves the WAL checkpoints of `database` (a file, in WAL mode) to a worker thread while the
 * database is written; `timing` shortens the watch and the idle period (tests).
 */
export function checkpointInBackground(
  database: SqliteDatabase,
  file: string,
  onError: (message: string) => void,
  timing: { watchMs?: number; idleMs?: number } = {},
): Checkpointer {
  const changes = database.prepare('select total_changes()').pluck();
  let seen = changes.get() as number;
  let lastWrite = 0;
  let worker: RunningWorker | null = null;
  let stopping: Promise<void> | null = null;
  let failed = false;
  const idleMs = timing.idleMs ?? IDLE_MS;
  const watch = setInterval(() => {
    if (!database.open || failed) return;
    const now = changes.get() as number;
    if (now !== seen) {
      seen = now;
      lastWrite = Date.now();
    }
    const writing = lastWrite > 0 && Date.now() - lastWrite < idleMs;
    if (writing && !worker && !stopping) {
      worker = startWorker(database, file, onError, () => {
        failed = true;
        worker = null;
      });
    } else if (!writing && worker) {
      const idle = worker;
      worker = null;
      stopping = idle.stop().finally(() => (stopping = null));
    }
  }, timing.watchMs ?? WATCH_MS);
  watch.unref();
  return {
    get active() {
      return worker !== null;
    },
    async stop() {
      clearInterval(watch);
      await stopping;
      const running = worker;
      worker = null;
      await running?.stop();
    },
  };
}

/** One worker's life: from the first write after a quiet spell to the next quiet spell. */
function startWorker(database: SqliteDatabase, file: string, onError: (message: string) => void, onFailed: () => void): RunningWorker {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file, intervalMs: INTERVAL_MS } });
  worker.unref();
  database.pragma(`wal_autocheckpoint = ${SAFETY_NET_AUTOCHECKPOINT}`);
  let running = true;
  const fallBack = (message: string) => {
    if (!running) return;
    running = false;
    if (database.open) database.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT}`);
    onFailed();
    onError(message);
  };
  worker.on('message', (m: { error?: string }) => m.error && onError(`background checkpoint failed: ${m.error}`));
  worker.on('error', (e) => fallBack(`background checkpoints stopped: ${e.message}`));
  worker.on('exit', (code) => code !== 0 && fallBack(`background checkpoints stopped (worker exit ${code})`));
  return {
    async stop() {
      if (!running) return;
      running = false;
      // Wait (at most two seconds) for the worker to checkpoint once more and close its connection.
      worker.ref();
      let timer: NodeJS.Timeout | undefined;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage('stop');
      await Promise.race([exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, 2000)))]);
      clearTimeout(timer);
      await worker.terminate();
      if (database.open) database.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT}`);
    },
  };
}
