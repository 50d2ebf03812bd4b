import { createHash, createHmac } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { constantTimeEqual } from '../../platform/crypto/secrets.js';
import { deriveMacKey } from '../../contract/mac-key.js';
import type { VerifiedToken } from '../../contract/active-token.js';
import { claimNonce } from './nonces.js';
import { sentMethod } from '../../platform/http/method-override.js';

// MAC access authentication (draft-ietf-oauth-v2-http-mac): the client signs a normalized request
// string with the token's mac_key; the nonce ("<age>:<random>") must be fresh and unused.

export const NONCE_WINDOW_S = 300;

export interface MacCredentials {
  id: string;
  nonce: string;
  mac: string;
  bodyhash?: string;
  ext?: string;
}

/** Parses `MAC id="…", nonce="…", mac="…"[, bodyhash="…"][, ext="…"]`; null when malformed. */
export function parseMacHeader(value: string): MacCredentials | null {
  // A Map: an attribute named `constructor` is an unknown attribute, not one found on a prototype.
  const attrs = new Map<string, string>();
  const re = /\s*([a-z]+)="((?:[^"\\]|\\.)*)"\s*(,|$)/gy;
  let m: RegExpExecArray | null;
  let consumed = 0;
  while (consumed < value.length && (m = re.exec(value))) {
    if (attrs.has(m[1])) return null;
    attrs.set(m[1], m[2].replace(/\\(.)/g, '$1'));
    consumed = re.lastIndex;
  }
  const [id, nonce, mac] = [attrs.get('id'), attrs.get('nonce'), attrs.get('mac')];
  if (consumed !== value.length || !id || !nonce || !mac) return null;
  return { id, nonce, mac, bodyhash: attrs.get('bodyhash'), ext: attrs.get('ext') };
}

export function normalizedRequestString(c: MacCredentials, method: string, uri: string, host: string, port: string): string {
  return [c.nonce, method, uri, host, port, c.bodyhash ?? '', c.ext ?? ''].join('\n') + '\n';
}

/** The bodyhash of draft-ietf-oauth-v2-http-mac: base64 SHA-256 of the entity body as sent. */
/** `sha256`: the body's digest when it was hashed as it arrived (spooled to disk) instead of kept. */
export function bodyHashMatches(expected: string, body: Buffer | undefined, sha256?: Buffer): boolean {
  return constantTimeEqual((sha256 ?? createHash('sha256').update(body ?? Buffer.alloc(0)).digest()).toString('base64'), expected);
}

export function computeMac(key: string, text: string): string {
  return createHmac('sha256', key).update(text).digest('base64');
}

/** Checks the MAC of a request made with a mac token; returns the reason when it fails. */
export async function verifyMacRequest(
  ctx: AppContext,
  request: FastifyRequest,
  credentials: MacCredentials,
  token: VerifiedToken,
): Promise<string | null> {
  const nonce = /^(\d{1,12}):([\x21-\x7e]{1,128})$/.exec(credentials.nonce);
  if (!nonce) return 'malformed nonce (expected "<age>:<random>")';
  const expectedAge = (Date.now() - token.issuedAt) / 1000;
  if (Math.abs(Number(nonce[1]) - expectedAge) > NONCE_WINDOW_S) return 'stale nonce';
  if (!token.keyId) return 'token has no MAC key';
  const key = await deriveMacKey(ctx.keys, token.keyId, credentials.id);
  if (!key) return 'token has no MAC key';
  const hostHeader = request.headers.host ?? '';
  const hostMatch = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(hostHeader);
  if (!hostMatch) return 'missing Host header';
  const text = normalizedRequestString(credentials, sentMethod(request.raw), request.raw.url ?? request.url, hostMatch[1].toLowerCase(), hostMatch[2] ?? '443');
  if (!constantTimeEqual(computeMac(key, text), credentials.mac)) return 'bad MAC';
  if (!(await claimNonce(ctx, `${token.tokenHash}:${credentials.nonce}`, NONCE_WINDOW_S * 2 * 1000))) return 'replayed nonce';
  return null;
}
