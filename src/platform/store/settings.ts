import type { Store } from './store.js';
import { sqlOf } from './sql.js';
import { write } from './write-path.js';

// Owner of the settings table: small shared switches (maintenance mode) kept in the database so
// every instance sees them.

export async function readSetting(store: Store, key: string): Promise<string | null> {
  const row = await sqlOf(store).selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value ?? null;
}

export async function writeSetting(store: Store, key: string, value: string): Promise<void> {
  const now = Date.now();
  await write(store, (tx) =>
    sqlOf(tx)
    .insertInto('settings')
    .values({ key, value, updated_at: now })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value, updated_at: now }))
    .execute(),
  );
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
