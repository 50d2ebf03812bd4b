import type { AttachmentsTable } from '../../platform/store/schema.js';
import { count, sqlOf, type On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';

// Owner of the attachments and attachment_chunks tables: files of records. An attachment's
// metadata is one row; its bytes are chunks of at most CHUNK_BYTES (rows from before migration
// 0008 hold their bytes in attachments.data instead).

export type AttachmentMeta = Omit<AttachmentsTable, 'data'>;
const META = ['id', 'collection', 'record_id', 'filename', 'content_type', 'size', 'sha256', 'created_at'] as const;

export async function listAttachmentMeta(on: On, collection: string, recordId: string): Promise<AttachmentMeta[]> {
  return sqlOf(on).selectFrom('attachments').select(META).where('collection', '=', collection).where('record_id', '=', recordId).orderBy('id').execute();
}

export async function findAttachmentMeta(on: On, collection: string, recordId: string, id: string): Promise<AttachmentMeta | null> {
  const row = await sqlOf(on)
    .selectFrom('attachments')
    .select(META)
    .where('id', '=', id)
    .where('collection', '=', collection)
    .where('record_id', '=', recordId)
    .executeTakeFirst();
  return row ?? null;
}

/** How many bytes one chunk row holds. */
export const CHUNK_BYTES = 256 * 1024;

/**
 * The bytes in order, one chunk read at a time (a download never holds the whole file), or null
 * when there is no such attachment. A row from before chunks (migration 0008) yields its bytes
 * from attachments.data, where a chunked one has an empty value.
 */
export async function readAttachmentChunks(on: On, id: string): Promise<AsyncGenerator<Buffer> | null> {
  const row = await sqlOf(on).selectFrom('attachments').select('data').where('id', '=', id).executeTakeFirst();
  if (!row) return null;
  const inline = row.data.length > 0 ? asBuffer(row.data) : null;
  return (async function* (): AsyncGenerator<Buffer> {
    if (inline) {
      yield inline;
      return;
    }
    for (let seq = 0; ; seq++) {
      const chunk = await sqlOf(on).selectFrom('attachment_chunks').select('data').where('attachment_id', '=', id).where('seq', '=', seq).executeTakeFirst();
      if (!chunk) return;
      yield asBuffer(chunk.data);
    }
  })();
}

/** Both drivers hand blobs over as Buffers; a plain Uint8Array is wrapped, not copied. */
const asBuffer = (data: Uint8Array) => (Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));

/** The metadata row and the bytes, chunk by chunk as `chunks` yields them (each at most CHUNK_BYTES). */
export async function insertAttachment(tx: WriteTx, row: Omit<AttachmentsTable, 'data'>, chunks: Iterable<Buffer>): Promise<void> {
  await sqlOf(tx).insertInto('attachments').values({ ...row, data: new Uint8Array(0) }).execute();
  let seq = 0;
  for (const data of chunks) await sqlOf(tx).insertInto('attachment_chunks').values({ attachment_id: row.id, seq: seq++, data }).execute();
}

export async function deleteAttachment(tx: WriteTx, id: string): Promise<boolean> {
  await sqlOf(tx).deleteFrom('attachment_chunks').where('attachment_id', '=', id).execute();
  return count(await sqlOf(tx).deleteFrom('attachments').where('id', '=', id).executeTakeFirst()) > 0;
}

/** Deletes every attachment of these records (a record's deletion). */
export async function deleteAttachmentsOf(tx: WriteTx, collection: string, recordIds: string[]): Promise<number> {
  if (recordIds.length === 0) return 0;
  let n = 0;
  for (let i = 0; i < recordIds.length; i += 500) {
    const ids = recordIds.slice(i, i + 500);
    await sqlOf(tx)
      .deleteFrom('attachment_chunks')
      .where('attachment_id', 'in', sqlOf(tx).selectFrom('attachments').select('id').where('collection', '=', collection).where('record_id', 'in', ids))
      .execute();
    n += count(await sqlOf(tx).deleteFrom('attachments').where('collection', '=', collection).where('record_id', 'in', ids).executeTakeFirst());
  }
  return n;
}
