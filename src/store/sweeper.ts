import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';

// Removes resource-side rows nobody can use any more: expired MAC nonces, old idempotency keys and
// finished jobs. (The authorization server purges its own tables: src/oauth/tokens.ts purgeExpired.)
// Every instance runs it; the deletes are idempotent.

const DAY = 86_400_000;
export const SWEEP_INTERVAL_MS = 60_000;

export async function sweepExpired(ctx: AppContext, now = Date.now()): Promise<Record<string, number>> {
  const db = ctx.store.db;
  const counted = async (name: string, q: { executeTakeFirst(): Promise<{ numDeletedRows: bigint }> }) =>
    [name, Number((await q.executeTakeFirst()).numDeletedRows)] as const;
  const results = [
    await counted('nonces', db.deleteFrom('nonces').where('expires_at', '<', now)),
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
