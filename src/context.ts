import type { Redis } from 'ioredis';
import type { Config } from './config/load.js';
import type { Store } from './store/dialect.js';
import type { CollectionRegistry } from './resources/model.js';

/** What every part of a running gatehouse shares: built once at start-up by server.ts. */
export interface AppContext {
  config: Config;
  store: Store;
  redis: Redis | null;
  collections: CollectionRegistry;
}
