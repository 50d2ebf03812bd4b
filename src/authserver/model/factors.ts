import { randomBytes } from 'node:crypto';
import { HOTP, Secret, TOTP } from 'otpauth';
import type { AppContext } from '../../contract/context.js';
import { InvalidInput, NotApplicable } from '../../contract/errors.js';
import { constantTimeEqual, newTimeOrderedId, sha256 } from '../../platform/crypto/secrets.js';
import { write, type WriteTx } from '../../platform/store/write-path.js';
import {
  countUnusedRecoveryCodes,
  deleteFactor,
  deleteFactorsOfUser,
  insertFactor,
  listFactorsOfUser,
  replaceRecoveryCodes,
  useRecoveryCode,
  useTotpStep,
  countTotpFailure,
  type FactorKind,
  type FactorRecord,
} from '../store/factors.js';
import { userEvent, type User } from './users.js';
import { findUserRecordByUsername } from '../store/users.js';
import { deleteSessionsOfUser } from '../store/sessions.js';

// Second factors (docs/oauth.md, Second factors): TOTP authenticators (RFC 6238: SHA-1, 6 digits,
// 30 s, one step of drift each way, each code once), passkeys (model/passkeys.ts), and 10 recovery
// codes made when the first factor is added, each usable once. The policy `auth.mfa` says who must
// have one. A TOTP secret is stored sealed under the deployment's secret key, the factor's id as
// the context; until it is confirmed it exists only in the enrolment form, sealed too.

export const TOTP_PERIOD = 30;
export const TOTP_DIGITS = 6;
export const RECOVERY_CODE_COUNT = 10;
/** How long an enrolment form (its sealed secret) stays good. */
const ENROLMENT_SECONDS = 30 * 60;
const ISSUER = 'gatehouse';

// 32 letters and digits without 0/O, 1/I: 5 bits each, 16 of them (80 bits) per code.
const RECOVERY_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

export type SecondFactor = Pick<FactorRecord, 'id' | 'kind' | 'label' | 'createdAt' | 'lastUsedAt'>;

/** Whether the deployment's policy (`auth.mfa`) requires this user to have a second factor. */
export function mustHaveSecondFactor(ctx: AppContext, user: User): boolean {
  const policy = ctx.config.auth.mfa;
  return policy === 'all' || (policy === 'admins' && user.admin);
}

export async function listSecondFactors(ctx: AppContext, user: User): Promise<SecondFactor[]> {
  return (await listFactorsOfUser(ctx.store, user.id)).map(({ id, kind, label, createdAt, lastUsedAt }) => ({ id, kind, label, createdAt, lastUsedAt }));
}

export async function hasSecondFactor(ctx: AppContext, user: User): Promise<boolean> {
  return (await listFactorsOfUser(ctx.store, user.id)).length > 0;
}

export function recoveryCodesLeft(ctx: AppContext, user: User): Promise<number> {
  return countUnusedRecoveryCodes(ctx.store, user.id);
}

/** A TOTP enrolment in progress: the secret to show, its `otpauth://` URI, and the sealed form field that carries it. */
export interface TotpEnrolment {
  secret: string;
  uri: string;
  sealed: string;
}

const enrolmentContext = (user: User) => `totp-enrolment:${user.id}`;
/** What a stored TOTP secret is sealed to: its row and its user (moved to another, it does not open). */
export const totpSecretContext = (factorId: string, userId: string) => `user_factors.secret:${factorId}:${userId}`;

function otpauthUri(secret: string, user: User): string {
  return new TOTP({ issuer: ISSUER, label: user.username, algorithm: 'SHA1', digits: TOTP_DIGITS, period: TOTP_PERIOD, secret: Secret.fromBase32(secret) }).toString();
}

/** A new secret for this user (20 random bytes, RFC 4226's recommendation), nothing stored yet. */
export function startTotpEnrolment(ctx: AppContext, user: User, now = Date.now()): TotpEnrolment {
  const secret = new Secret({ size: 20 }).base32;
  const sealed = ctx.sealer.seal(JSON.stringify({ secret, expires: now + ENROLMENT_SECONDS * 1000 }), enrolmentContext(user));
  return { secret, uri: otpauthUri(secret, user), sealed };
}

/** The enrolment a form carried back, when it was made for this user and is still good; else null. */
export function openTotpEnrolment(ctx: AppContext, user: User, sealed: string | undefined, now = Date.now()): TotpEnrolment | null {
  if (!sealed || sealed.length > 1000) return null;
  try {
    const { secret, expires } = JSON.parse(ctx.sealer.open(sealed, enrolmentContext(user))) as { secret: unknown; expires: unknown };
    if (typeof secret !== 'string' || typeof expires !== 'number' || expires <= now) return null;
    return { secret, uri: otpauthUri(secret, user), sealed };
  } catch {
    return null;
  }
}

/** The TOTP time step of `now` (ms). */
export const totpStep = (now: number) => Math.floor(now / 1000 / TOTP_PERIOD);

/** The step within one of `now`'s whose code this is, or null (every candidate compared in constant time). */
export function matchingTotpStep(secret: string, code: string, now: number): number | null {
  const key = Secret.fromBase32(secret);
  const current = totpStep(now);
  let found: number | null = null;
  for (const step of [current - 1, current, current + 1]) {
    const expected = HOTP.generate({ secret: key, algorithm: 'SHA1', digits: TOTP_DIGITS, counter: step });
    if (constantTimeEqual(expected, code) && found === null) found = step;
  }
  return found;
}

const normalizedOtp = (otp: string) => otp.replace(/[\s-]/g, '').toUpperCase();
const isTotpCode = (code: string) => /^\d{6}$/.test(code);

/**
 * Confirms an enrolment with a code of the app: the authenticator is stored (its secret sealed,
 * the code's step used: it cannot sign in again) and, when it is the user's first factor, 10
 * recovery codes are made; they are answered here, once, and stored only hashed.
 */
export async function confirmTotp(ctx: AppContext, user: User, sealed: string | undefined, otp: string | undefined, actor: string | null, now = Date.now()): Promise<{ factor: SecondFactor; recoveryCodes: string[] }> {
  const enrolment = openTotpEnrolment(ctx, user, sealed, now);
  if (!enrolment) throw new InvalidInput('this set-up has expired; start again with the new secret', { otp: 'the set-up expired' });
  const code = normalizedOtp(otp ?? '');
  const step = isTotpCode(code) ? matchingTotpStep(enrolment.secret, code, now) : null;
  if (step === null) throw new InvalidInput('the code is not correct: enter the 6 digits the app shows now', { otp: 'not the current code' });
  const id = newTimeOrderedId();
  const factor: FactorRecord = {
    id,
    userId: user.id,
    kind: 'totp',
    label: 'Authenticator app',
    secret: await ctx.sealer.sealForStorage(enrolment.secret, totpSecretContext(id, user.id)),
    lastStep: step,
    credentialId: null,
    publicKey: null,
    counter: null,
    transports: [],
    createdAt: now,
    lastUsedAt: null,
    failures: 0,
  };
  const already = () => new NotApplicable('an authenticator app is set up already: remove it first', 'otp');
  try {
    return await write(ctx.store, async (tx) => {
      const existing = await listFactorsOfUser(tx, user.id);
      if (existing.some((f) => f.kind === 'totp')) throw already();
      await insertFactor(tx, factor);
      const recoveryCodes = existing.length === 0 ? await newRecoveryCodes(tx, user, now) : [];
      userEvent(tx, 'user.updated', user, actor);
      return { factor: { id, kind: 'totp' as FactorKind, label: factor.label, createdAt: now, lastUsedAt: null }, recoveryCodes };
    });
  } catch (e) {
    // Two set-ups racing: the unique index (one authenticator app per user) let one in.
    if (!(e instanceof NotApplicable) && (await listFactorsOfUser(ctx.store, user.id)).some((f) => f.kind === 'totp')) throw already();
    throw e;
  }
}

/** Stores a factor made elsewhere (a passkey) with the same event and first-factor recovery codes as a TOTP. */
export async function addFactor(ctx: AppContext, user: User, factor: FactorRecord, actor: string | null): Promise<string[]> {
  return write(ctx.store, async (tx) => {
    const first = (await listFactorsOfUser(tx, user.id)).length === 0;
    await insertFactor(tx, factor);
    const codes = first ? await newRecoveryCodes(tx, user, factor.createdAt) : [];
    userEvent(tx, 'user.updated', user, actor);
    return codes;
  });
}

function recoveryCode(): string {
  const bytes = randomBytes(16);
  const chars = [...bytes].map((b) => RECOVERY_ALPHABET[b % RECOVERY_ALPHABET.length]).join('');
  return chars.match(/.{4}/g)!.join('-');
}

async function newRecoveryCodes(tx: WriteTx, user: User, now: number): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, recoveryCode);
  await replaceRecoveryCodes(tx, user.id, codes.map((c) => sha256(normalizedOtp(c))), now);
  return codes;
}

/** New recovery codes for a user who has a factor (the old ones stop working). */
export async function renewRecoveryCodes(ctx: AppContext, user: User, actor: string | null, now = Date.now()): Promise<string[]> {
  return write(ctx.store, async (tx) => {
    if ((await listFactorsOfUser(tx, user.id)).length === 0) throw new NotApplicable('recovery codes go with a second factor: set one up first', 'action');
    const codes = await newRecoveryCodes(tx, user, now);
    userEvent(tx, 'user.updated', user, actor);
    return codes;
  });
}

/** Wrong authenticator codes in a row after which the app's codes are refused until a recovery code (or a passkey) is used (NIST SP 800-63B §5.2.2 caps them at 100). */
export const TOTP_FAILURE_LIMIT = 10;

/**
 * Checks a second factor typed at sign-in: 6 digits are a TOTP code of one of the user's
 * authenticators (a step not used before: the step is taken in one statement, so a code replayed or
 * raced is refused), anything else a recovery code (marked used in one statement). Wrong codes in a
 * row are counted: past TOTP_FAILURE_LIMIT the app's codes are `locked` until a recovery code is
 * used. What was used, or why not.
 */
export async function verifySecondFactor(ctx: AppContext, user: User, otp: string, now = Date.now()): Promise<'totp' | 'recovery code' | 'wrong' | 'locked'> {
  const code = normalizedOtp(otp);
  if (!code || code.length > 64) return 'wrong';
  if (isTotpCode(code)) {
    const apps = (await listFactorsOfUser(ctx.store, user.id)).filter((f) => f.kind === 'totp' && f.secret);
    if (apps.some((f) => f.failures >= TOTP_FAILURE_LIMIT)) return 'locked';
    for (const factor of apps) {
      const step = matchingTotpStep(ctx.sealer.open(factor.secret!, totpSecretContext(factor.id, factor.userId)), code, now);
      if (step === null) continue;
      const used = await write(ctx.store, async (tx) => {
        if (!(await useTotpStep(tx, factor.id, step, now))) return false;
        await countTotpFailure(tx, user.id, true);
        return true;
      });
      if (used) return 'totp';
    }
    if (apps.length) await write(ctx.store, (tx) => countTotpFailure(tx, user.id, false));
    return 'wrong';
  }
  const used = await write(ctx.store, async (tx) => {
    if (!(await useRecoveryCode(tx, user.id, sha256(code), now))) return false;
    await countTotpFailure(tx, user.id, true);
    return true;
  });
  return used ? 'recovery code' : 'wrong';
}

/** Removes one of the user's factors (the caller has checked the password); with the last one go the recovery codes. */
export async function removeSecondFactor(ctx: AppContext, user: User, factorId: string, actor: string | null): Promise<boolean> {
  return write(ctx.store, async (tx) => {
    if (!(await deleteFactor(tx, user.id, factorId))) return false;
    if ((await listFactorsOfUser(tx, user.id)).length === 0) {
      // Decided in the write, after the delete: two removals at once cannot both pass it.
      if (mustHaveSecondFactor(ctx, user)) throw new NotApplicable('this gatehouse requires a second factor: add another before removing this one', 'factor_id');
      await deleteFactorsOfUser(tx, user.id, { recoveryCodesOnly: true });
    }
    userEvent(tx, 'user.updated', user, actor);
    return true;
  });
}

/**
 * An operator's way back for a user who lost every factor and their recovery codes (CLI `user
 * reset-factors`, admin API): every factor and recovery code of the user goes, and every session
 * of the user ends, so that the next sign-in is a new one (under `auth.mfa`, it leads to setting
 * up a factor again). Null when there is no such user.
 */
export async function resetSecondFactors(ctx: AppContext, username: string, actor: string | null): Promise<{ user: User; factors: number } | null> {
  return write(ctx.store, async (tx) => {
    const user = await findUserRecordByUsername(tx, username);
    if (!user) return null;
    const factors = (await listFactorsOfUser(tx, user.id)).length;
    await deleteFactorsOfUser(tx, user.id);
    await deleteSessionsOfUser(tx, user.id);
    userEvent(tx, 'user.updated', user, actor);
    return { user, factors };
  });
}
