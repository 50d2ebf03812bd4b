import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../contract/context.js';
import { sweepAuthorizationTables } from '../authserver/lifecycle.js';
import { sweepResourceTables } from '../api/lifecycle.js';
import { sweepEvents } from '../contract/event-bus.js';
import { sweepWebhookHistory } from '../webhooks/lifecycle.js';
import { sweepMail } from '../platform/mail/lifecycle.js';

// The one periodic clean-up. Each server's owners delete what can no longer matter in their own
// tables (authserver/lifecycle.ts, api/lifecycle.ts); this only runs them on a timer. Every
// instance runs it, whatever its role; the deletes are idempotent.

export const SWEEP_INTERVAL_MS = 60_000;

export async function sweepExpired(ctx: AppContext, now = Date.now()): Promise<Record<string, number>> {
  return {
    // Deleted accounts' records whose deletion stopped with its process (api/owned-records.ts).
    records_of_deleted_accounts: await ctx.ownedRecords.resumeDeletions(now),
    ...(await sweepAuthorizationTables(ctx, now)),
    ...(await sweepResourceTables(ctx.store, now)),
    events: await sweepEvents(ctx, now),
    webhook_history: await sweepWebhookHistory(ctx, now),
    mail: await sweepMail(ctx.store, now),
  };
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
