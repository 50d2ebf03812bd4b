import { sql } from 'kysely';
import { count, sqlOf, type On } from '../../platform/store/sql.js';

// Owner of the counters table: sign-in attempt windows when there is no Redis (login-throttle.ts).

/**
 * Counts one attempt in the key's fixed window (a new window when the current one began at or
 * before `staleBefore`) and answers the count with this attempt and the window's start. One
 * statement (upsert … returning), so concurrent attempts on any number of instances each see a
 * different count: no two of them can both be the last one allowed.
 */
export async function takeAttempt(on: On, key: string, now: number, staleBefore: number): Promise<{ count: number; windowStart: number }> {
  const row = await sqlOf(on)
    .insertInto('counters')
    .values({ key, count: 1, window_start: now })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        count: sql<number>`case when counters.window_start <= ${staleBefore} then 1 else counters.count + 1 end`,
        window_start: sql<number>`case when counters.window_start <= ${staleBefore} then ${now} else counters.window_start end`,
      }),
    )
    .returning(['count', 'window_start'])
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), windowStart: Number(row.window_start) };
}

/** Takes back one attempt from the window it was counted in (none when that window has ended since). */
export async function giveBackAttempt(on: On, key: string, windowStart: number): Promise<void> {
  await sqlOf(on)
    .updateTable('counters')
    .set({ count: sql<number>`counters.count - 1` })
    .where('key', '=', key)
    .where('window_start', '=', windowStart)
    .where('count', '>', 0)
    .execute();
}

/** Deletes the windows with this key prefix that began before `before`. */
export async function purgeCounters(on: On, prefix: string, before: number): Promise<number> {
  return count(await sqlOf(on).deleteFrom('counters').where('key', 'like', `${prefix}%`).where('window_start', '<', before).executeTakeFirst());
}
