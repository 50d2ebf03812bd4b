import type { FastifyRequest } from 'fastify';
import type { AppContext } from './context.js';
import { claimOnce } from './replay-cache.js';
import { IAT_WINDOW_S, ProofRefused, verifyDpopProof, type VerifiedProof } from '../platform/crypto/dpop-proof.js';
import { sentMethod } from '../platform/http/method-override.js';
import { sha256 } from '../platform/crypto/secrets.js';

export { ProofRefused, type VerifiedProof } from '../platform/crypto/dpop-proof.js';

// DPoP (RFC 9449) where a request arrives: the one check of a request's `DPoP` header, shared by
// the token endpoint, the resource API and userinfo (and any later resource). The proof must be
// the only one, valid for this request (platform/crypto/dpop-proof.ts) and never seen before on
// any instance (contract/replay-cache.ts).

/** A jti is remembered as long as its proof could still be accepted: the iat window both ways. */
const JTI_TTL_MS = (2 * IAT_WINDOW_S + 5) * 1000;

/** The request's DPoP header: null when absent; a ProofRefused when sent twice or empty. */
export function dpopHeader(request: FastifyRequest): string | null {
  const value = request.headers.dpop;
  if (value === undefined) return null;
  // Node joins a repeated header with ", "; a JWT has no comma.
  if (Array.isArray(value) || value.includes(',')) throw new ProofRefused('send one DPoP header');
  if (value.trim() === '') throw new ProofRefused('the DPoP header is empty');
  return value.trim();
}

/**
 * The request's URL as the client addressed it (`htu`): the configured base URL (publicUrl, or
 * auth_url for the authorization server's endpoints) and the path — never the Host header, which
 * a proxy or a client may set to anything.
 */
export function requestUrl(base: string, request: FastifyRequest): string {
  const raw = request.raw.url ?? request.url;
  const q = raw.search(/[?#]/);
  return new URL(base).origin + (q < 0 ? raw : raw.slice(0, q));
}

/**
 * The one check of a request made with a DPoP-bound access token (RFC 9449 §7): one valid proof
 * for this request and this token (`ath`), by the key the token is bound to. Null when it holds,
 * else why not (the 401's `invalid_dpop_proof` description).
 */
export async function boundRequestProblem(ctx: AppContext, request: FastifyRequest, accessToken: string, jkt: string, url: string): Promise<string | null> {
  try {
    const proof = dpopHeader(request);
    if (proof === null) return 'a DPoP-bound token needs a DPoP proof header';
    const verified = await checkDpopProof(ctx, request, proof, url, accessToken);
    return verified.jkt === jkt ? null : 'the DPoP proof is not signed by the key the token is bound to';
  } catch (e) {
    if (e instanceof ProofRefused) return e.message;
    throw e;
  }
}

/**
 * Checks the request's DPoP proof for `url` (and `accessToken`'s hash on a resource request) and
 * claims its jti; the proof's key thumbprint, or a ProofRefused saying why not.
 */
export async function checkDpopProof(ctx: AppContext, request: FastifyRequest, proof: string, url: string, accessToken?: string): Promise<VerifiedProof> {
  const verified = await verifyDpopProof(proof, { method: sentMethod(request.raw), url, accessToken });
  if (!(await claimOnce(ctx, 'dpop', sha256(`${verified.jkt}:${verified.jti}`), JTI_TTL_MS))) throw new ProofRefused('the DPoP proof was used before (jti replayed)');
  return verified;
}
