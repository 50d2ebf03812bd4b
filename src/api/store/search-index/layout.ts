import type { RawBuilder } from 'kysely';
import type { CollectionModel } from '../../../contract/collections.js';
import type { Store } from '../../../platform/store/store.js';

// What each engine's search index module (sqlite.ts, postgres.ts beside this file) provides:
// search-index.ts picks the store's one, list-plans.ts builds a searching list from its pieces.

/** The parts of a list statement a search-only shortcut is built from (see SearchIndex.alone). */
export interface SearchListParts {
  /** The search's WHERE terms (from `where`). */
  where: RawBuilder<unknown>[];
  selected: RawBuilder<unknown>[];
  limit: RawBuilder<unknown>;
  offset: RawBuilder<unknown>;
  owner: RawBuilder<unknown>;
  ranked: boolean;
}

export interface SearchIndex {
  /**
   * The layout of a collection's index, as its settings marker names it (`<layout>:`), or '' for
   * the plain one. `once` remembers a check for the rest of one sync.
   */
  layout(store: Store, model: CollectionModel, once: (key: string, check: () => Promise<boolean>) => Promise<boolean>): Promise<string>;
  /** Drops and (when it has search fields) builds and backfills the index; `have` is the marker it had. */
  build(store: Store, model: CollectionModel, layout: string, have: string): Promise<void>;
  /** The value bound for the words of `q=`. */
  terms(words: string[]): string;
  /** The WHERE terms of a search (`owner`: the caller's subject when the list is theirs only). */
  where(model: CollectionModel, terms: RawBuilder<unknown>, owner: RawBuilder<unknown> | null): RawBuilder<unknown>[];
  /** The FROM of a searching list. */
  from(model: CollectionModel): RawBuilder<unknown>;
  /** The ORDER BY of a search ranked by relevance (`sortKeys`: the list's own order). */
  rankOrder(model: CollectionModel, terms: RawBuilder<unknown>, sortKeys: RawBuilder<unknown>[]): RawBuilder<unknown>[];
  /**
   * A search of one owner's records with no other filter, answered from the index alone (page:
   * null keeps the list's own page statement), or null where the layout has no such shortcut.
   */
  alone(model: CollectionModel, parts: SearchListParts): { page: RawBuilder<unknown> | null; count: RawBuilder<unknown> } | null;
}
