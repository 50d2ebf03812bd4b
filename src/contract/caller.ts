/** Who is calling the resource API, as established from the access token. */
export interface Caller {
  /** `user:<id>` or `client:<client_id>`: owns what it creates. */
  subject: string;
  clientId: string;
  scopes: ReadonlySet<string>;
  tokenHash: string;
  /** The authorization the token came from; null for client_credentials tokens, which stand alone. */
  grantId: string | null;
  /** `dpop`: bound to a key (RFC 9449), presented with the DPoP scheme and a proof by that key. */
  tokenType: 'bearer' | 'mac' | 'dpop';
  /** Epoch ms after which the token is no longer valid (access token expiry or grant validity). */
  expiresAt: number;
  /** The browser origins of the token's client: a request from one of them may read the answer (CORS). */
  origins: readonly string[];
}
