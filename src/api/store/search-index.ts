import type { CollectionModel } from '../../contract/collections.js';
import type { Engine, Store } from '../../platform/store/store.js';
import { readSetting, writeSetting } from '../../platform/store/settings.js';
import { sqliteSearchIndex } from './search-index/sqlite.js';
import { postgresSearchIndex } from './search-index/postgres.js';
import type { SearchIndex } from './search-index/layout.js';

// Full-text search over a collection's `search` fields (`q=`, docs/api.md "Listing: the query
// language"), kept in step with the records in the same transaction. How each engine lays the
// index out, fills it and reads it is its engine module's (search-index/sqlite.ts: FTS5;
// search-index/postgres.ts: tsvector, both after search-index/layout.ts); list-plans.ts asks
// the store's one for the pieces of a list statement.

const SEARCH_INDEXES: Record<Engine, SearchIndex> = { sqlite: sqliteSearchIndex, postgres: postgresSearchIndex };

/** The search index of the store's engine. */
export const searchIndexOf = (store: Store): SearchIndex => SEARCH_INDEXES[store.engine];

/**
 * Builds (and backfills) a collection's search index when its search fields or its layout
 * changed since the settings marker `search:<table>` was written. True when it was built now.
 */
export async function syncSearch(store: Store, model: CollectionModel, once: (key: string, check: () => Promise<boolean>) => Promise<boolean>): Promise<boolean> {
  const index = searchIndexOf(store);
  const marker = `search:${model.table}`;
  // The marker: `<layout>:<fields>`, or the fields alone for the plain layout.
  const layout = await index.layout(store, model, once);
  const want = layout + model.search.join(',');
  const have = (await readSetting(store, marker)) ?? '';
  if (want === have) return false;
  await index.build(store, model, layout, have);
  await writeSetting(store, marker, want);
  return true;
}

/**
 * Drops a collection's search index, so that the next sync builds it afresh: before a schema
 * migration rewrites every record (one build from the new documents costs a fraction of keeping
 * the index in step with each rewritten record).
 */
export async function dropSearchIndex(store: Store, model: CollectionModel): Promise<void> {
  const marker = `search:${model.table}`;
  const have = (await readSetting(store, marker)) ?? '';
  if (have === '') return;
  // The marker first: a run killed after it still has the index built by the next sync.
  await writeSetting(store, marker, '');
  await searchIndexOf(store).build(store, { ...model, search: [] }, '', have);
}

/** Builds a collection's search index again if it is not as the config wants it (after a migration that stopped). */
export async function restoreSearchIndex(store: Store, model: CollectionModel): Promise<void> {
  const checks = new Map<string, Promise<boolean>>();
  await syncSearch(store, model, (key, check) => checks.get(key) ?? (checks.set(key, check()), checks.get(key)!));
}
