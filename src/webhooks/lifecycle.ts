import type { AppContext } from '../contract/context.js';
import { purgeWebhookHistory } from './store/webhooks.js';

/** Removes finished deliveries and attempts older than the events' retention (the sweeper). */
export function sweepWebhookHistory(ctx: AppContext, now = Date.now()): Promise<number> {
  return purgeWebhookHistory(ctx.store, now - ctx.config.events.retention * 1000);
}
