import type { Redis } from 'ioredis';
import type { Config } from '../platform/config/load.js';
import type { Store } from '../platform/store/store.js';
import type { CollectionRegistry } from './collections.js';
import type { KeyRing } from '../platform/crypto/keys.js';
import type { Sealer } from '../platform/crypto/sealed.js';
import type { AccessTokenSource } from './access-token-source.js';
import type { OwnedRecords } from './owned-records.js';

/** What every part of a running gatehouse shares: built once at start-up (main/context.ts), never changed after. */
export interface AppContext {
  readonly config: Readonly<Config>;
  store: Store;
  redis: Redis | null;
  collections: CollectionRegistry;
  /** The server's HMAC keys (CSRF tokens, mac_key derivation), shared through the database. */
  keys: KeyRing;
  /** Seals and opens secrets stored for reading back (TOTP secrets, private signing keys) under the deployment's secret key. */
  sealer: Sealer;
  /** The active-token check's lookup, provided by the authorization server's store. */
  accessTokens: AccessTokenSource;
  /** The records each user owns (the account page's export and deletion), provided by the resource server's store. */
  ownedRecords: OwnedRecords;
}
