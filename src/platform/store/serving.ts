import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';

// Which servers use an SQLite database: each `gatehouse serve` writes `<db>.servers/<pid>` when it
// starts and removes it when it stops (also on process.exit). `gatehouse restore` refuses while a
// file there names a process that is still alive, saying which one; then, to be sure no other
// process has the database open (a command, a server of an older release), it takes the database
// out of WAL mode, which SQLite allows only to its sole connection (backup.ts, `settle`).

export interface ServingProcess {
  pid: number;
  host: string;
  started_at: string;
  /** The marker file: deleting it is how an operator clears a process that is gone for sure. */
  file: string;
}

function markerDir(databaseFile: string): string {
  return `${path.resolve(databaseFile)}.servers`;
}

/** Marks this process as serving the database; the function returned removes the mark. */
export function markServing(databaseFile: string): () => void {
  const dir = markerDir(databaseFile);
  const file = path.join(dir, String(process.pid));
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, JSON.stringify({ pid: process.pid, host: hostname(), started_at: new Date().toISOString() }) + '\n');
  const remove = () => rmSync(file, { force: true });
  process.once('exit', remove);
  return () => {
    process.removeListener('exit', remove);
    remove();
  };
}

/**
 * The processes that mark the database as served and may still run. Marks of processes of this
 * host that are gone (a crash, SIGKILL) are deleted; a mark from another host cannot be checked
 * and counts as running.
 */
export function serversOf(databaseFile: string): ServingProcess[] {
  const dir = markerDir(databaseFile);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const running: ServingProcess[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    let mark: Omit<ServingProcess, 'file'>;
    try {
      mark = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      continue; // being written or removed right now, or not ours
    }
    if (mark.host === hostname() && !alive(mark.pid)) {
      rmSync(file, { force: true });
      continue;
    }
    running.push({ ...mark, file });
  }
  return running;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
