import { sql } from 'kysely';
import type { AppContext } from '../context.js';

// Failed-login throttling (password grant and the login form): failures are counted per user
// name and per IP in a fixed window; past `auth.loginThrottle.max` the caller waits. Counters
// live in Redis when configured, else in the database, so every instance sees the same count.

export interface ThrottleKeys {
  username: string;
  ip: string;
}

function counterKeys(keys: ThrottleKeys): string[] {
  return [`login:user:${keys.username.toLowerCase()}`, `login:ip:${keys.ip}`];
}

/** Seconds to wait before another attempt, or 0 when an attempt is allowed now. */
export async function loginRetryAfter(ctx: AppContext, keys: ThrottleKeys): Promise<number> {
  const { max, window } = ctx.config.auth.loginThrottle;
  const now = Date.now();
  let wait = 0;
  for (const key of counterKeys(keys)) {
    if (ctx.redis) {
      const [count, ttl] = await Promise.all([ctx.redis.get(key), ctx.redis.pttl(key)]);
      if (Number(count ?? 0) >= max && ttl > 0) wait = Math.max(wait, Math.ceil(ttl / 1000));
      continue;
    }
    const row = await ctx.store.db.selectFrom('counters').selectAll().where('key', '=', key).executeTakeFirst();
    if (!row) continue;
    const endsAt = Number(row.window_start) + window * 1000;
    if (endsAt > now && Number(row.count) >= max) wait = Math.max(wait, Math.ceil((endsAt - now) / 1000));
  }
  return wait;
}

/** Counts one failed attempt against the user name and the IP. */
export async function recordLoginFailure(ctx: AppContext, keys: ThrottleKeys): Promise<void> {
  const { window } = ctx.config.auth.loginThrottle;
  const now = Date.now();
  const windowStart = now - window * 1000;
  for (const key of counterKeys(keys)) {
    if (ctx.redis) {
      const count = await ctx.redis.incr(key);
      if (count === 1) await ctx.redis.pexpire(key, window * 1000);
      continue;
    }
    // One statement, so concurrent failures on several instances all count.
    await ctx.store.db
      .insertInto('counters')
      .values({ key, count: 1, window_start: now })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          count: sql<number>`case when counters.window_start <= ${windowStart} then 1 else counters.count + 1 end`,
          window_start: sql<number>`case when counters.window_start <= ${windowStart} then ${now} else counters.window_start end`,
        }),
      )
      .execute();
  }
}

/** A successful login clears the user name's count (not the IP's: one account proves nothing about the others). */
export async function clearLoginFailures(ctx: AppContext, keys: ThrottleKeys): Promise<void> {
  const [userKey] = counterKeys(keys);
  if (ctx.redis) await ctx.redis.del(userKey);
  else await ctx.store.db.deleteFrom('counters').where('key', '=', userKey).execute();
}
