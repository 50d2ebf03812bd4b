import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';
import { purgeExpired } from '../oauth/tokens.js';

// The one periodic clean-up: the authorization server's ended tokens, grants, sessions and
// throttle windows (purgeExpired), and on the resource side expired MAC nonces, old idempotency
// keys and finished jobs. Every instance runs it, whatever its role; the deletes are idempotent.

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
    Promise.all([purgeExpired(ctx), sweepExpired(ctx)]).then(([, removed]) => removed).then(
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
