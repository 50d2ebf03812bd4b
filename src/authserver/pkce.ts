import { createHash } from 'node:crypto';
import { constantTimeEqual } from '../platform/crypto/secrets.js';

// PKCE (RFC 7636), S256 only: `plain` would hand the verifier to whoever sees the request.

export const CODE_CHALLENGE_METHODS = ['S256'] as const;

/** code_challenge and code_verifier share the same alphabet and length (RFC 7636 §4.1-4.2). */
const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;

export function isWellFormedPkceValue(value: string): boolean {
  return PKCE_VALUE.test(value);
}

export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

export function verifierMatches(verifier: string, challenge: string): boolean {
  return isWellFormedPkceValue(verifier) && constantTimeEqual(s256(verifier), challenge);
}
