// For unit tests of the store layer: the same check on each database engine.
import { test } from 'node:test';
import { openStore } from '../../src/platform/store/open-store.js';
import type { Store } from '../../src/platform/store/store.js';
import { createPgDatabase, pgAvailable } from './server.js';

/**
 * Runs `check` against a store on each engine: SQLite in memory, and a fresh PostgreSQL database
 * (skipped when PostgreSQL is not reachable). One test per engine, named `${name} (engine)`.
 */
export function testOnEachEngine(name: string, check: (store: Store) => Promise<void>): void {
  test(`${name} (SQLite)`, async () => {
    const store = await openStore('sqlite::memory:');
    try {
      await check(store);
    } finally {
      await store.close();
    }
  });
  test(`${name} (PostgreSQL)`, { skip: !pgAvailable && 'PostgreSQL not available' }, async () => {
    const database = await createPgDatabase();
    const store = await openStore(database.url);
    try {
      await check(store);
    } finally {
      await store.close();
      await database.drop();
    }
  });
}
