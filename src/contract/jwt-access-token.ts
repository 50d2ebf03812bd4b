import { errors, importJWK, jwtVerify, type CryptoKey, type JWK, type JWTHeaderParameters } from 'jose';
import type { AccessTokenSource } from './access-token-source.js';

// JWT access tokens (RFC 9068, auth.accessTokenFormat: jwt) as the token check sees them: a JWS
// signed with one of the deployment's signing keys (the ID token keys, published at jwks_uri),
// `typ: at+jwt`, from this issuer, not expired. Its `jti` is the stored token's selector, so the
// row (revocation, the grant, the audience) decides as it does for an opaque token: this check
// only stands in front of it. Run once per token per cache period (TokenVerifier), never per route.

const ALGORITHMS = ['RS256', 'ES256'];

/** Whether a presented token has the shape of a JWS (three dot-separated parts); opaque tokens have one dot. */
export function isJwt(token: string): boolean {
  const first = token.indexOf('.');
  return first > 0 && token.indexOf('.', first + 1) > 0;
}

export interface JwtAccessTokenClaims {
  jti: string;
  aud: string;
}

/** Verifies JWT access tokens against the signing keys, imported once per key id. */
export class JwtAccessTokenCheck {
  private readonly keys = new Map<string, Promise<CryptoKey | Uint8Array | null>>();

  constructor(
    private readonly source: AccessTokenSource,
    private readonly issuer: () => string,
  ) {}

  private key(kid: string): Promise<CryptoKey | Uint8Array | null> {
    let found = this.keys.get(kid);
    if (!found) {
      found = this.source.signingKey(kid).then((k) => (k && ALGORITHMS.includes(k.alg) ? importJWK(JSON.parse(k.publicJwk) as JWK, k.alg) : null));
      this.keys.set(kid, found);
      // An unknown id is asked again next time (a key made since by another instance), a known one never: a key id is its thumbprint.
      found.then(
        (k) => k === null && this.keys.delete(kid),
        () => this.keys.delete(kid),
      );
    }
    return found;
  }

  /** The token's `jti` and `aud`, or null when it is not a valid JWT access token of this issuer (signature, typ, iss, exp). */
  async verify(token: string, now: number): Promise<JwtAccessTokenClaims | null> {
    try {
      const { payload } = await jwtVerify(
        token,
        async (header: JWTHeaderParameters) => {
          const key = typeof header.kid === 'string' ? await this.key(header.kid) : null;
          if (!key) throw new errors.JWKSNoMatchingKey();
          return key;
        },
        { issuer: this.issuer(), typ: 'at+jwt', algorithms: ALGORITHMS, currentDate: new Date(now), requiredClaims: ['jti', 'aud', 'exp', 'sub', 'client_id'] },
      );
      const aud = Array.isArray(payload.aud) ? (payload.aud.length === 1 ? payload.aud[0] : undefined) : payload.aud;
      return typeof payload.jti === 'string' && typeof aud === 'string' ? { jti: payload.jti, aud } : null;
    } catch (e) {
      if (e instanceof errors.JOSEError || e instanceof SyntaxError || e instanceof TypeError) return null;
      throw e;
    }
  }
}
