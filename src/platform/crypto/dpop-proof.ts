import { calculateJwkThumbprint, decodeProtectedHeader, EmbeddedJWK, jwtVerify, type JWK } from 'jose';
import { sha256 } from './secrets.js';

// A DPoP proof (RFC 9449 §4.2, §4.3) read and checked against the request it came with: a JWT of
// `typ: dpop+jwt`, signed with an asymmetric algorithm by the public key it carries in `jwk`,
// naming the request's method (`htm`) and URL (`htu`), issued within IAT_WINDOW_S of now, with a
// `jti`, and on a resource request the hash of the access token (`ath`). Pure: the replay of the
// `jti` is the caller's (contract/dpop.ts), which holds the replay cache.

/** The algorithms a proof may be signed with (`dpop_signing_alg_values_supported`). */
export const DPOP_ALGS = ['ES256', 'RS256', 'PS256', 'EdDSA'] as const;

/** How far a proof's `iat` may be from now, either way (RFC 9449 §11.1). */
export const IAT_WINDOW_S = 60;

/** A proof's longest accepted text: a JWT with an RSA-4096 key and the claims, with room to spare. */
const MAX_PROOF_LENGTH = 4096;

export interface ProofExpectation {
  /** The request's method, as sent. */
  method: string;
  /** The request's URL as this server is addressed from outside (the configured base URL), no query or fragment. */
  url: string;
  /** On a resource request: the access token presented with the proof (its hash must be `ath`). */
  accessToken?: string;
  now?: number;
}

export interface VerifiedProof {
  /** The SHA-256 JWK thumbprint of the proof's key (RFC 7638), base64url: what a token is bound to. */
  jkt: string;
  jti: string;
  iat: number;
}

/** Why a proof is refused, in words for the client (error_description). */
export class ProofRefused extends Error {}

/** The proof's key thumbprint and jti, or a ProofRefused naming the first thing wrong with it. */
export async function verifyDpopProof(proof: string, expected: ProofExpectation): Promise<VerifiedProof> {
  if (proof.length > MAX_PROOF_LENGTH || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(proof)) throw new ProofRefused('the DPoP proof is not a signed JWT');
  let header;
  try {
    header = decodeProtectedHeader(proof);
  } catch {
    throw new ProofRefused('the DPoP proof header is not readable');
  }
  if (header.typ !== 'dpop+jwt') throw new ProofRefused('the DPoP proof must have typ dpop+jwt');
  if (typeof header.alg !== 'string' || !(DPOP_ALGS as readonly string[]).includes(header.alg))
    throw new ProofRefused(`the DPoP proof must be signed with one of ${DPOP_ALGS.join(', ')}`);
  const jwk = header.jwk as JWK | undefined;
  if (!jwk || typeof jwk !== 'object') throw new ProofRefused('the DPoP proof must carry its public key in jwk');
  if (['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'].some((member) => member in jwk)) throw new ProofRefused('the DPoP proof jwk must be a public key');
  let payload;
  try {
    ({ payload } = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: [...DPOP_ALGS] }));
  } catch {
    throw new ProofRefused('the DPoP proof signature does not verify with its jwk');
  }
  const now = Math.floor((expected.now ?? Date.now()) / 1000);
  if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 256) throw new ProofRefused('the DPoP proof needs a jti');
  if (typeof payload.iat !== 'number' || Math.abs(now - payload.iat) > IAT_WINDOW_S) throw new ProofRefused(`the DPoP proof iat must be within ${IAT_WINDOW_S} seconds of now`);
  if (payload.htm !== expected.method) throw new ProofRefused(`the DPoP proof htm must be ${expected.method}`);
  if (typeof payload.htu !== 'string' || normalizedHtu(payload.htu) !== normalizedHtu(expected.url)) throw new ProofRefused(`the DPoP proof htu must be ${expected.url}`);
  if (expected.accessToken !== undefined) {
    if (typeof payload.ath !== 'string') throw new ProofRefused('the DPoP proof needs ath, the hash of the access token');
    if (payload.ath !== sha256(expected.accessToken)) throw new ProofRefused('the DPoP proof ath is not the hash of this access token');
  }
  return { jkt: await calculateJwkThumbprint(jwk, 'sha256'), jti: payload.jti, iat: payload.iat };
}

/**
 * RFC 9449 §4.3: `htu` compared without query and fragment, after syntax- and scheme-based
 * normalization (RFC 3986 §6.2.2, §6.2.3): WHATWG URL parsing lower-cases scheme and host, drops
 * a default port, resolves dot segments; percent-encodings are compared in upper case.
 */
export function normalizedHtu(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return null;
  const path = (parsed.pathname || '/').replace(/%[0-9a-f]{2}/gi, (p) => p.toUpperCase());
  return `${parsed.protocol}//${parsed.host}${path}`;
}
