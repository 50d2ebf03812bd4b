import { count, sqlOf, type On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';

// Owner of `mcp_sessions` and `mcp_subscriptions` (docs/mcp.md#following-changes): the records an
// MCP session follows, read by whichever instance holds the session's stream. A session has a row
// here only once it subscribes or opens a stream (its id verifies itself: api/mcp/sessions.ts); both
// go with the session's expiry (the sweeper).

export interface SessionRow {
  id: string;
  subject: string;
  clientId: string;
  expiresAt: number;
}

export interface FollowedRecord {
  collection: string;
  recordId: string;
}

/** A subscription as the stream instance reads it, with the name of the session's current stream. */
export interface Subscriber extends FollowedRecord {
  sessionId: string;
  uri: string;
  stream: string | null;
}

/**
 * A session's row, made at its first subscribe or stream. A user's client keeps the rows of its
 * `sessionLimit` newest sessions: a new one lets the oldest go with what it followed, so that
 * sessions initialized in a loop cannot fill the database (docs/mcp.md, Limits). False when this
 * session is itself older than those: it follows nothing (its client initializes again).
 */
async function ensureSession(tx: WriteTx, s: SessionRow, sessionLimit: number): Promise<boolean> {
  const db = sqlOf(tx);
  const inserted = await db
    .insertInto('mcp_sessions')
    .values({ id: s.id, subject: s.subject, client_id: s.clientId, subscriptions: 0, stream: null, expires_at: s.expiresAt })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  if (count(inserted) === 0) return true;
  const newest = db
    .selectFrom('mcp_sessions')
    .select('id')
    .where('subject', '=', s.subject)
    .where('client_id', '=', s.clientId)
    .orderBy('expires_at', 'desc')
    .orderBy('id', 'desc')
    .limit(sessionLimit);
  const older = db.selectFrom('mcp_sessions').select('id').where('subject', '=', s.subject).where('client_id', '=', s.clientId).where('id', 'not in', newest);
  await db.deleteFrom('mcp_subscriptions').where('session_id', 'in', older).execute();
  const removed = await db.deleteFrom('mcp_sessions').where('subject', '=', s.subject).where('client_id', '=', s.clientId).where('id', 'not in', newest).returning('id').execute();
  return !removed.some((r) => r.id === s.id);
}

/** How many sessions of one user's client have rows, and how many records one session follows. */
export interface SessionLimits {
  sessions: number;
  subscriptions: number;
}

/**
 * Follows a record: `full` when the session has `limits.subscriptions` already. The count is raised
 * by a conditional update of the session's row before the insert, so subscribes racing each other
 * wait for that row's lock and cannot pass the limit together.
 */
export async function addSubscription(tx: WriteTx, session: SessionRow, record: FollowedRecord & { uri: string }, limits: SessionLimits, now: number): Promise<'added' | 'already' | 'full' | 'superseded'> {
  const db = sqlOf(tx);
  if (!(await ensureSession(tx, session, limits.sessions))) return 'superseded';
  const existing = await db
    .selectFrom('mcp_subscriptions')
    .select('uri')
    .where('session_id', '=', session.id)
    .where('collection', '=', record.collection)
    .where('record_id', '=', record.recordId)
    .executeTakeFirst();
  if (existing) return 'already';
  const raised = await db
    .updateTable('mcp_sessions')
    .set((eb) => ({ subscriptions: eb('subscriptions', '+', 1) }))
    .where('id', '=', session.id)
    .where('subscriptions', '<', limits.subscriptions)
    .executeTakeFirst();
  if (count(raised) === 0) return 'full';
  const inserted = await db
    .insertInto('mcp_subscriptions')
    .values({ session_id: session.id, collection: record.collection, record_id: record.recordId, uri: record.uri, created_at: now })
    .onConflict((oc) => oc.columns(['session_id', 'collection', 'record_id']).doNothing())
    .executeTakeFirst();
  if (count(inserted) === 1) return 'added';
  // The same subscribe, concurrent, inserted it first.
  await lowerCount(tx, session.id);
  return 'already';
}

async function lowerCount(tx: WriteTx, sessionId: string): Promise<void> {
  await sqlOf(tx)
    .updateTable('mcp_sessions')
    .set((eb) => ({ subscriptions: eb('subscriptions', '-', 1) }))
    .where('id', '=', sessionId)
    .execute();
}

/** Stops following a record; false when the session did not follow it. */
export async function removeSubscription(tx: WriteTx, sessionId: string, record: FollowedRecord): Promise<boolean> {
  const removed = await sqlOf(tx)
    .deleteFrom('mcp_subscriptions')
    .where('session_id', '=', sessionId)
    .where('collection', '=', record.collection)
    .where('record_id', '=', record.recordId)
    .executeTakeFirst();
  if (count(removed) === 0) return false;
  await lowerCount(tx, sessionId);
  return true;
}

/** Names the session's current stream: a stream of the session with another name is no longer its. */
export async function claimStream(tx: WriteTx, session: SessionRow, stream: string, sessionLimit: number): Promise<void> {
  await ensureSession(tx, session, sessionLimit);
  await sqlOf(tx).updateTable('mcp_sessions').set({ stream }).where('id', '=', session.id).execute();
}

/**
 * Which of these sessions (the streams one instance holds) follow any of these records, live ones
 * only: one read for a batch of events, whatever the number of streams. Only the sessions asked
 * about: the sessions following a record are as many as any token cares to initialize, and each
 * change must not have every instance read them all.
 */
export async function subscribersOf(on: On, records: readonly FollowedRecord[], sessionIds: readonly string[], now: number): Promise<Subscriber[]> {
  const out: Subscriber[] = [];
  for (let s = 0; s < sessionIds.length; s += 500) {
    const sessions = sessionIds.slice(s, s + 500);
    for (let i = 0; i < records.length; i += 200) {
      const chunk = records.slice(i, i + 200);
      const rows = await sqlOf(on)
        .selectFrom('mcp_subscriptions as sub')
        .innerJoin('mcp_sessions as ses', 'ses.id', 'sub.session_id')
        .select(['sub.session_id', 'sub.collection', 'sub.record_id', 'sub.uri', 'ses.stream'])
        .where('sub.session_id', 'in', sessions)
        .where('ses.expires_at', '>', now)
        .where((eb) => eb.or(chunk.map((r) => eb.and([eb('sub.collection', '=', r.collection), eb('sub.record_id', '=', r.recordId)]))))
        .execute();
      for (const r of rows) out.push({ sessionId: r.session_id, collection: r.collection, recordId: r.record_id, uri: r.uri, stream: r.stream });
    }
  }
  return out;
}

/** What one session follows (a stream catching up from Last-Event-ID). */
export async function subscriptionsOf(on: On, sessionId: string): Promise<(FollowedRecord & { uri: string })[]> {
  const rows = await sqlOf(on).selectFrom('mcp_subscriptions').select(['collection', 'record_id', 'uri']).where('session_id', '=', sessionId).execute();
  return rows.map((r) => ({ collection: r.collection, recordId: r.record_id, uri: r.uri }));
}

/** The sweeper: sessions past their expiry, with what they followed. */
export async function purgeMcpSessions(on: On, now: number): Promise<number> {
  const db = sqlOf(on);
  const ended = db.selectFrom('mcp_sessions').select('id').where('expires_at', '<', now);
  const subscriptions = count(await db.deleteFrom('mcp_subscriptions').where('session_id', 'in', ended).executeTakeFirst());
  return subscriptions + count(await db.deleteFrom('mcp_sessions').where('expires_at', '<', now).executeTakeFirst());
}
