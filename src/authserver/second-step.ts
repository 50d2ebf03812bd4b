import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../contract/context.js';
import { InvalidInput, NotApplicable, asSentence } from '../contract/errors.js';
import { constantTimeEqual } from '../platform/crypto/secrets.js';
import { audit } from './audit.js';
import { browserBinding } from './authorize/csrf.js';
import { checkSecondFactor } from './login-throttle.js';
import { confirmTotp, hasSecondFactor, mustHaveSecondFactor, openTotpEnrolment, startTotpEnrolment, type TotpEnrolment } from './model/factors.js';
import { findUserById, userSubject, type User } from './model/users.js';
import type { Params } from './params.js';
import { issuedBinding, type CookieScope } from './sessions.js';

// The second step of a browser sign-in (login page, account page, admin console): after a right
// password, a user with a second factor types a code (TOTP or recovery code); a user the policy
// (`auth.mfa`) requires to have one and who has none sets one up. No session exists until the
// step is done. Between the two steps the form carries the half-done sign-in, `pending`: the user
// id and an expiry, MACed with the server's key over this browser's binding cookie and the cookie
// scope — nothing a client could make, and worthless in another browser or after 5 minutes.

const PENDING_SECONDS = 5 * 60;

export type SecondStep = 'second-factor' | 'enrol';

/** What the user must do after their password: nothing more (null), type a code, or set up an authenticator. */
export async function secondStepFor(ctx: AppContext, user: User): Promise<SecondStep | null> {
  if (await hasSecondFactor(ctx, user)) return 'second-factor';
  return mustHaveSecondFactor(ctx, user) ? 'enrol' : null;
}

const pendingMessage = (scope: CookieScope, binding: string, userId: string, expires: number) => `second-step:${scope.kind}:${binding}:${userId}:${expires}`;

/** The half-done sign-in of `user`, bound to this browser (its binding cookie, set if missing). */
export async function pendingSignIn(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, scope: CookieScope, user: User, now = Date.now()): Promise<string> {
  const binding = await browserBinding(ctx, request, reply, scope);
  const expires = now + PENDING_SECONDS * 1000;
  return `${user.id}.${expires}.${await ctx.keys.sign(pendingMessage(scope, binding, user.id, expires))}`;
}

/** The user of a half-done sign-in made for this browser and still good, else null. */
export async function pendingUser(ctx: AppContext, request: FastifyRequest, scope: CookieScope, value: string | undefined, now = Date.now()): Promise<User | null> {
  const m = value ? /^([A-Za-z0-9-]{1,64})\.(\d{1,16})\.([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{43})$/.exec(value) : null;
  if (!m || Number(m[2]) <= now) return null;
  const binding = await issuedBinding(ctx, request, scope);
  if (!binding) return null;
  const expected = await ctx.keys.macWith(m[3], pendingMessage(scope, binding, m[1], Number(m[2])));
  if (expected === null || !constantTimeEqual(m[4], expected)) return null;
  return findUserById(ctx, m[1]);
}

/** What a second-step page shows: the step, the carried sign-in, and for an enrolment the secret. */
export interface SecondStepState {
  step: SecondStep;
  user: User;
  pending: string;
  enrolment?: TotpEnrolment;
}

/** The page state right after the password (a fresh enrolment when one is due). */
export async function beginSecondStep(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, scope: CookieScope, user: User, step: SecondStep): Promise<SecondStepState> {
  const pending = await pendingSignIn(ctx, request, reply, scope, user);
  return { step, user, pending, enrolment: step === 'enrol' ? startTotpEnrolment(ctx, user) : undefined };
}

export type SecondStepOutcome =
  /** The carried sign-in is missing, forged, of another browser or expired: start again. */
  | { expired: true }
  /** Show the step again with this error (and status; 429 with Retry-After). */
  | { again: SecondStepState; status: number; error: string; retryAfter?: number }
  /** Both steps done: start the session. `recoveryCodes`: made by an enrolment, to show once. */
  | { user: User; recoveryCodes: string[] };

/**
 * Runs a posted second step (`step`, `pending`, `otp`, for an enrolment `enrolment`): the code is
 * checked under the login throttle (a failure is `login.failed`); an enrolment is confirmed with a
 * code of the new authenticator.
 */
export async function completeSecondStep(
  ctx: AppContext,
  request: FastifyRequest,
  log: FastifyBaseLogger,
  scope: CookieScope,
  form: Params,
  via: 'login form' | 'account page' | 'admin console',
  clientId: string | null,
): Promise<SecondStepOutcome> {
  const pending = form.get('pending');
  const user = await pendingUser(ctx, request, scope, pending);
  if (!user || !pending) return { expired: true };
  const step = await secondStepFor(ctx, user);
  const otp = (form.get('otp') ?? '').trim();
  if (step === 'second-factor') {
    const again = { step, user, pending } as const;
    if (!otp) return { again, status: 400, error: 'Enter the code from your authenticator app, or a recovery code.' };
    const outcome = await checkSecondFactor(ctx, log, { user, otp, ip: request.ip, clientId, via });
    if ('retryAfter' in outcome) return { again, status: 429, error: 'Too many failed attempts. Try again later.', retryAfter: outcome.retryAfter };
    if ('failed' in outcome && outcome.locked)
      return { again, status: 401, error: 'Too many wrong codes from your authenticator app in a row: sign in with a recovery code (or a passkey). The app works again after that.' };
    if ('failed' in outcome) return { again, status: 401, error: 'That code is not correct, or it was used already. Try the next code.' };
    return { user, recoveryCodes: [] };
  }
  if (step === null) return { user, recoveryCodes: [] };
  const enrolment = openTotpEnrolment(ctx, user, form.get('enrolment')) ?? startTotpEnrolment(ctx, user);
  try {
    const { recoveryCodes } = await confirmTotp(ctx, user, form.get('enrolment'), otp, userSubject(user.id));
    audit(ctx, log, 'user.factor_added', { client_id: clientId, subject: userSubject(user.id), reason: `${via}: authenticator app, at sign-in` });
    return { user, recoveryCodes };
  } catch (e) {
    if (!(e instanceof InvalidInput) && !(e instanceof NotApplicable)) throw e;
    return { again: { step, user, pending, enrolment }, status: 400, error: asSentence(e.message) };
  }
}
