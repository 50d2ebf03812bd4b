import { randomBytes } from 'node:crypto';
import type { AppContext } from '../contract/context.js';
import { EVENT_TYPES } from '../contract/event-bus.js';
import { InvalidInput } from '../contract/errors.js';
import { write, type WriteTx } from '../platform/store/write-path.js';
import { latestEventId } from '../platform/store/outbox.js';
import { webhookUrlProblem } from './address.js';
import { deleteWebhookRow, findWebhookRow, insertWebhook, listAttemptRows, listWebhookRows, pendingDeliveries, updateWebhookRow, type WebhookRow } from './store/webhooks.js';
import { newTimeOrderedId } from '../platform/crypto/secrets.js';

// Webhooks (docs/events.md#webhooks): the operator's subscriptions of an https URL to event types and
// collections. The CLI (`gatehouse webhook`), the admin API and the console call these functions.

export interface Webhook {
  id: string;
  url: string;
  /** Event types delivered ([]: all). */
  events: string[];
  /** Collections whose events are delivered ([]: all, and the events without a collection). */
  collections: string[];
  createdAt: number;
  updatedAt: number;
}

export interface WebhookInput {
  url?: unknown;
  events?: unknown;
  collections?: unknown;
}

function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    collections: JSON.parse(row.collections) as string[],
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** What a webhook looks like to operators (CLI, admin API): never its secret. */
export function describeWebhook(w: Webhook): Record<string, unknown> {
  return { id: w.id, url: w.url, events: w.events, collections: w.collections, created_at: new Date(w.createdAt).toISOString(), updated_at: new Date(w.updatedAt).toISOString() };
}

function checked(ctx: AppContext, input: WebhookInput, partial: boolean): Partial<Pick<Webhook, 'url' | 'events' | 'collections'>> {
  const detail: Record<string, string> = {};
  const out: Partial<Pick<Webhook, 'url' | 'events' | 'collections'>> = {};
  if (input.url !== undefined || !partial) {
    const problem = typeof input.url !== 'string' ? 'is required: the https URL to deliver to' : webhookUrlProblem(input.url, ctx.config.events.webhooks.allowPrivateNetworks);
    if (problem) detail.url = problem;
    else out.url = input.url as string;
  }
  const list = (name: 'events' | 'collections', known: readonly string[], what: string) => {
    const v = input[name];
    if (v === undefined) return;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) return void (detail[name] = 'must be a list of names');
    const unknown = (v as string[]).filter((x) => !known.includes(x));
    if (unknown.length) return void (detail[name] = `unknown ${what} ${unknown.join(', ')} (known: ${known.join(', ')})`);
    out[name] = [...new Set(v as string[])];
  };
  list('events', EVENT_TYPES, 'event type');
  list('collections', [...ctx.collections.keys()], 'collection');
  if (Object.keys(detail).length) throw new InvalidInput(`${Object.keys(detail)[0]}: ${Object.values(detail)[0]}`, detail);
  return out;
}

function webhookEvent(tx: WriteTx, type: 'webhook.created' | 'webhook.updated' | 'webhook.removed', w: Webhook, actor: string | null): void {
  tx.emit({ type, record_id: w.id, actor, data: type === 'webhook.removed' ? null : JSON.stringify(describeWebhook(w)) });
}

/**
 * What the current config would refuse in each stored webhook, one line each for the start-up log:
 * an address it no longer allows (every delivery would fail) or collections it no longer has.
 */
export async function webhookProblems(ctx: AppContext): Promise<string[]> {
  const lines: string[] = [];
  for (const w of await listWebhooks(ctx)) {
    const problem = webhookUrlProblem(w.url, ctx.config.events.webhooks.allowPrivateNetworks);
    if (problem) lines.push(`webhook ${w.id} (${w.url}): the address ${problem}, so every delivery fails until the webhook is changed or removed`);
    const gone = w.collections.filter((c) => !ctx.collections.has(c));
    if (gone.length) lines.push(`webhook ${w.id} (${w.url}): ${gone.join(', ')} ${gone.length === 1 ? 'is' : 'are'} no longer a collection of the config: nothing of ${gone.length === 1 ? 'it' : 'them'} is delivered`);
  }
  return lines;
}

/** Adds a webhook; returns it with its signing secret (`whsec_…`), shown this once. Events from now on are delivered. */
export async function addWebhook(ctx: AppContext, input: WebhookInput, actor: string | null = null): Promise<{ webhook: Webhook; secret: string }> {
  const c = checked(ctx, input, false);
  const now = Date.now();
  const webhook: Webhook = { id: newTimeOrderedId(), url: c.url!, events: c.events ?? [], collections: c.collections ?? [], createdAt: now, updatedAt: now };
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  await write(ctx.store, async (tx) => {
    await insertWebhook(tx, {
      id: webhook.id,
      url: webhook.url,
      events: JSON.stringify(webhook.events),
      collections: JSON.stringify(webhook.collections),
      secret,
      cursor: await latestEventId(tx),
      created_at: now,
      updated_at: now,
    });
    webhookEvent(tx, 'webhook.created', webhook, actor);
  });
  return { webhook, secret };
}

export async function listWebhooks(ctx: AppContext): Promise<Webhook[]> {
  return (await listWebhookRows(ctx.store)).map(toWebhook);
}

export async function findWebhook(ctx: AppContext, id: string): Promise<Webhook | null> {
  const row = await findWebhookRow(ctx.store, id);
  return row ? toWebhook(row) : null;
}

/** Changes a webhook's URL, types or collections (the rules of addWebhook). Null when there is no such webhook. */
export async function updateWebhook(ctx: AppContext, id: string, input: WebhookInput, actor: string | null = null): Promise<Webhook | null> {
  const c = checked(ctx, input, true);
  return write(ctx.store, async (tx) => {
    const row = await findWebhookRow(tx, id);
    if (!row) return null;
    const w = { ...toWebhook(row), ...c, updatedAt: Date.now() };
    await updateWebhookRow(tx, id, { url: w.url, events: JSON.stringify(w.events), collections: JSON.stringify(w.collections), updated_at: w.updatedAt });
    webhookEvent(tx, 'webhook.updated', w, actor);
    return w;
  });
}

/** Removes a webhook and its pending deliveries. False when there is no such webhook. */
export async function removeWebhook(ctx: AppContext, id: string, actor: string | null = null): Promise<boolean> {
  return write(ctx.store, async (tx) => {
    const row = await findWebhookRow(tx, id);
    if (!row || !(await deleteWebhookRow(tx, id))) return false;
    webhookEvent(tx, 'webhook.removed', toWebhook(row), actor);
    return true;
  });
}

/** One delivery attempt as the admin API shows it (docs/events.md#delivery-guarantees). */
export interface DeliveryAttempt {
  id: string;
  event_id: string;
  attempt: number;
  time: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  outcome: string;
}

/** A webhook's delivery attempts, newest first, and how many deliveries still wait. */
export async function webhookDeliveries(ctx: AppContext, id: string, limit: number, before: number | null): Promise<{ attempts: DeliveryAttempt[]; pending: number }> {
  const rows = await listAttemptRows(ctx.store, id, limit, before);
  return {
    attempts: rows.map((a) => ({
      id: String(a.id),
      event_id: String(a.event_id),
      attempt: a.attempt,
      time: new Date(a.time).toISOString(),
      status_code: a.status_code,
      duration_ms: a.duration_ms,
      error: a.error,
      outcome: a.outcome,
    })),
    pending: await pendingDeliveries(ctx.store, id),
  };
}
