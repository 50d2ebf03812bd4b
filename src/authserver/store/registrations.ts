import { count, sqlOf, type On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';
import type { ClientRegistrationsTable, RegistrationTokensTable } from '../../platform/store/schema.js';

// Owner of `registration_tokens` (the initial access tokens of dynamic client registration) and
// `client_registrations` (the clients that registered themselves, RFC 7591/7592). Only SHA-256
// hashes of the tokens are stored.

export type RegistrationTokenRow = RegistrationTokensTable;
export type ClientRegistrationRow = ClientRegistrationsTable;

export async function insertRegistrationToken(tx: WriteTx, row: RegistrationTokenRow): Promise<void> {
  await sqlOf(tx).insertInto('registration_tokens').values(row).execute();
}

export async function findRegistrationToken(on: On, id: string): Promise<RegistrationTokenRow | null> {
  return (await sqlOf(on).selectFrom('registration_tokens').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

/** Spends one use of a live token: false when it has none left, has expired or is gone (the race's loser). */
export async function spendRegistrationToken(tx: WriteTx, id: string, now: number): Promise<boolean> {
  return (
    count(
      await sqlOf(tx)
        .updateTable('registration_tokens')
        .set((eb) => ({ uses_left: eb('uses_left', '-', 1) }))
        .where('id', '=', id)
        .where('uses_left', '>', 0)
        .where('expires_at', '>', now)
        .executeTakeFirst(),
    ) === 1
  );
}

/** The tokens still usable (uses left, not expired), newest first. */
export async function listLiveRegistrationTokens(on: On, now: number): Promise<RegistrationTokenRow[]> {
  return sqlOf(on).selectFrom('registration_tokens').selectAll().where('uses_left', '>', 0).where('expires_at', '>', now).orderBy('created_at', 'desc').execute();
}

/** True when there was such a token. */
export async function deleteRegistrationToken(tx: WriteTx, id: string): Promise<boolean> {
  return count(await sqlOf(tx).deleteFrom('registration_tokens').where('id', '=', id).executeTakeFirst()) === 1;
}

/** The sweeper: tokens expired before `before`, and those used up. */
export async function purgeRegistrationTokens(on: On, before: number): Promise<number> {
  return count(await sqlOf(on).deleteFrom('registration_tokens').where((eb) => eb.or([eb('expires_at', '<', before), eb('uses_left', '<=', 0)])).executeTakeFirst());
}

export async function insertClientRegistration(tx: WriteTx, row: ClientRegistrationRow): Promise<void> {
  await sqlOf(tx).insertInto('client_registrations').values(row).execute();
}

export async function findClientRegistration(on: On, clientId: string): Promise<ClientRegistrationRow | null> {
  return (await sqlOf(on).selectFrom('client_registrations').selectAll().where('client_id', '=', clientId).executeTakeFirst()) ?? null;
}

/** A PUT (RFC 7592) replaces what the clients table does not hold. */
export async function updateClientRegistration(tx: WriteTx, clientId: string, change: Pick<ClientRegistrationRow, 'auth_method' | 'contacts'>): Promise<void> {
  await sqlOf(tx).updateTable('client_registrations').set(change).where('client_id', '=', clientId).execute();
}

/** With the client (model/clients.ts removeClient): its registration access token ends with it. */
export async function deleteClientRegistration(tx: WriteTx, clientId: string): Promise<void> {
  await sqlOf(tx).deleteFrom('client_registrations').where('client_id', '=', clientId).execute();
}

/** The ids of the clients that registered themselves (the console marks them). */
export async function registeredClientIds(on: On): Promise<string[]> {
  return (await sqlOf(on).selectFrom('client_registrations').select('client_id').execute()).map((r) => r.client_id);
}
