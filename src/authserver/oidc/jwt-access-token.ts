import { SignJWT } from 'jose';
import type { AppContext } from '../../contract/context.js';
import { resourceUrl } from '../../contract/resources.js';
import { issuerOf } from '../issuer.js';
import { idTokenKeys } from './keys.js';

// JWT access tokens (RFC 9068; auth.accessTokenFormat: jwt, docs/oauth.md#jwt-access-tokens):
// the token pipeline (tokens.ts `mint`) calls this instead of drawing an opaque token. Signed
// with the deployment's current RS256 key (the ID token key ring, published at jwks_uri), so a
// resource server elsewhere can check it offline; gatehouse itself still finds the stored row by
// the `jti` (the opaque token's selector) and checks revocation, the grant and the audience there.

export interface JwtAccessTokenInput {
  /** The stored row's selector. */
  jti: string;
  subject: string;
  clientId: string;
  /** The audience as stored (a resource's path under publicUrl). */
  audience: string;
  scope: string;
  /** Epoch ms. */
  issuedAt: number;
  expiresAt: number;
  /** Epoch ms of the user's sign-in, when known. */
  authTime?: number;
  /** DPoP: the thumbprint of the key the token is bound to (`cnf.jkt`), if any. */
  jkt?: string | null;
}

export async function mintJwtAccessToken(ctx: AppContext, input: JwtAccessTokenInput): Promise<string> {
  const { kid, key } = await idTokenKeys(ctx).signingKey('RS256');
  const payload: Record<string, unknown> = { client_id: input.clientId, scope: input.scope };
  if (input.authTime !== undefined) payload.auth_time = Math.floor(input.authTime / 1000);
  // RFC 9449 §6.1: a DPoP-bound token names the key it is bound to.
  if (input.jkt) payload.cnf = { jkt: input.jkt };
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' })
    .setIssuer(issuerOf(ctx.config))
    .setSubject(input.subject)
    .setAudience(resourceUrl(ctx.config, input.audience))
    .setIssuedAt(Math.floor(input.issuedAt / 1000))
    .setExpirationTime(Math.floor(input.expiresAt / 1000))
    .setJti(input.jti)
    .sign(key);
}
