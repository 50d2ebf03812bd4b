import { closeSync, existsSync, linkSync, mkdirSync, openSync, readSync, realpathSync, renameSync, rmSync, statSync, copyFileSync } from 'node:fs';
import path from 'node:path';
import type { Database as SqliteDatabase } from 'better-sqlite3';
import { coreMigrationNames } from './migrations.js';
import { serversOf, type ServingProcess } from './serving.js';

// Backups of an SQLite database (`gatehouse backup` / `gatehouse restore`, src/cli/backup.ts).
// PostgreSQL has pg_dump and pg_restore; the CLI explains them.

/** The SQLite file of a database URL, or null for PostgreSQL. */
export function sqliteFileOf(url: string): string | null {
  return url.startsWith('sqlite:') ? path.resolve(url.slice('sqlite:'.length)) : null;
}

export interface BackupResult {
  file: string;
  bytes: number;
  /** Rows per table (gatehouse's own and the collections' r_<name>). */
  tables: Record<string, number>;
}

export interface RestoreResult extends BackupResult {
  database: string;
  /** Where the database that was replaced went (null: there was none). */
  previous: string | null;
}

/** Something about a backup or restore the operator can act on (the CLI prints the message). */
export class BackupRefused extends Error {}

/** After each step of a database larger than one step (16 MB): how far the copy is. */
export interface BackupProgress {
  copiedPages: number;
  totalPages: number;
  /** A server wrote meanwhile: SQLite started over, and copies the rest in one step now. */
  restarted: boolean;
}

/** Pages per step of the backup (16 MB at 4 KB pages); between steps the server may write. */
const STEP_PAGES = 4096;

async function sqlite(file: string, busyTimeout = 5000): Promise<SqliteDatabase> {
  const { default: BetterSqlite3 } = await import('better-sqlite3');
  return new BetterSqlite3(file, { fileMustExist: true, timeout: busyTimeout });
}

/**
 * A consistent copy of the live database through SQLite's online backup API, while servers keep
 * using it: copied in steps; when a server writes between two steps SQLite starts over, and then
 * the rest is copied in one step (one read transaction: WAL readers do not hold up writers). The
 * copy is written under a temporary name, made a single self-contained file (no WAL) and renamed.
 */
export async function backupSqlite(databaseFile: string, target: string, onProgress: (p: BackupProgress) => void): Promise<BackupResult> {
  if (!existsSync(databaseFile)) throw new BackupRefused(`there is no database at ${databaseFile}`);
  const file = path.resolve(target);
  if (!existsSync(path.dirname(file))) throw new BackupRefused(`the directory ${path.dirname(file)} does not exist`);
  if (existsSync(file) && realpathSync(file) === realpathSync(databaseFile)) throw new BackupRefused('the backup cannot replace the database itself');
  const temporary = `${file}.tmp-${process.pid}`;
  const source = await sqlite(databaseFile);
  try {
    let copied = -1;
    await source.backup(temporary, {
      progress: ({ totalPages, remainingPages }) => {
        // A restarted step copies from the first page again: no headway since the last step.
        const restarted = totalPages - remainingPages <= copied;
        copied = totalPages - remainingPages;
        if (totalPages > STEP_PAGES) onProgress({ copiedPages: copied, totalPages, restarted });
        return restarted ? 0x7fffffff : STEP_PAGES;
      },
    });
    const copy = await sqlite(temporary);
    let tables: Record<string, number>;
    try {
      copy.pragma('journal_mode = DELETE');
      tables = rowCounts(copy);
    } finally {
      copy.close();
    }
    renameSync(temporary, file);
    return { file, bytes: statSync(file).size, tables };
  } catch (e) {
    rmSync(temporary, { force: true });
    throw e;
  } finally {
    source.close();
  }
}

/**
 * Replaces the database with a backup: the file must be an SQLite database with gatehouse's
 * tables and only migrations this gatehouse knows, and no server may be using the database. The
 * backup is copied and checked under a temporary name next to the database, the current database
 * is kept as `<db>.before-restore-<time>` and the copy renamed over it (the database file is
 * never missing or half written).
 */
export async function restoreSqlite(databaseFile: string, backup: string): Promise<RestoreResult> {
  const source = path.resolve(backup);
  checkSqliteHeader(source);
  if (existsSync(`${source}-wal`))
    throw new BackupRefused(`${source} has a write-ahead log beside it (${source}-wal): it is a database in use, not a backup; make one with gatehouse backup`);
  mkdirSync(path.dirname(databaseFile), { recursive: true });
  const temporary = `${databaseFile}.restore-${process.pid}`;
  copyFileSync(source, temporary);
  let tables: Record<string, number>;
  try {
    const copy = await sqlite(temporary);
    try {
      checkGatehouseBackup(copy, source);
      copy.pragma('journal_mode = DELETE');
      tables = rowCounts(copy);
    } finally {
      copy.close();
    }
  } catch (e) {
    for (const f of [temporary, `${temporary}-wal`, `${temporary}-shm`, `${temporary}-journal`]) rmSync(f, { force: true });
    throw e;
  }

  let previous: string | null = null;
  try {
    const running = serversOf(databaseFile);
    if (running.length > 0) throw new BackupRefused(inUse(databaseFile, running));
    if (existsSync(databaseFile)) {
      await settle(databaseFile);
      previous = `${databaseFile}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      try {
        linkSync(databaseFile, previous);
      } catch {
        copyFileSync(databaseFile, previous);
      }
    }
    renameSync(temporary, databaseFile);
  } catch (e) {
    rmSync(temporary, { force: true });
    throw e;
  }
  return { file: source, bytes: statSync(databaseFile).size, tables, database: databaseFile, previous };
}

/** Folds the write-ahead log of a database no server uses into its file, so the file alone is the database. */
async function settle(databaseFile: string): Promise<void> {
  const db = await sqlite(databaseFile, 1000);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.pragma('journal_mode = DELETE');
  } catch (e) {
    throw new BackupRefused(`${databaseFile} is in use by another process (${(e as Error).message}): stop it and try again`);
  } finally {
    db.close();
  }
  if (existsSync(`${databaseFile}-wal`))
    throw new BackupRefused(`${databaseFile} is still open in another process (its write-ahead log remains): stop it and try again`);
  rmSync(`${databaseFile}-shm`, { force: true });
}

function inUse(databaseFile: string, running: ServingProcess[]): string {
  const who = running.map((p) => `pid ${p.pid} on ${p.host} since ${p.started_at}`).join('; ');
  return `a server is using ${databaseFile} (${who}): stop it first (if it is gone for sure, delete ${running.map((p) => p.file).join(', ')})`;
}

function checkSqliteHeader(file: string): void {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    throw new BackupRefused(`cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const header = Buffer.alloc(16);
  try {
    readSync(fd, header, 0, 16, 0);
  } finally {
    closeSync(fd);
  }
  if (header.toString('latin1') !== 'SQLite format 3\0') throw new BackupRefused(`${file} is not a gatehouse backup: it is not an SQLite database`);
}

const REQUIRED_TABLES = ['gatehouse_migrations', 'settings', 'signing_keys', 'users', 'clients', 'grants', 'access_tokens'];

function checkGatehouseBackup(db: SqliteDatabase, file: string): void {
  let tables: Set<string>;
  try {
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new BackupRefused(`${file} is damaged (SQLite quick_check: ${String(check)})`);
    tables = new Set(tableNames(db));
  } catch (e) {
    if (e instanceof BackupRefused) throw e;
    throw new BackupRefused(`${file} is not a gatehouse backup: SQLite cannot read it (${(e as Error).message})`);
  }
  const missing = REQUIRED_TABLES.filter((t) => !tables.has(t));
  if (missing.length > 0) throw new BackupRefused(`${file} is not a gatehouse backup: it has no ${missing.join(', ')} table${missing.length > 1 ? 's' : ''}`);
  const known = new Set(coreMigrationNames());
  const applied = (db.prepare('select name from gatehouse_migrations order by name').all() as { name: string }[]).map((r) => r.name);
  const unknown = applied.filter((n) => !known.has(n));
  if (unknown.length > 0)
    throw new BackupRefused(`${file} was made by a newer gatehouse (migrations ${unknown.join(', ')} are unknown to this one): restore it with that version`);
}

/** The database's own tables (not SQLite's, not the shadow tables of full-text indexes). */
function tableNames(db: SqliteDatabase): string[] {
  const rows = db.pragma('table_list') as { schema: string; name: string; type: string }[];
  return rows
    .filter((r) => r.schema === 'main' && r.type === 'table' && !r.name.startsWith('sqlite_'))
    .map((r) => r.name)
    .sort();
}

function rowCounts(db: SqliteDatabase): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of tableNames(db)) counts[name] = (db.prepare(`select count(*) as n from "${name.replace(/"/g, '""')}"`).get() as { n: number }).n;
  return counts;
}
