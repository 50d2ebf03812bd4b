import type { Store } from '../../platform/store/store.js';
import type { WebhookAttemptsTable, WebhooksTable } from '../../platform/store/schema.js';
import { count, sqlOf, type On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';

// Owner of the webhooks tables: `webhooks` (where to deliver, what, and the last event queued),
// `webhook_deliveries` (one per webhook and event: pending until it succeeded or failed for good;
// leased by one instance per attempt, as bulk jobs are) and `webhook_attempts` (every attempt,
// for /admin/v1/webhooks/{id}/deliveries).

export type WebhookRow = WebhooksTable;
export type AttemptRow = Omit<WebhookAttemptsTable, 'id'>;

export interface DeliveryRow {
  id: number;
  webhook_id: string;
  event_id: number;
  attempts: number;
  first_at: number;
}

export async function insertWebhook(tx: WriteTx, row: WebhookRow): Promise<void> {
  await sqlOf(tx).insertInto('webhooks').values(row).execute();
}

export async function findWebhookRow(on: On, id: string): Promise<WebhookRow | null> {
  return (await sqlOf(on).selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

export async function listWebhookRows(on: On): Promise<WebhookRow[]> {
  return sqlOf(on).selectFrom('webhooks').selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function updateWebhookRow(tx: WriteTx, id: string, changes: Pick<WebhookRow, 'url' | 'events' | 'collections' | 'updated_at'>): Promise<boolean> {
  return count(await sqlOf(tx).updateTable('webhooks').set(changes).where('id', '=', id).executeTakeFirst()) > 0;
}

/** Removes a webhook with its pending deliveries; its attempts stay listed until the retention sweep. */
export async function deleteWebhookRow(tx: WriteTx, id: string): Promise<boolean> {
  await sqlOf(tx).deleteFrom('webhook_deliveries').where('webhook_id', '=', id).execute();
  return count(await sqlOf(tx).deleteFrom('webhooks').where('id', '=', id).executeTakeFirst()) > 0;
}

/**
 * Queues deliveries of events up to `through` for a webhook whose cursor is still `from` (another
 * instance that queued them first wins: false, nothing changes).
 */
export async function queueDeliveries(tx: WriteTx, webhookId: string, from: number, through: number, eventIds: readonly number[], now: number): Promise<boolean> {
  const moved = await sqlOf(tx).updateTable('webhooks').set({ cursor: through }).where('id', '=', webhookId).where('cursor', '=', from).executeTakeFirst();
  if (count(moved) !== 1) return false;
  const rows = eventIds.map((event_id) => ({ webhook_id: webhookId, event_id, status: 'pending', attempts: 0, first_at: now, next_at: now, lease_until: 0, lease_owner: null }));
  for (let i = 0; i < rows.length; i += 200)
    await sqlOf(tx)
      .insertInto('webhook_deliveries')
      .values(rows.slice(i, i + 200))
      .onConflict((oc) => oc.columns(['webhook_id', 'event_id']).doNothing())
      .execute();
  return true;
}

/**
 * Leases up to `limit` due deliveries to `owner` until `leaseUntil`: of two instances asking at
 * once, each delivery goes to one (the update re-checks the lease row by row).
 */
export async function claimDueDeliveries(store: Store, owner: string, now: number, leaseUntil: number, limit: number): Promise<DeliveryRow[]> {
  const db = sqlOf(store);
  const due = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_at', '<=', now)
    .where('lease_until', '<=', now)
    .orderBy('next_at')
    .orderBy('id')
    .limit(limit)
    .execute();
  if (due.length === 0) return [];
  const ids = due.map((d) => Number(d.id));
  await db
    .updateTable('webhook_deliveries')
    .set({ lease_until: leaseUntil, lease_owner: owner })
    .where('id', 'in', ids)
    .where('status', '=', 'pending')
    .where('lease_until', '<=', now)
    .execute();
  const claimed = await db
    .selectFrom('webhook_deliveries')
    .select(['id', 'webhook_id', 'event_id', 'attempts', 'first_at'])
    .where('id', 'in', ids)
    .where('lease_owner', '=', owner)
    .where('lease_until', '=', leaseUntil)
    .orderBy('id')
    .execute();
  return claimed.map((r) => ({ ...r, id: Number(r.id), event_id: Number(r.event_id), first_at: Number(r.first_at) }));
}

/** What became of a leased delivery after an attempt. */
export interface DeliveryOutcome {
  id: number;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  nextAt: number;
}

/** Stores a batch of attempts and what became of their deliveries (the lease ends). */
export async function recordAttempts(tx: WriteTx, attempts: readonly AttemptRow[], outcomes: readonly DeliveryOutcome[], owner: string): Promise<void> {
  const db = sqlOf(tx);
  for (let i = 0; i < attempts.length; i += 200) await db.insertInto('webhook_attempts').values(attempts.slice(i, i + 200)).execute();
  for (const o of outcomes)
    await db
      .updateTable('webhook_deliveries')
      .set({ status: o.status, attempts: o.attempts, next_at: o.nextAt, lease_until: 0, lease_owner: null })
      .where('id', '=', o.id)
      .where('lease_owner', '=', owner)
      .execute();
}

/** A webhook's attempts, newest first. */
export async function listAttemptRows(on: On, webhookId: string, limit: number, before: number | null): Promise<(AttemptRow & { id: number })[]> {
  let q = sqlOf(on).selectFrom('webhook_attempts').selectAll().where('webhook_id', '=', webhookId);
  if (before !== null) q = q.where('id', '<', before);
  const rows = await q.orderBy('id', 'desc').limit(limit).execute();
  return rows.map((r) => ({ ...r, id: Number(r.id), event_id: Number(r.event_id), time: Number(r.time) }));
}

/** How many deliveries are pending (all webhooks, or one). */
export async function pendingDeliveries(on: On, webhookId?: string): Promise<number> {
  let q = sqlOf(on).selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll().as('n')).where('status', '=', 'pending');
  if (webhookId) q = q.where('webhook_id', '=', webhookId);
  return Number((await q.executeTakeFirst())?.n ?? 0);
}

/** Sweeps finished deliveries and attempts older than `before` (the events' retention). */
export async function purgeWebhookHistory(on: On, before: number): Promise<number> {
  const attempts = count(await sqlOf(on).deleteFrom('webhook_attempts').where('time', '<', before).executeTakeFirst());
  const deliveries = count(await sqlOf(on).deleteFrom('webhook_deliveries').where('status', '!=', 'pending').where('first_at', '<', before).executeTakeFirst());
  return attempts + deliveries;
}
