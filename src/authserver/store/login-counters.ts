import { sql } from 'kysely';
import { count, sqlOf, type On } from '../../platform/store/sql.js';

// Owner of the counters table: failed-login windows when there is no Redis (login-throttle.ts).

export async function readCounter(on: On, key: string): Promise<{ count: number; windowStart: number } | null> {
  const row = await sqlOf(on).selectFrom('counters').selectAll().where('key', '=', key).executeTakeFirst();
  return row ? { count: Number(row.count), windowStart: Number(row.window_start) } : null;
}

/**
 * Counts one event in the key's fixed window, starting a new window when the current one began
 * at or before `windowStart`. One statement, so concurrent increments on several instances all count.
 */
export async function incrementCounter(on: On, key: string, now: number, windowStart: number): Promise<void> {
  await sqlOf(on)
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

export async function clearCounter(on: On, key: string): Promise<void> {
  await sqlOf(on).deleteFrom('counters').where('key', '=', key).execute();
}

/** Deletes the windows with this key prefix that began before `before`. */
export async function purgeCounters(on: On, prefix: string, before: number): Promise<number> {
  return count(await sqlOf(on).deleteFrom('counters').where('key', 'like', `${prefix}%`).where('window_start', '<', before).executeTakeFirst());
}
