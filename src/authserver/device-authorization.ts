import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../contract/context.js';
import { randomCode, randomSecret, sha256 } from '../platform/crypto/secrets.js';
import { write } from '../platform/store/write-path.js';
import { audit } from './audit.js';
import type { Client } from './model/client.js';
import type { SignedIn } from './sessions.js';
import { userSubject } from './model/users.js';
import { decideDeviceCode, findDeviceCodeByUserCode, insertDeviceCode, type DeviceCodeRow } from './store/device-codes.js';

// The device authorization grant (RFC 8628, docs/oauth.md#devices-and-clis): a device without a
// browser asks for a device code and a user code; the user types the user code at {auth_url}/device,
// signs in and decides on the consent page; the device polls the token endpoint
// (grants/device-code.ts). Both codes are stored as SHA-256 only; everything else is the row.

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** RFC 8628 §6.1: consonants only (no vowels: no words), capitals, 8 of them: 20^8 ≈ 2^34.6 codes. */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE_LENGTH = 8;
/** Seconds between polls unless the client was told to slow down (RFC 8628 §3.2 `interval`). */
export const POLL_INTERVAL = 5;
/** What slow_down adds to a request's interval (RFC 8628 §3.5). */
export const SLOW_DOWN_STEP = 5;

/** `XXXX-XXXX`, as shown to the user. */
export const showUserCode = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`;

/** A typed user code as stored: case and dashes (and spaces) aside; null when it cannot be one. */
export function normalizeUserCode(typed: string): string | null {
  const code = typed.replace(/[\s-]/g, '').toUpperCase();
  if (code.length !== USER_CODE_LENGTH) return null;
  for (const c of code) if (!USER_CODE_ALPHABET.includes(c)) return null;
  return code;
}

export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

export const devicePagePath = (ctx: AppContext) => `${ctx.config.basePath}${ctx.config.auth.path}/device`;

/** RFC 8628 §3.1–3.2: a new request of `client` for `scope` (already resolved for it). */
export async function startDeviceAuthorization(ctx: AppContext, client: Client, scope: string[], scopeGiven: boolean, resources: string | null = null): Promise<DeviceAuthorization> {
  const now = Date.now();
  const ttl = ctx.config.auth.deviceCodeTtl;
  const deviceCode = randomSecret(32);
  for (;;) {
    const userCode = randomCode(USER_CODE_ALPHABET, USER_CODE_LENGTH);
    const row: DeviceCodeRow = {
      hash: sha256(deviceCode),
      user_code_hash: sha256(userCode),
      client_id: client.id,
      scope: scope.join(' '),
      scope_given: scopeGiven ? 1 : 0,
      poll_interval: POLL_INTERVAL,
      last_polled_at: null,
      expires_at: now + ttl * 1000,
      created_at: now,
      decision: null,
      subject: null,
      granted_scope: null,
      grant_expires_at: null,
      auth_time: null,
      sid: null,
      amr: null,
      used_at: null,
      grant_id: null,
      resources,
    };
    // A user code still stored (even expired, until the sweeper) is not drawn again.
    if (!(await write(ctx.store, (tx) => insertDeviceCode(tx, row)))) continue;
    const verificationUri = `${ctx.config.authUrl}/device`;
    return {
      device_code: deviceCode,
      user_code: showUserCode(userCode),
      verification_uri: verificationUri,
      verification_uri_complete: `${verificationUri}?user_code=${showUserCode(userCode)}`,
      expires_in: ttl,
      interval: POLL_INTERVAL,
    };
  }
}

/** What the /device page found for a typed code. */
export type UserCodeLookup = { pending: DeviceCodeRow; userCode: string } | { ended: 'expired' | 'decided' } | { unknown: true };

export async function lookUpUserCode(ctx: AppContext, typed: string): Promise<UserCodeLookup> {
  const code = normalizeUserCode(typed);
  const row = code === null ? null : await findDeviceCodeByUserCode(ctx.store, sha256(code));
  if (!row || code === null) return { unknown: true };
  if (row.decision !== null) return { ended: 'decided' };
  if (Number(row.expires_at) <= Date.now()) return { ended: 'expired' };
  return { pending: row, userCode: code };
}

/** The user's decision: approved with a scope and the grant's end, or denied. False: decided already, or expired. */
export async function decideDeviceAuthorization(
  ctx: AppContext,
  log: FastifyBaseLogger,
  row: DeviceCodeRow,
  signedIn: SignedIn,
  decision: { approved: { scope: string[]; expiresAt: number } } | { denied: true },
): Promise<boolean> {
  const subject = userSubject(signedIn.user.id);
  const approved = 'approved' in decision ? decision.approved : null;
  const done = await write(ctx.store, (tx) =>
    decideDeviceCode(
      tx,
      row.hash,
      {
        decision: approved ? 'approved' : 'denied',
        subject,
        granted_scope: approved ? approved.scope.join(' ') : null,
        grant_expires_at: approved ? approved.expiresAt : null,
        auth_time: signedIn.authTime,
        sid: signedIn.sid,
        amr: JSON.stringify(signedIn.amr),
      },
      Date.now(),
    ),
  );
  if (done && !approved) audit(ctx, log, 'grant.denied', { client_id: row.client_id, subject, reason: 'the user denied access (device authorization)' });
  return done;
}
