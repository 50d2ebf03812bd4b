import type { CollectionRegistry } from '../contract/collections.js';
import type { Store } from '../platform/store/store.js';
import { syncCollectionTables, type SyncReport } from './store/collection-tables.js';
import { purgeIdempotencyKeys } from './store/idempotency-keys.js';
import { purgeFinishedJobs } from './store/jobs.js';
import { purgeMcpSessions } from './store/mcp-sessions.js';
import { purgeReplayKeys } from '../platform/store/replay-cache.js';

// What the program's entry points ask of the resource server's tables: bring them in line with
// the config (start-up, `gatehouse migrate`), and delete what can no longer matter (the sweeper).

export type { SyncReport } from './store/collection-tables.js';
export { MIGRATION_BATCH, adoptSchema, applySchemaPlan, assertPlanApplies, appliedMigrations, planSchemaChanges, MigrationRefused, SchemaChangesRefused } from './schema-evolution.js';
export type { SchemaPlan, Progress } from './schema-evolution.js';

export function syncResourceTables(store: Store, collections: CollectionRegistry): Promise<SyncReport> {
  return syncCollectionTables(store, collections);
}

const DAY = 86_400_000;

/** Expired replay-cache keys (MAC nonces, DPoP proofs), idempotency keys older than a day, jobs finished a week ago, expired MCP sessions' subscriptions. */
export async function sweepResourceTables(store: Store, now = Date.now()): Promise<Record<string, number>> {
  return {
    nonces: await purgeReplayKeys(store, now),
    idempotency_keys: await purgeIdempotencyKeys(store, now - DAY),
    jobs: await purgeFinishedJobs(store, now - 7 * DAY),
    mcp_sessions: await purgeMcpSessions(store, now),
  };
}
