import type { AppContext } from '../../contract/context.js';
import { listLiveGrantRows } from '../store/grants.js';
import { findClient } from './clients.js';
import { nullIfRefused } from './client-metadata-document.js';
import { listSecondFactors } from './factors.js';
import { describeUser, removeUser, userSubject, type User } from './users.js';

// What a user may do with their own account as a whole (the account page, docs/oauth.md): take a
// copy of everything gatehouse holds about them, or delete it.

const iso = (ms: number) => new Date(ms).toISOString();

/** How much export text is handed on at once: a page of records, not one write per record. */
const EXPORT_CHUNK = 64 * 1024;

/**
 * The user's data as one JSON document, in pieces: the profile (as operators see it: never a
 * secret), the live grants, the second factors (what they are, never their secrets), and every
 * record the user owns in the owner collections, read page by page as the pieces are taken.
 */
export async function* exportAccount(ctx: AppContext, user: User, now = new Date()): AsyncGenerator<string> {
  const subject = userSubject(user.id);
  const grants = await Promise.all(
    (await listLiveGrantRows(ctx.store, { subject }, now.getTime(), 1000)).map(async (g) => ({
      client_id: g.client_id,
      client_name: (await findClient(ctx, g.client_id).catch(nullIfRefused))?.name ?? null,
      scope: g.scope,
      created_at: iso(Number(g.created_at)),
      expires_at: iso(Number(g.expires_at)),
      last_used_at: g.last_used_at === null ? null : iso(g.last_used_at),
    })),
  );
  const factors = (await listSecondFactors(ctx, user)).map((f) => ({ kind: f.kind, label: f.label, created_at: iso(f.createdAt) }));
  let out = `{"exported_at":${JSON.stringify(now.toISOString())},"user":${JSON.stringify(describeUser(user))},"grants":${JSON.stringify(grants)},"second_factors":${JSON.stringify(factors)},"records":{`;
  // One array per owner collection, empty ones too, in the order the records come (the port's).
  const names = ctx.ownedRecords.collections;
  let open = -1;
  let empty = true;
  const openUpTo = (k: number) => {
    while (open < k) {
      out += `${open >= 0 ? '],' : ''}${JSON.stringify(names[++open])}:[`;
      empty = true;
    }
  };
  for await (const record of ctx.ownedRecords.export(subject)) {
    openUpTo(names.indexOf(record.collection));
    out += empty ? record.json : `,${record.json}`;
    empty = false;
    if (out.length >= EXPORT_CHUNK) {
      yield out;
      out = '';
    }
  }
  openUpTo(names.length - 1);
  yield `${out}${open >= 0 ? ']' : ''}}}`;
}

/** Owners with more records than this get their answer before the records are all deleted. */
export const RECORDS_DELETED_BEFORE_ANSWER = 1000;

export interface AccountDeleted {
  user: User;
  /** How many records were deleted, or null while the rest is still being deleted in the background. */
  recordsDeleted: number | null;
}

/**
 * Deletes a user's account: first, in one transaction, the user, their sessions, second factors,
 * grants and tokens (`removeUser`: access ends at once) with the mark that their records are to
 * go; then their records in the owner collections, in batches (`OwnedRecords.deleteAll`), resumed
 * by the sweeper if this process dies first. Past RECORDS_DELETED_BEFORE_ANSWER records the answer
 * does not wait for the rest; `onBackgroundError` hears a failure after that (the sweeper retries).
 * Null when the user no longer exists.
 */
export async function deleteAccount(ctx: AppContext, user: User, actor: string | null, onBackgroundError: (err: unknown) => void): Promise<AccountDeleted | null> {
  const subject = userSubject(user.id);
  const removed = await removeUser(ctx, user.username, actor, (tx) => ctx.ownedRecords.scheduleDeletion(tx, subject, actor));
  if (!removed) return null;
  let answerNow = () => {};
  const many = new Promise<null>((resolve) => (answerNow = () => resolve(null)));
  const deletion = ctx.ownedRecords.deleteAll(subject, actor, (n) => n >= RECORDS_DELETED_BEFORE_ANSWER && answerNow());
  const settled = deletion.then(
    (n) => n,
    (err: unknown) => {
      onBackgroundError(err);
      return null;
    },
  );
  return { user: removed.user, recordsDeleted: await Promise.race([settled, many]) };
}
