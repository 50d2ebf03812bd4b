import type { AccessTokenSource } from '../contract/active-token.js';
import type { Store } from '../platform/store/store.js';
import { clientOrigins, originRegistered } from './store/clients.js';
import { findAccessTokenWithGrant } from './store/grants.js';
import { findIdTokenPublicKey } from './store/id-token-keys.js';

/** The authorization server's side of the active-token check (contract/active-token.ts), over its own tables. */
export function accessTokenSource(store: Store): AccessTokenSource {
  return {
    find: (selector) => findAccessTokenWithGrant(store, selector),
    clientOrigins: (clientId) => clientOrigins(store, clientId),
    originRegistered: (origin) => originRegistered(store, origin),
    signingKey: (kid) => findIdTokenPublicKey(store, kid),
  };
}
