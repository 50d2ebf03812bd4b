import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';

// Removes rows nobody can use any more (expired nonces, codes, tokens, sessions, counters, old
// idempotency keys and finished jobs). Every instance runs it; the deletes are idempotent.

const DAY = 86_400_000;
export const SWEEP_INTERVAL_MS = 60_000;

export async function sweepExpired(ctx: AppContext, now = Date.now()): Promise<Record<string, number>> {
  const db = ctx.store.db;
  const counted = async (name: string, q: { executeTakeFirst(): Promise<{ numDeletedRows: bigint }> }) =>
    [name, Number((await q.executeTakeFirst()).numDeletedRows)] as const;
  const throttleWindow = ctx.config.auth.loginThrottle.window * 1000;
  const results = [
    await counted('nonces', db.deleteFrom('nonces').where('expires_at', '<', now)),
    await counted('counters', db.deleteFrom('counters').where('window_start', '<', now - Math.max(throttleWindow, ctx.config.api.rateLimit ? ctx.config.api.rateLimit.window * 1000 : 0) * 2)),
    await counted('sessions', db.deleteFrom('sessions').where('expires_at', '<', now)),
    // Codes are kept a day past expiry so a late replay is still recognised and revokes its grant.
    await counted('authorization_codes', db.deleteFrom('authorization_codes').where('expires_at', '<', now - DAY)),
    await counted('access_tokens', db.deleteFrom('access_tokens').where('expires_at', '<', now - DAY)),
    // Used refresh tokens stay until expiry: a reuse after rotation must still be detected.
    await counted('refresh_tokens', db.deleteFrom('refresh_tokens').where('expires_at', '<', now - DAY)),
    await counted('idempotency_keys', db.deleteFrom('idempotency_keys').where('created_at', '<', now - DAY)),
    await counted('jobs', db.deleteFrom('jobs').where('status', '=', 'done').where('updated_at', '<', now - 7 * DAY)),
  ];
  return Object.fromEntries(results);
}

export function startSweeper(ctx: AppContext, log: FastifyBaseLogger): () => void {
  const timer = setInterval(() => {
    sweepExpired(ctx).then(
      (removed) => {
        const total = Object.values(removed).reduce((a, b) => a + b, 0);
        if (total) log.info({ event: 'sweep', removed }, 'removed expired rows');
      },
      (err) => log.warn({ err }, 'sweep failed'),
    );
  }, SWEEP_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
