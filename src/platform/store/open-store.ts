import { existsSync } from 'node:fs';
import path from 'node:path';
import { NoDatabase, type Store, type StoreOptions } from './store.js';
import { openSqlite } from './sqlite.js';
import { openPostgres } from './postgres.js';

// The one place the engine is chosen: by the database URL (storage.database, docs/configuration.md).

const DEFAULT_PG_POOL = 10;

/**
 * Opens the database of `url`: `sqlite:<file>` (`sqlite::memory:` for a database in memory, which
 * lives as long as the store: no checkpoints, no serving marker), or `postgres://…`.
 */
export async function openStore(url: string, options: StoreOptions = {}): Promise<Store> {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    // Opening a file that is not there would create it.
    if (options.existing && file !== ':memory:' && !existsSync(file)) throw new NoDatabase(describeDatabase(url));
    return openSqlite(file);
  }
  return openPostgres(url, options.pgPool ?? DEFAULT_PG_POOL);
}

/** The database of `url` in words, its password hidden: `SQLite /path/gatehouse.db`, `PostgreSQL postgres://u:***@host/db`. */
export function describeDatabase(url: string): string {
  return url.startsWith('sqlite:') ? `SQLite ${url === 'sqlite::memory:' ? 'in memory' : path.resolve(url.slice('sqlite:'.length))}` : `PostgreSQL ${redactPassword(url)}`;
}

/** The URL with its password (user:password@ or ?password=) replaced by ***. */
export function redactPassword(url: string): string {
  return url.replace(/\/\/([^:@/]+):([^@/]*)@/, '//$1:***@').replace(/([?&]password=)[^&]*/i, '$1***');
}
