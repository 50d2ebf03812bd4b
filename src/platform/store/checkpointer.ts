import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import type { Database as SqliteDatabase } from 'better-sqlite3';

// SQLite in WAL mode appends every commit to the log and, once the log passes a threshold, the
// committing connection copies it back into the database file and fsyncs both ("checkpoint").
// On the server that copy and fsync would run on the event loop: milliseconds in which no request
// is served. A worker thread with its own connection checkpoints instead, every INTERVAL_MS,
// never waiting on a lock (PASSIVE); the server's own automatic checkpoint stays as a safety net
// at a far higher threshold, and comes back at the default if the worker fails.

const INTERVAL_MS = 200;
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
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

/** Moves the WAL checkpoints of `database` (a file, in WAL mode) to a worker thread. */
export function checkpointInBackground(database: SqliteDatabase, file: string, onError: (message: string) => void): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file, intervalMs: INTERVAL_MS } });
  worker.unref();
  database.pragma(`wal_autocheckpoint = ${SAFETY_NET_AUTOCHECKPOINT}`);
  let running = true;
  const fallBack = (message: string) => {
    if (!running) return;
    running = false;
    if (database.open) database.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT}`);
    onError(message);
  };
  worker.on('message', (m: { error?: string }) => m.error && onError(`background checkpoint failed: ${m.error}`));
  worker.on('error', (e) => fallBack(`background checkpoints stopped: ${e.message}`));
  worker.on('exit', (code) => code !== 0 && fallBack(`background checkpoints stopped (worker exit ${code})`));
  return {
    async stop() {
      if (!running) return;
      running = false;
      // Wait (at most two seconds) for the worker to close its connection cleanly.
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
