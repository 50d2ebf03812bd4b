import { count, sqlOf, type On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';

// Owner of the idempotency_keys table: the first answer to a create sent with an Idempotency-Key
// (docs/api.md), found again when the same key is sent again; purged after a day by the sweep.

export interface IdempotencyKey {
  subject: string;
  key: string;
  collection: string;
  bodyHash: string;
  recordId: string;
}

export async function findIdempotencyKey(on: On, subject: string, key: string): Promise<IdempotencyKey | null> {
  const row = await sqlOf(on).selectFrom('idempotency_keys').selectAll().where('subject', '=', subject).where('key', '=', key).executeTakeFirst();
  return row ? { subject: row.subject, key: row.key, collection: row.collection, bodyHash: row.body_hash, recordId: row.record_id } : null;
}

export async function insertIdempotencyKey(tx: WriteTx, k: IdempotencyKey, now: number): Promise<void> {
  await sqlOf(tx)
    .insertInto('idempotency_keys')
    .values({ subject: k.subject, key: k.key, collection: k.collection, body_hash: k.bodyHash, record_id: k.recordId, created_at: now })
    .execute();
}

export async function purgeIdempotencyKeys(on: On, before: number): Promise<number> {
  return count(await sqlOf(on).deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst());
}
