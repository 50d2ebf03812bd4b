import type { Store, StoreOptions } from './store.js';
import { openSqlite } from './sqlite.js';
import { openPostgres } from './postgres.js';

// The one place the engine is chosen: by the database URL (storage.database, docs/configuration.md).

const DEFAULT_PG_POOL = 10;

/**
 * Opens the database of `url`: `sqlite:<file>` (`sqlite::memory:` for a database in memory, which
 * lives as long as the store: no checkpoints, no serving marker), or `postgres://…`.
 */
export async function openStore(url: string, options: StoreOptions = {}): Promise<Store> {
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length));
  return openPostgres(url, options.pgPool ?? DEFAULT_PG_POOL);
}
