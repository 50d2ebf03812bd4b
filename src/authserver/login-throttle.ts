import type { FastifyBaseLogger } from 'fastify';
import { withRedis } from '../contract/redis-state.js';
import type { AppContext } from '../contract/context.js';
import { TooManyRequests } from '../platform/http/errors.js';
import { audit } from './audit.js';
import { userSubject, verifyUserCredentials, type User } from './model/users.js';
import { verifySecondFactor } from './model/factors.js';
import { mustVerifyFirst } from './model/lifecycle.js';
import { write } from '../platform/store/write-path.js';
import { giveBackAttempt, purgeCounters, takeAttempt } from './store/login-counters.js';

// Sign-in with a user name and password, throttled (the password grant, the login form, the
// account page and the admin console all call signIn). Every attempt is counted BEFORE its
// password is checked, atomically (Redis INCR, else one upsert … returning on the database), per
// user name and per IP in a fixed window: an attempt whose count passes `auth.loginThrottle.max`
// is refused unchecked, so a burst of any size on any number of instances checks at most `max`
// passwords at once and leaves at most `max` failures per window. A success gives back its own
// attempt, never the others' (nothing resets a count: a legitimate sign-in during an attack must
// not hand the attacker a fresh window). A second factor is checked under the same windows
// (checkSecondFactor). Counters live in Redis when it is up, else in the
// database, so every instance sees the same count.

export interface ThrottleKeys {
  username: string;
  ip: string;
}

const PREFIX = 'login:';

/** An attempt counted in a window: whether it is allowed, and how to give it back. */
interface Taken {
  key: string;
  allowed: boolean;
  retryAfter: number;
  giveBack(): Promise<void>;
}

// INCR and its expiry in one step (a counter left without expiry would lock a name for good).
const TAKE = `local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {n, ttl}`;
// A give-back never takes a count below zero nor re-creates an expired window.
const GIVE_BACK = `if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then return redis.call('DECR', KEYS[1]) end
return 0`;

async function takeAttemptOn(ctx: AppContext, key: string, max = ctx.config.auth.loginThrottle.max, windowMs = ctx.config.auth.loginThrottle.window * 1000): Promise<Taken> {
  return withRedis(
    ctx,
    async (redis) => {
      const [n, ttl] = (await redis.eval(TAKE, 1, key, windowMs)) as [number, number];
      return {
        key,
        allowed: n <= max,
        retryAfter: Math.max(1, Math.ceil(ttl / 1000)),
        giveBack: () => withRedis(ctx, async (r) => void (await r.eval(GIVE_BACK, 1, key)), () => Promise.resolve()),
      };
    },
    async () => {
      const now = Date.now();
      const row = await takeAttempt(ctx.store, key, now, now - windowMs);
      return {
        key,
        allowed: row.count <= max,
        retryAfter: Math.max(1, Math.ceil((row.windowStart + windowMs - now) / 1000)),
        giveBack: () => giveBackAttempt(ctx.store, key, row.windowStart),
      };
    },
  );
}

/**
 * Counts the attempt against the IP, then the user name; refused by either, it waits (and gives
 * back what it took from the IP: no password was checked). The IP goes first so that a spray over
 * many names from one address stops there without touching the names' counts.
 */
async function takeAttempts(ctx: AppContext, keys: ThrottleKeys): Promise<{ retryAfter: number } | { taken: Taken[] }> {
  const ip = await takeAttemptOn(ctx, `${PREFIX}ip:${keys.ip}`);
  if (!ip.allowed) return { retryAfter: ip.retryAfter };
  const user = await takeAttemptOn(ctx, `${PREFIX}user:${keys.username.toLowerCase()}`);
  if (!user.allowed) {
    await ip.giveBack();
    return { retryAfter: user.retryAfter };
  }
  return { taken: [ip, user] };
}

/** `unverified`: the password was right, but the account made by sign-up waits for its address to be verified (docs/users.md). */
export type SignIn = { user: User } | { retryAfter: number } | { failed: true } | { unverified: User };

type Via = 'password grant' | 'login form' | 'admin console' | 'account page';

/** A failed check: an event of its own (admin side, auditors follow failed sign-ins in the feed and webhooks) and the audit line. */
export async function recordFailure(ctx: AppContext, log: FastifyBaseLogger, attempt: ThrottleKeys & { clientId: string | null; via: Via }, reason: 'bad credentials' | 'second factor' | 'passkey', subject?: string) {
  await write(ctx.store, async (tx) =>
    tx.emit({ type: 'login.failed', data: JSON.stringify({ username: attempt.username, ip: attempt.ip, client_id: attempt.clientId, via: attempt.via, reason }) }),
  );
  audit(ctx, log, 'login.failed', { client_id: attempt.clientId, username: attempt.username, ip: attempt.ip, ...(subject ? { subject } : {}), reason: `${attempt.via}: ${reason}` });
}

/** Checks a user name and password under the throttle, and writes the audit line of the outcome. */
export async function signIn(
  ctx: AppContext,
  log: FastifyBaseLogger,
  attempt: ThrottleKeys & { password: string; clientId: string | null; via: Via },
): Promise<SignIn> {
  const keys = { username: attempt.username, ip: attempt.ip };
  const attempts = await takeAttempts(ctx, keys);
  if ('retryAfter' in attempts) {
    audit(ctx, log, 'login.throttled', { client_id: attempt.clientId, username: attempt.username, ip: attempt.ip, reason: attempt.via });
    return { retryAfter: attempts.retryAfter };
  }
  const user = await verifyUserCredentials(ctx, attempt.username, attempt.password);
  if (!user) {
    await recordFailure(ctx, log, attempt, 'bad credentials');
    return { failed: true };
  }
  for (const taken of attempts.taken) await taken.giveBack();
  if (await mustVerifyFirst(ctx, user)) {
    audit(ctx, log, 'login.unverified', { client_id: attempt.clientId, subject: userSubject(user.id), ip: attempt.ip, reason: attempt.via });
    return { unverified: user };
  }
  return { user };
}

/**
 * Checks the second factor of a user whose password was right, under the same throttle: the
 * attempt is counted (per user name and per IP) before the code is checked, so guessing codes
 * spends the same window as guessing passwords; a success gives its attempt back.
 */
export async function checkSecondFactor(
  ctx: AppContext,
  log: FastifyBaseLogger,
  attempt: { user: User; otp: string; ip: string; clientId: string | null; via: Via },
): Promise<{ ok: true } | { retryAfter: number } | { failed: true; locked: boolean }> {
  const keys = { username: attempt.user.username, ip: attempt.ip };
  const attempts = await takeAttempts(ctx, keys);
  if ('retryAfter' in attempts) {
    audit(ctx, log, 'login.throttled', { client_id: attempt.clientId, username: attempt.user.username, ip: attempt.ip, reason: `${attempt.via}: second factor` });
    return { retryAfter: attempts.retryAfter };
  }
  const outcome = await verifySecondFactor(ctx, attempt.user, attempt.otp);
  if (outcome === 'wrong' || outcome === 'locked') {
    await recordFailure(ctx, log, { ...keys, clientId: attempt.clientId, via: attempt.via }, 'second factor', userSubject(attempt.user.id));
    return { failed: true, locked: outcome === 'locked' };
  }
  for (const taken of attempts.taken) await taken.giveBack();
  return { ok: true };
}

/** The 429 of a throttled sign-in (RFC 6749 error shape), with Retry-After. */
export function throttled(retryAfter: number): TooManyRequests {
  return new TooManyRequests(retryAfter, 'Too many failed login attempts; retry later', { username: 'too many failed attempts' });
}

/** The windows of the public forms (sign-up, reset requests): an hour each. */
const FORMS_PREFIX = 'forms:';
const FORMS_WINDOW_MS = 3_600_000;

/**
 * Counts one use of a public form that mails (sign-up, "forgot your password") against `key`
 * (`signup:ip:…`, `reset:ip:…`): at most `max` an hour, counted like sign-ins (Redis, else the
 * database: every instance sees the same count). Refused: the seconds to wait. Allowed: `giveBack`
 * takes the use back (a client registration refused for its metadata made nothing).
 */
export async function formAttempt(ctx: AppContext, key: string, max: number): Promise<{ allowed: true; giveBack(): Promise<void> } | { retryAfter: number }> {
  const taken = await takeAttemptOn(ctx, `${FORMS_PREFIX}${key}`, max, FORMS_WINDOW_MS);
  return taken.allowed ? { allowed: true, giveBack: () => taken.giveBack() } : { retryAfter: taken.retryAfter };
}

/** The window of wrong user codes at {auth_url}/device, per IP: 10 in 10 minutes. */
const DEVICE_PREFIX = 'device:';
const DEVICE_WINDOW_MS = 600_000;
export const WRONG_USER_CODES = 10;

/**
 * Counts a user code typed at {auth_url}/device from `ip` before it is looked up (as sign-ins
 * are counted before the password is checked); a code that exists gives its attempt back, so only
 * wrong codes fill the window. Refused: the seconds to wait, and nothing was looked up.
 */
export async function userCodeAttempt(ctx: AppContext, ip: string): Promise<{ retryAfter: number } | { giveBack(): Promise<void> }> {
  const taken = await takeAttemptOn(ctx, `${DEVICE_PREFIX}ip:${ip}`, WRONG_USER_CODES, DEVICE_WINDOW_MS);
  if (!taken.allowed) {
    await taken.giveBack();
    return { retryAfter: taken.retryAfter };
  }
  return { giveBack: taken.giveBack };
}

/** The windows of what public clients make gatehouse store or fetch, per IP and kind: 30 in 10 minutes. */
const PUBLIC_PREFIX = 'public:';
const PUBLIC_WINDOW_MS = 600_000;
export const PUBLIC_CLIENT_REQUESTS = 30;
export const PUBLIC_CLIENT_WINDOW_MINUTES = PUBLIC_WINDOW_MS / 60_000;

/**
 * Counts one request of a public client (no secret: anyone can be one) from `ip` that makes
 * gatehouse store (`par`: a pushed request, `device`: a device code) or fetch (`metadata`: a
 * client ID metadata document not cached yet): at most PUBLIC_CLIENT_REQUESTS in 10 minutes, on
 * every instance together (Redis, else the database). Refused: the seconds to wait (the refused
 * attempt is not counted). Allowed: `giveBack` takes it back (the request was refused and made nothing).
 */
export async function publicClientAttempt(ctx: AppContext, kind: 'par' | 'device' | 'metadata', ip: string): Promise<{ retryAfter: number } | { giveBack(): Promise<void> }> {
  const taken = await takeAttemptOn(ctx, `${PUBLIC_PREFIX}${kind}:ip:${ip}`, PUBLIC_CLIENT_REQUESTS, PUBLIC_WINDOW_MS);
  if (!taken.allowed) {
    await taken.giveBack();
    return { retryAfter: taken.retryAfter };
  }
  return { giveBack: taken.giveBack };
}

/** Deletes the database windows that closed before `before`. */
export async function purgeLoginWindows(ctx: AppContext, before: number): Promise<number> {
  return (await purgeCounters(ctx.store, PREFIX, before - ctx.config.auth.loginThrottle.window * 1000)) + (await purgeCounters(ctx.store, FORMS_PREFIX, before - FORMS_WINDOW_MS)) + (await purgeCounters(ctx.store, DEVICE_PREFIX, before - DEVICE_WINDOW_MS)) + (await purgeCounters(ctx.store, PUBLIC_PREFIX, before - PUBLIC_WINDOW_MS));
}
