import type { JobsTable } from '../../platform/store/schema.js';
import { count, sqlOf, type On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';

// Owner of the jobs table: bulk creates (202, docs/api.md "Bulk POST → 202 and jobs") and their leases.

export type JobRow = JobsTable;

export async function insertJob(tx: WriteTx, job: JobRow): Promise<void> {
  await sqlOf(tx).insertInto('jobs').values(job).execute();
}

export async function findJob(on: On, id: string): Promise<JobRow | null> {
  return ((await sqlOf(on).selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst()) as JobRow | undefined) ?? null;
}

/** Unfinished jobs whose lease ran out before `now` (their process stopped or died). */
export async function findStaleJobs(on: On, now: number, limit: number): Promise<{ id: string; leaseUntil: number }[]> {
  const rows = await sqlOf(on).selectFrom('jobs').select(['id', 'lease_until']).where('status', '!=', 'done').where('lease_until', '<', now).limit(limit).execute();
  return rows.map((r) => ({ id: r.id, leaseUntil: Number(r.lease_until) }));
}

/** Takes over a job whose lease was `seenLease`; of two instances exactly one gets true. */
export async function claimJobLease(tx: WriteTx, id: string, seenLease: number, until: number): Promise<boolean> {
  return count(await sqlOf(tx).updateTable('jobs').set({ lease_until: until }).where('id', '=', id).where('lease_until', '=', seenLease).executeTakeFirst()) === 1;
}

/** A job without its items and results: enough to tell whether a chunk may be processed. */
export type JobHead = Omit<JobRow, 'items' | 'results'>;

export async function findJobHead(on: On, id: string): Promise<JobHead | null> {
  const row = await sqlOf(on)
    .selectFrom('jobs')
    .select(['id', 'subject', 'client_id', 'collection', 'parent_id', 'status', 'total', 'processed', 'lease_until', 'created_at', 'updated_at'])
    .where('id', '=', id)
    .executeTakeFirst();
  return (row as JobHead | undefined) ?? null;
}

/**
 * Records a chunk's progress if the job is still where this process left it (`processed` =
 * `from`); false when another instance has moved it on (the caller rolls its chunk back).
 */
export async function advanceJob(
  tx: WriteTx,
  id: string,
  from: number,
  progress: Pick<JobRow, 'processed' | 'results' | 'status' | 'lease_until' | 'updated_at'> & { items?: string },
): Promise<boolean> {
  return count(await sqlOf(tx).updateTable('jobs').set(progress).where('id', '=', id).where('processed', '=', from).executeTakeFirst()) === 1;
}

/** Deletes finished jobs last changed before `before`. */
export async function purgeFinishedJobs(on: On, before: number): Promise<number> {
  return count(await sqlOf(on).deleteFrom('jobs').where('status', '=', 'done').where('updated_at', '<', before).executeTakeFirst());
}
