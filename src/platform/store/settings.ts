import type { Store } from './store.js';
import { sqlOf } from './sql.js';
import { write, type WriteTx } from './write-path.js';

// Owner of the settings table: small shared switches (maintenance mode) kept in the database so
// every instance sees them.

export async function readSetting(store: Store, key: string): Promise<string | null> {
  const row = await sqlOf(store).selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value ?? null;
}

/** The settings whose key starts with `prefix`, by key. */
export async function readSettingsStartingWith(store: Store, prefix: string): Promise<Map<string, string>> {
  // The table is small (switches, markers, one schema per collection): read whole, the same on both engines' collations.
  const rows = await sqlOf(store).selectFrom('settings').select(['key', 'value']).execute();
  return new Map(rows.filter((r) => r.key.startsWith(prefix)).map((r) => [r.key, r.value]));
}

/** Writes `value` unless the key has one already (two racing writers: the first wins); answers the value that stands. */
export async function settleSetting(store: Store, key: string, value: string): Promise<string> {
  await write(store, (tx) =>
    sqlOf(tx)
      .insertInto('settings')
      .values({ key, value, updated_at: Date.now() })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute(),
  );
  return (await readSetting(store, key))!;
}

/** settleSetting as part of a larger write (the value stands iff that write commits). */
export async function settleSettingIn(tx: WriteTx, key: string, value: string): Promise<string> {
  const db = sqlOf(tx);
  await db.insertInto('settings').values({ key, value, updated_at: Date.now() }).onConflict((oc) => oc.column('key').doNothing()).execute();
  return (await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow()).value;
}

export async function writeSetting(store: Store, key: string, value: string): Promise<void> {
  await write(store, (tx) => writeSettingIn(tx, key, value));
}

/** A setting written as part of a larger write: it exists iff that write commits. */
export async function writeSettingIn(tx: WriteTx, key: string, value: string): Promise<void> {
  const now = Date.now();
  await sqlOf(tx)
    .insertInto('settings')
    .values({ key, value, updated_at: now })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value, updated_at: now }))
    .execute();
}

/** Removes a setting as part of a larger write. */
export async function deleteSettingIn(tx: WriteTx, key: string): Promise<void> {
  await sqlOf(tx).deleteFrom('settings').where('key', '=', key).execute();
}

export interface Maintenance {
  on: boolean;
  since: number | null;
}

export async function readMaintenance(store: Store): Promise<Maintenance> {
  const value = await readSetting(store, 'maintenance');
  if (!value) return { on: false, since: null };
  const parsed = JSON.parse(value) as Maintenance;
  return { on: parsed.on === true, since: parsed.since ?? null };
}

export async function writeMaintenance(store: Store, on: boolean): Promise<void> {
  await writeSetting(store, 'maintenance', JSON.stringify({ on, since: on ? Date.now() : null }));
}
