import type { CollectionModel, CollectionRegistry } from '../contract/collections.js';
import type { OwnedRecord, OwnedRecords } from '../contract/owned-records.js';
import type { Config } from '../platform/config/load.js';
import { deleteSettingIn, readSettingsStartingWith, writeSettingIn } from '../platform/store/settings.js';
import type { Store } from '../platform/store/store.js';
import { write, type WriteTx } from '../platform/store/write-path.js';
import { Links } from './links.js';
import { recordJson } from './records.js';
import { deleteRecordTree, ownedRecordRows } from './store/records.js';

// The records a subject owns in the `access: owner` collections, for the account page's export
// and account deletion (contract/owned-records.ts).
//
// A deletion is marked by a settings entry `records-deletion:<subject>`, written in the same
// transaction as the user's removal: once the user is gone, the marker is there, and it goes only
// when the last record has. Each batch of records is its own transaction and moves the marker's
// lease on; the sweeper (main/sweeper.ts) finishes, on any instance, a deletion whose lease has run
// out (its process died or was stopped). Two instances deleting the same records at once is
// harmless: a record is deleted, with its event, by whichever gets it first (deleteRecordTree
// checks the version), and the other skips it.

/** Records deleted per transaction: a large owner never holds one huge transaction. */
export const DELETION_BATCH = 200;
/** How long a running deletion's marker is left alone by the sweeper after its last batch. */
const LEASE_MS = 60_000;
const MARKER = 'records-deletion:';

interface Marker {
  actor: string | null;
  lease_until: number;
}

export function ownedRecordsIn(store: Store, collections: CollectionRegistry, config: Readonly<Config>): OwnedRecords {
  return new OwnedRecordsOfStore(store, collections, new Links(() => config.publicUrl, config.api.version, collections));
}

class OwnedRecordsOfStore implements OwnedRecords {
  /** Parents before children: a parent's deletion takes its children with it (and their events). */
  private readonly models: CollectionModel[];
  readonly collections: readonly string[];
  /** The subjects whose deletion runs in this process now (the sweeper does not start it twice). */
  private readonly running = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly registry: CollectionRegistry,
    private readonly links: Links,
  ) {
    const owned = [...registry.values()].filter((m) => m.access === 'owner');
    this.models = [...owned.filter((m) => !m.parent), ...owned.filter((m) => m.parent)];
    this.collections = this.models.map((m) => m.name);
  }

  async *export(subject: string): AsyncIterable<OwnedRecord> {
    for (const model of this.models) {
      let after: string | null = null;
      for (;;) {
        const rows = await ownedRecordRows(this.store, model, subject, after, DELETION_BATCH);
        for (const row of rows) yield { collection: model.name, json: recordJson(this.links, model, row) };
        if (rows.length < DELETION_BATCH) break;
        after = rows[rows.length - 1].id;
      }
    }
  }

  async scheduleDeletion(tx: WriteTx, subject: string, actor: string | null): Promise<void> {
    await writeSettingIn(tx, MARKER + subject, JSON.stringify({ actor, lease_until: Date.now() + LEASE_MS } satisfies Marker));
  }

  async deleteAll(subject: string, actor: string | null, onProgress?: (deleted: number) => void): Promise<number> {
    if (this.running.has(subject)) return 0;
    this.running.add(subject);
    try {
      let deleted = 0;
      for (const model of this.models) {
        const children = model.children.map((name) => this.registry.get(name)!);
        for (;;) {
          const batch = await this.retried(() => write(this.store, (tx) => this.deleteBatch(tx, model, children, subject, actor)));
          deleted += batch.deleted;
          onProgress?.(deleted);
          // Done with this collection only when a read finds nothing left (a record skipped as changed is read again).
          if (batch.read === 0) break;
        }
      }
      await write(this.store, (tx) => deleteSettingIn(tx, MARKER + subject));
      return deleted;
    } finally {
      this.running.delete(subject);
    }
  }

  /** A batch that met a record changed while it ran is run again (a few times: a record written to that often is being fought over). */
  private async retried<T>(run: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await run();
      } catch (e) {
        if (!(e instanceof RecordChangedMeanwhile) || attempt >= 5) throw e;
      }
    }
  }

  /** One transaction: the first batch of the subject's records in this collection, each with its children, and the marker's lease moved on. */
  private async deleteBatch(tx: WriteTx, model: CollectionModel, children: CollectionModel[], subject: string, actor: string | null) {
    const rows = await ownedRecordRows(tx, model, subject, null, DELETION_BATCH);
    const now = Date.now();
    let deleted = 0;
    for (const row of rows) {
      const removed = await deleteRecordTree(tx, model, row, children, now);
      // Changed meanwhile: the whole batch rolls back (its children's deletions with it, which had no events yet) and is tried again.
      if (!removed) throw new RecordChangedMeanwhile();
      // As a DELETE of the API: each child's record.deleted before its parent's.
      for (const child of removed) tx.emit({ type: 'record.deleted', collection: child.collection.name, record_id: child.id, owner: child.owner, actor, data: null });
      tx.emit({ type: 'record.deleted', collection: model.name, record_id: row.id, owner: row.owner, actor, data: null });
      deleted += 1 + removed.length;
    }
    await writeSettingIn(tx, MARKER + subject, JSON.stringify({ actor, lease_until: now + LEASE_MS } satisfies Marker));
    return { read: rows.length, deleted };
  }

  async resumeDeletions(now = Date.now()): Promise<number> {
    let deleted = 0;
    for (const [key, value] of await readSettingsStartingWith(this.store, MARKER)) {
      const marker = JSON.parse(value) as Marker;
      if (marker.lease_until > now) continue;
      deleted += await this.deleteAll(key.slice(MARKER.length), marker.actor);
    }
    return deleted;
  }
}

/** A record of the batch changed between its read and its deletion. */
class RecordChangedMeanwhile extends Error {}
