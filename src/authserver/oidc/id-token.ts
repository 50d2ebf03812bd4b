import { createHash } from 'node:crypto';
import { SignJWT, compactVerify, decodeProtectedHeader, errors, importJWK, type JWK } from 'jose';
import type { AppContext } from '../../contract/context.js';
import { issuerOf } from '../issuer.js';
import type { Client } from '../model/client.js';
import { idTokenKeys } from './keys.js';

// ID tokens (OpenID Connect Core §2, §3.1.3.6): issued beside the access token of a code
// exchange or a refresh whose scope holds `openid`, signed with the client's registered
// algorithm (RS256 unless it registered ES256). Access tokens are opaque unless the deployment
// asks for JWTs (jwt-access-token.ts), so an ID token costs only the requests that ask for one.

/** What the sign-in contributes to an ID token: when and in which session it happened, and the request's nonce. */
export interface SignInFacts {
  /** Epoch ms of the sign-in (`auth_time`). */
  authTime: number;
  sid: string | null;
  nonce?: string | null;
  /** How the user signed in (RFC 8176): `pwd`, `otp`, `hwk`, `user`. */
  amr?: readonly string[] | null;
}

/** The stored `amr` (JSON), or null. */
export function amrOf(stored: string | null): string[] | null {
  if (!stored) return null;
  try {
    const value = JSON.parse(stored) as unknown;
    return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : null;
  } catch {
    return null;
  }
}

/** `at_hash`: the left half of the SHA-256 (RS256 and ES256 both hash with SHA-256) of the access token, base64url. */
export function accessTokenHash(accessToken: string): string {
  const digest = createHash('sha256').update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

export async function mintIdToken(
  ctx: AppContext,
  input: { client: Client; subject: string; facts: SignInFacts; accessToken: string; claims: Record<string, unknown> },
): Promise<string> {
  const alg = input.client.idTokenSignedResponseAlg;
  const { kid, key } = await idTokenKeys(ctx).signingKey(alg);
  const now = Math.floor(Date.now() / 1000);
  const payload: Record<string, unknown> = {
    ...input.claims,
    auth_time: Math.floor(input.facts.authTime / 1000),
    at_hash: accessTokenHash(input.accessToken),
    azp: input.client.id,
  };
  if (input.facts.nonce) payload.nonce = input.facts.nonce;
  if (input.facts.sid) payload.sid = input.facts.sid;
  if (input.facts.amr?.length) payload.amr = [...input.facts.amr];
  return new SignJWT(payload)
    .setProtectedHeader({ alg, kid, typ: 'JWT' })
    .setIssuer(issuerOf(ctx.config))
    .setSubject(input.subject)
    .setAudience(input.client.id)
    .setIssuedAt(now)
    .setExpirationTime(now + ctx.config.auth.idTokenTtl)
    .sign(key);
}

/** The claims of an ID token gatehouse signed (expired or not: a hint names a past sign-in), or null when it is not one. */
export async function readIdTokenHint(ctx: AppContext, token: string): Promise<{ sub: string; aud: string; sid?: string } | null> {
  try {
    const header = decodeProtectedHeader(token);
    if (typeof header.kid !== 'string') return null;
    const found = await idTokenKeys(ctx).publicKey(header.kid);
    if (!found || header.alg !== found.alg) return null;
    const { payload } = await compactVerify(token, await importJWK(found.jwk as JWK, found.alg));
    const claims = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
    const aud = Array.isArray(claims.aud) ? claims.aud[0] : claims.aud;
    if (claims.iss !== issuerOf(ctx.config) || typeof claims.sub !== 'string' || typeof aud !== 'string') return null;
    return { sub: claims.sub, aud, ...(typeof claims.sid === 'string' ? { sid: claims.sid } : {}) };
  } catch (e) {
    // Not a JWS of ours (malformed, bad signature, bad JSON); anything else (the database) is no verdict on the hint.
    if (e instanceof errors.JOSEError || e instanceof SyntaxError || e instanceof TypeError) return null;
    throw e;
  }
}
