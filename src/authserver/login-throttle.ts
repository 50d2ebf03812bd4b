import type { FastifyBaseLogger } from 'fastify';
import { withRedis } from '../contract/redis-state.js';
import type { AppContext } from '../contract/context.js';
import { OAuthError, tooManyRequests } from '../platform/http/errors.js';
import { audit } from './audit.js';
import { verifyUserCredentials, type User } from './model/users.js';
import { write } from '../platform/store/write-path.js';
import { clearCounter, incrementCounter, purgeCounters, readCounter } from './store/login-counters.js';

// Sign-in with a user name and password, throttled (the password grant, the login form and the
// admin console all call signIn): failures are counted per user name and per IP in a fixed
// window; past `auth.loginThrottle.max` the caller waits. Counters live in Redis when configured, else in the
// database, so every instance sees the same count.

export interface ThrottleKeys {
  username: string;
  ip: string;
}

const PREFIX = 'login:';

function counterKeys(keys: ThrottleKeys): string[] {
  return [`${PREFIX}user:${keys.username.toLowerCase()}`, `${PREFIX}ip:${keys.ip}`];
}

/** Seconds to wait before another attempt, or 0 when an attempt is allowed now. */
async function loginRetryAfter(ctx: AppContext, keys: ThrottleKeys): Promise<number> {
  const { max, window } = ctx.config.auth.loginThrottle;
  const now = Date.now();
  let wait = 0;
  for (const key of counterKeys(keys)) {
    const waitFor = await withRedis(
      ctx,
      async (redis) => {
        const [count, ttl] = await Promise.all([redis.get(key), redis.pttl(key)]);
        return Number(count ?? 0) >= max && ttl > 0 ? Math.ceil(ttl / 1000) : 0;
      },
      async () => {
        const row = await readCounter(ctx.store, key);
        const endsAt = row ? row.windowStart + window * 1000 : 0;
        return row && endsAt > now && row.count >= max ? Math.ceil((endsAt - now) / 1000) : 0;
      },
    );
    wait = Math.max(wait, waitFor);
  }
  return wait;
}

/** Counts one failed attempt against the user name and the IP. */
async function recordLoginFailure(ctx: AppContext, keys: ThrottleKeys): Promise<void> {
  const { window } = ctx.config.auth.loginThrottle;
  const now = Date.now();
  for (const key of counterKeys(keys))
    await withRedis(
      ctx,
      async (redis) => {
        if ((await redis.incr(key)) === 1) await redis.pexpire(key, window * 1000);
      },
      () => incrementCounter(ctx.store, key, now, now - window * 1000),
    );
}

/** A successful login clears the user name's count (not the IP's: one account proves nothing about the others). */
async function clearLoginFailures(ctx: AppContext, keys: ThrottleKeys): Promise<void> {
  const [userKey] = counterKeys(keys);
  await withRedis(
    ctx,
    async (redis) => void (await redis.del(userKey)),
    () => clearCounter(ctx.store, userKey),
  );
}

export type SignIn = { user: User } | { retryAfter: number } | { failed: true };

/** Checks a user name and password under the throttle, and writes the audit line of the outcome. */
export async function signIn(
  ctx: AppContext,
  log: FastifyBaseLogger,
  attempt: ThrottleKeys & { password: string; clientId: string | null; via: 'password grant' | 'login form' | 'admin console' | 'account page' },
): Promise<SignIn> {
  const keys = { username: attempt.username, ip: attempt.ip };
  const fields = { client_id: attempt.clientId, username: attempt.username, ip: attempt.ip };
  const wait = await loginRetryAfter(ctx, keys);
  if (wait > 0) {
    audit(ctx, log, 'login.throttled', { ...fields, reason: attempt.via });
    return { retryAfter: wait };
  }
  const user = await verifyUserCredentials(ctx, attempt.username, attempt.password);
  if (!user) {
    await recordLoginFailure(ctx, keys);
    // An event of its own (admin side): auditors follow failed sign-ins in the feed and webhooks.
    await write(ctx.store, async (tx) =>
      tx.emit({ type: 'login.failed', data: JSON.stringify({ username: attempt.username, ip: attempt.ip, client_id: attempt.clientId, via: attempt.via }) }),
    );
    audit(ctx, log, 'login.failed', { ...fields, reason: `${attempt.via}: bad credentials` });
    return { failed: true };
  }
  await clearLoginFailures(ctx, keys);
  return { user };
}

/** The 429 of a throttled sign-in (RFC 6749 error shape), with Retry-After. */
export function throttled(retryAfter: number): OAuthError {
  const err = tooManyRequests(retryAfter);
  return new OAuthError('too_many_requests', 'Too many failed login attempts; retry later', 429, { username: 'too many failed attempts' }, err.headers);
}

/** Deletes the database windows that closed before `before`. */
export function purgeLoginWindows(ctx: AppContext, before: number): Promise<number> {
  return purgeCounters(ctx.store, PREFIX, before - ctx.config.auth.loginThrottle.window * 1000);
}
