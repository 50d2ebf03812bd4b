import type { AccessTokenSource } from '../contract/active-token.js';
import type { Store } from '../platform/store/store.js';
import { clientOrigins, originRegistered } from './store/clients.js';
import { findAccessTokenWithGrant } from './store/grants.js';
import { isMetadataDocumentId } from './model/client-metadata-document.js';
import { findIdTokenPublicKey } from './store/id-token-keys.js';

/**
 * The authorization server's side of the active-token check (contract/active-token.ts), over its own tables.
 * A client of a metadata document is in no table: its tokens live while documents are accepted
 * (`auth.clientMetadataDocuments`), with no browser origin of their own (CORS).
 */
export function accessTokenSource(store: Store, metadataDocuments = true): AccessTokenSource {
  return {
    find: (selector) => findAccessTokenWithGrant(store, selector),
    clientOrigins: async (clientId) => (isMetadataDocumentId(clientId) ? (metadataDocuments ? [] : null) : clientOrigins(store, clientId)),
    originRegistered: (origin) => originRegistered(store, origin),
    signingKey: (kid) => findIdTokenPublicKey(store, kid),
  };
}
