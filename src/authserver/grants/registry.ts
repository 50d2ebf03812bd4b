import type { TokenGrant } from './grant.js';
import { authorizationCodeGrant } from './authorization-code.js';
import { passwordGrant } from './password.js';
import { clientCredentialsGrant } from './client-credentials.js';
import { refreshTokenGrant } from './refresh-token.js';
import { deviceCodeGrant } from './device-code.js';

// Every grant gatehouse implements, in one table (docs/oauth.md): the token endpoint dispatches on
// it, the metadata lists it (grant_types_supported, response_types_supported). Its names are
// GRANT_TYPES (platform/config/schema.ts, where `auth.grants` is checked at load; the admin schemas
// and the CLI's --grant read them there); registry.test.ts holds the two equal, in the same order.

/** A grant of the authorization endpoint alone (RFC 6749 §4.2, implicit): no token request. */
export interface AuthorizeGrant {
  grantType: RedirectGrantType;
  responseType: 'code' | 'token';
}

export type RegisteredGrant = TokenGrant | AuthorizeGrant;

const implicitGrant: AuthorizeGrant = { grantType: 'implicit', responseType: 'token' };

export const GRANTS: readonly RegisteredGrant[] = [authorizationCodeGrant, implicitGrant, passwordGrant, clientCredentialsGrant, refreshTokenGrant, deviceCodeGrant];

/** The grants of the token endpoint, by grant_type. */
export const TOKEN_GRANTS: ReadonlyMap<string, TokenGrant> = new Map(GRANTS.filter((g): g is TokenGrant => 'handler' in g).map((g) => [g.grantType, g]));

/** A grant started at the authorization endpoint, whose answer reaches the client by redirect. */
export type RedirectGrantType = 'authorization_code' | 'implicit';

/** Each response type and the grant it starts (RFC 6749 §3.1.1), in the table's order (registry.test.ts holds the pairs). */
export const RESPONSE_TYPES: readonly (readonly ['code' | 'token', RedirectGrantType])[] = GRANTS.flatMap((g) =>
  g.responseType === undefined ? [] : [[g.responseType, g.grantType as RedirectGrantType] as const],
);
