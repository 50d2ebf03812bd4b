import type { AccessTokensTable } from '../platform/store/schema.js';

// What the active-token check (active-token.ts) needs from whoever stores the tokens: the
// authorization server provides it over its own tables, and main/context.ts wires it in.

/** An access token as stored, with the state of its grant (null columns when it has none or it is gone). */
export interface StoredAccessToken extends AccessTokensTable {
  grant_found: string | null;
  grant_expires_at: number | null;
  grant_revoked_at: number | null;
}

/** How the active-token check reads tokens: the authorization server's store provides it. */
export interface AccessTokenSource {
  /** The stored token with this selector, whatever its state, or null. */
  find(selector: string): Promise<StoredAccessToken | null>;
  /**
   * The client's browser origins (CORS), or null when it is not registered now (a removed
   * client's tokens die with it).
   */
  clientOrigins(clientId: string): Promise<readonly string[] | null>;
  /** Whether some registered client lists this origin (CORS preflights, the token endpoint). */
  originRegistered(origin: string): Promise<boolean>;
  /** The public key (JWK text) and algorithm of the signing key with this id, or null: what verifies a JWT access token (RFC 9068). */
  signingKey(kid: string): Promise<{ alg: string; publicJwk: string } | null>;
}
