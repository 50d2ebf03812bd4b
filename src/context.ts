import type { Redis } from 'ioredis';
import type { Config } from './config/load.js';
import type { Store } from './store/dialect.js';
import type { CollectionRegistry } from './resources/model.js';
import type { KeyRing } from './security/keys.js';

/** What every part of a running gatehouse shares: built once at start-up by server.ts. */
export interface AppContext {
  config: Config;
  store: Store;
  redis: Redis | null;
  collections: CollectionRegistry;
  /** The server's HMAC keys (CSRF tokens, mac_key derivation), shared through the database. */
  keys: KeyRing;
}
