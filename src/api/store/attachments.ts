import type { AttachmentsTable } from '../../platform/store/schema.js';
import { count, sqlOf, type On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';

// Owner of the attachments table: files of records, bytes and metadata in one row.

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

export async function readAttachmentBytes(on: On, id: string): Promise<Buffer | null> {
  const row = await sqlOf(on).selectFrom('attachments').select('data').where('id', '=', id).executeTakeFirst();
  return row ? Buffer.from(row.data) : null;
}

export async function insertAttachment(tx: WriteTx, row: AttachmentsTable): Promise<void> {
  await sqlOf(tx).insertInto('attachments').values(row).execute();
}

export async function deleteAttachment(tx: WriteTx, id: string): Promise<boolean> {
  return count(await sqlOf(tx).deleteFrom('attachments').where('id', '=', id).executeTakeFirst()) > 0;
}

/** Deletes every attachment of these records (a record's deletion). */
export async function deleteAttachmentsOf(tx: WriteTx, collection: string, recordIds: string[]): Promise<number> {
  if (recordIds.length === 0) return 0;
  let n = 0;
  for (let i = 0; i < recordIds.length; i += 500)
    n += count(await sqlOf(tx).deleteFrom('attachments').where('collection', '=', collection).where('record_id', 'in', recordIds.slice(i, i + 500)).executeTakeFirst());
  return n;
}
