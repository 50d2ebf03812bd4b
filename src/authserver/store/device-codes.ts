import { sqlOf, count, type On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';
import type { DeviceCodesTable } from '../../platform/store/schema.js';

// Owner of `device_codes` (RFC 8628): one row per device authorization request, found by the
// SHA-256 of its device code (the client's polls) or of its user code (the /device page). Every
// change is one conditional UPDATE, so that two instances (or two racing requests) cannot both
// win: a decision is taken once, a poll either keeps the pace or slows the client, a code is
// redeemed once.

export type DeviceCodeRow = DeviceCodesTable;

/** Stores a new request; false when its user code is taken already (the caller draws another). */
export async function insertDeviceCode(tx: WriteTx, row: DeviceCodeRow): Promise<boolean> {
  const r = await sqlOf(tx).insertInto('device_codes').values(row).onConflict((oc) => oc.column('user_code_hash').doNothing()).executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function findDeviceCode(on: On, hash: string): Promise<DeviceCodeRow | null> {
  return (await sqlOf(on).selectFrom('device_codes').selectAll().where('hash', '=', hash).executeTakeFirst()) ?? null;
}

export async function findDeviceCodeByUserCode(on: On, userCodeHash: string): Promise<DeviceCodeRow | null> {
  return (await sqlOf(on).selectFrom('device_codes').selectAll().where('user_code_hash', '=', userCodeHash).executeTakeFirst()) ?? null;
}

/**
 * A poll of a pending request: true when it kept the pace (its interval since the last poll);
 * otherwise the interval grows by `slowBy` seconds (RFC 8628 §3.5 slow_down) and it is false.
 * Either way the poll is the last one now.
 */
export async function recordPoll(tx: WriteTx, hash: string, now: number, slowBy: number): Promise<boolean> {
  const db = sqlOf(tx);
  const paced = await db
    .updateTable('device_codes')
    .set({ last_polled_at: now })
    .where('hash', '=', hash)
    .where((eb) => eb.or([eb('last_polled_at', 'is', null), eb(eb('last_polled_at', '+', eb(eb.ref('poll_interval'), '*', 1000)), '<=', now)]))
    .executeTakeFirst();
  if (count(paced) === 1) return true;
  await db
    .updateTable('device_codes')
    .set((eb) => ({ last_polled_at: now, poll_interval: eb(eb.ref('poll_interval'), '+', slowBy) }))
    .where('hash', '=', hash)
    .execute();
  return false;
}

/** The user's decision on a pending, unexpired request; false when it was decided already or has expired. */
export async function decideDeviceCode(
  tx: WriteTx,
  hash: string,
  decision: Pick<DeviceCodeRow, 'decision' | 'subject' | 'granted_scope' | 'grant_expires_at' | 'auth_time' | 'sid' | 'amr'>,
  now: number,
): Promise<boolean> {
  return count(await sqlOf(tx).updateTable('device_codes').set(decision).where('hash', '=', hash).where('decision', 'is', null).where('expires_at', '>', now).executeTakeFirst()) === 1;
}

/** Redeems an approved request once, tied to its grant: of two racing redemptions exactly one wins. */
export async function claimDeviceCode(tx: WriteTx, hash: string, grantId: string, now: number): Promise<boolean> {
  return (
    count(
      await sqlOf(tx)
        .updateTable('device_codes')
        .set({ used_at: now, grant_id: grantId })
        .where('hash', '=', hash)
        .where('decision', '=', 'approved')
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst(),
    ) === 1
  );
}

/** Deletes the requests that expired before `before`. */
export async function purgeDeviceCodes(on: On, before: number): Promise<number> {
  return count(await sqlOf(on).deleteFrom('device_codes').where('expires_at', '<', before).executeTakeFirst());
}
