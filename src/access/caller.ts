/** Who is calling the resource API, as established from the access token. */
export interface Caller {
  /** `user:<id>` or `client:<client_id>`: owns what it creates. */
  subject: string;
  clientId: string;
  scopes: ReadonlySet<string>;
  tokenHash: string;
  grantId: string;
  tokenType: 'bearer' | 'mac';
  /** Epoch ms after which the token is no longer valid (access token expiry or grant validity). */
  expiresAt: number;
}
