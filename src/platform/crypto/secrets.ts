import { hash, randomBytes, randomFillSync, randomInt, timingSafeEqual, createHmac } from 'node:crypto';
import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { v7 as uuidv7 } from 'uuid';

// Secrets at rest: passwords with argon2id; client secrets, codes, tokens and sessions only as
// SHA-256 hashes. Every comparison of a secret with a stored value is constant-time.

// Random bytes are drawn from the CSPRNG 4 KiB at a time (as node's randomUUID does): one call
// per 128 tokens instead of one per token. Each byte is handed out once, then zeroed.
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let poolOffset = POOL_SIZE;

/** A random secret of `bytes` bytes (≥128 bits by default 256), base64url. */
export function randomSecret(bytes = 32): string {
  if (bytes > POOL_SIZE / 4) return randomBytes(bytes).toString('base64url');
  if (poolOffset + bytes > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const end = poolOffset + bytes;
  const secret = pool.toString('base64url', poolOffset, end);
  pool.fill(0, poolOffset, end);
  poolOffset = end;
  return secret;
}

/** `length` characters drawn uniformly from `alphabet` (a code a person types, such as a device's user code). */
export function randomCode(alphabet: string, length: number): string {
  let code = '';
  for (let i = 0; i < length; i++) code += alphabet[randomInt(alphabet.length)];
  return code;
}

/**
 * Access tokens are `<selector>.<secret>`. The selector — a time-ordered UUIDv7 in hex, not a
 * secret — is the stored row's key, so issuing a token appends to the key's index instead of
 * writing a random page of it (the token endpoint's main write cost). The row holds only the
 * SHA-256 of the whole token, compared in constant time after the lookup. A token issued before
 * selectors existed (no dot) is keyed by its hash; a JWT access token by its `jti` (jwtId).
 */
export interface AccessTokenKey {
  id: string;
  hash: string;
}

export function newAccessToken(): AccessTokenKey & { token: string } {
  const id = newTimeOrderedId().replaceAll('-', '');
  const token = `${id}.${randomSecret(32)}`;
  return { token, id, hash: sha256(token) };
}

export function accessTokenKey(token: string): AccessTokenKey {
  const hash = sha256(token);
  const dot = token.indexOf('.');
  if (dot < 0) return { id: hash, hash };
  const second = token.indexOf('.', dot + 1);
  return { id: second < 0 ? token.slice(0, dot) : (jwtId(token.slice(dot + 1, second)) ?? hash), hash };
}

/**
 * A JWT access token (RFC 9068) carries its row's selector as `jti`: read here unverified, only to
 * find the row, whose hash the whole token must match (the token check also verifies the signature).
 */
function jwtId(payload: string): string | null {
  try {
    const jti = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { jti?: unknown }).jti;
    return typeof jti === 'string' && /^[0-9a-f]{32}$/.test(jti) ? jti : null;
  } catch {
    return null;
  }
}

const idRandom = new Uint8Array(16);
const idClock = { msecs: -Infinity, seq: 0 };

/**
 * A UUIDv7 as uuid's v7() makes it (time-ordered; monotonic among the ids made here: the same
 * millisecond counts its sequence up), with its random bytes from the pool above instead of one
 * CSPRNG call per id: a bulk create makes thousands a second.
 */
export function newTimeOrderedId(): string {
  if (poolOffset + 16 > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  idRandom.set(pool.subarray(poolOffset, poolOffset + 16));
  pool.fill(0, poolOffset, poolOffset + 16);
  poolOffset += 16;
  const now = Date.now();
  if (now > idClock.msecs) {
    idClock.msecs = now;
    idClock.seq = ((idRandom[6] & 0x7f) << 24) | (idRandom[7] << 16) | (idRandom[8] << 8) | idRandom[9];
  } else if ((idClock.seq = (idClock.seq + 1) | 0) === 0) idClock.msecs++;
  return uuidv7({ random: idRandom, msecs: idClock.msecs, seq: idClock.seq });
}

/** The at-rest form of a high-entropy secret (token, code, client secret, session id). */
export function sha256(text: string): string {
  // One-shot hashing (node ≥ 20.12; engines requires 20.18): half the cost of createHash.
  return hash('sha256', text, 'base64url');
}

export function hmacSha256(key: string | Buffer, text: string): string {
  return createHmac('sha256', key).update(text).digest('base64url');
}

/** Constant-time string comparison (length differences leak only the length). */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  if (x.length !== y.length) {
    timingSafeEqual(x, x);
    return false;
  }
  return timingSafeEqual(x, y);
}

/** OWASP's argon2id parameters (m = 19 MiB, t = 2, p = 1). */
const ARGON2 = { algorithm: 2 as const, memoryCost: 19456, timeCost: 2, parallelism: 1 };

export function hashPassword(password: string): Promise<string> {
  return argon2Hash(password, ARGON2);
}

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await argon2Verify(stored, password);
  } catch {
    return false;
  }
}

/** A stored hash to verify against when the user does not exist, so timing does not reveal it. */
let decoy: Promise<string> | null = null;
export function decoyPasswordHash(): Promise<string> {
  return (decoy ??= hashPassword(randomSecret()));
}
