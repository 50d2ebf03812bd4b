import type { ClientRecord } from '../store/clients.js';

// What a registered client is (the rules that make one are in clients.ts).

export const GRANT_TYPES = ['authorization_code', 'implicit', 'password', 'client_credentials', 'refresh_token'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];
export type TokenType = 'bearer' | 'mac';

export interface Client extends Omit<ClientRecord, 'grantTypes' | 'tokenType'> {
  grantTypes: GrantType[];
  tokenType: TokenType;
}
