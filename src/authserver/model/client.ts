import type { ClientRecord } from '../store/clients.js';
import { GRANT_TYPES } from '../../platform/config/schema.js';
import type { Config } from '../../platform/config/load.js';

// What a registered client is (the rules that make one are in clients.ts).

export { GRANT_TYPES };
export type GrantType = (typeof GRANT_TYPES)[number];
/** The kinds of access token a client may be registered for (docs/oauth.md). */
export const TOKEN_TYPES = ['bearer', 'mac'] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];
/** How a client's ID tokens may be signed (OpenID Connect; `id_token_signed_response_alg`). */
export const ID_TOKEN_ALGS = ['RS256', 'ES256'] as const;
export type IdTokenAlg = (typeof ID_TOKEN_ALGS)[number];

export interface Client extends Omit<ClientRecord, 'grantTypes' | 'tokenType' | 'idTokenSignedResponseAlg'> {
  grantTypes: GrantType[];
  tokenType: TokenType;
  idTokenSignedResponseAlg: IdTokenAlg;
}

/** Whether the deployment offers this grant (`auth.grants`); a client registered for it before it was turned off still cannot use it. */
export function grantEnabled(config: Pick<Config, 'auth'>, grant: string): boolean {
  return (config.auth.grants as readonly string[]).includes(grant);
}

/** RFC 7662 §4: a client learns only about its own tokens, unless it is registered as a resource server. */
export function mayIntrospect(caller: Client, tokenClientId: string): boolean {
  return caller.introspect || caller.id === tokenClientId;
}

/** Whether an authorization code request of this client must carry a PKCE challenge (`auth.requirePkce`, `--require-pkce`). */
export function pkceRequired(config: Pick<Config, 'auth'>, client: Client): boolean {
  return client.public || client.requirePkce || config.auth.requirePkce === 'all';
}

/** Whether this client's authorization requests must be pushed to {auth_url}/par first (RFC 9126: `--require-par`, `auth.requirePushedAuthorizationRequests`). */
export function parRequired(config: Pick<Config, 'auth'>, client: Client): boolean {
  return client.requirePar || config.auth.requirePushedAuthorizationRequests;
}
