import type { WriteTx } from '../platform/store/write-path.js';

// What the account page (authorization server) needs of the records a user owns, which live on
// the resource server's side: it provides this over its own tables (api/owned-records.ts), and
// main/context.ts wires it in, as AccessTokenSource goes the other way.

/** One record as the export writes it: its collection and its JSON as `GET /v1/<collection>/<id>` shows it. */
export interface OwnedRecord {
  collection: string;
  json: string;
}

/** The records a subject owns in the `access: owner` collections (children included): exported, or deleted with their owner. */
export interface OwnedRecords {
  /** The owner collections, parents before children: the keys of an export's `records`. */
  readonly collections: readonly string[];
  /** Every record `subject` owns, collection after collection, read page by page (never all at once). */
  export(subject: string): AsyncIterable<OwnedRecord>;
  /**
   * Marks, inside the caller's write, that `subject`'s records are to be deleted: the marker is
   * committed with that write (the user's removal), so the deletion is resumed if this process
   * dies before `deleteAll` has finished.
   */
  scheduleDeletion(tx: WriteTx, subject: string, actor: string | null): Promise<void>;
  /**
   * Deletes every record `subject` owns, in transactions of at most a batch of records (each
   * record's `record.deleted` by `actor`), then the marker. `onProgress` gets the count so far after
   * each batch. Answers how many records were deleted.
   */
  deleteAll(subject: string, actor: string | null, onProgress?: (deleted: number) => void): Promise<number>;
  /** Finishes the deletions whose marker remains and whose last batch is a while ago (their process died): the sweeper calls it. */
  resumeDeletions(now?: number): Promise<number>;
}
