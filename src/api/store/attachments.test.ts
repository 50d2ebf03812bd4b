// The attachments store on each engine: bytes written in chunks come back whole and in order;
// a row from before chunks (migration 0008) still serves its inline bytes; deleting an attachment
// or its record removes its chunks too.
import assert from 'node:assert/strict';
import { migrateCore } from '../../platform/store/migrations.js';
import { sqlOf } from '../../platform/store/sql.js';
import { write } from '../../platform/store/write-path.js';
import { CHUNK_BYTES, deleteAttachment, deleteAttachmentsOf, insertAttachment, readAttachmentChunks } from './attachments.js';
import { testOnEachEngine } from '../../../test/helpers/stores.js';

const meta = (id: string, recordId: string, size: number) => ({
  id, collection: 'zoos', record_id: recordId, filename: `${id}.bin`, content_type: 'application/octet-stream', size, sha256: 'x', created_at: '2026-11-25T00:00:00.000Z',
});

async function bytesOf(store: Parameters<typeof readAttachmentChunks>[0], id: string): Promise<Buffer | null> {
  const chunks = await readAttachmentChunks(store, id);
  if (!chunks) return null;
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

testOnEachEngine('attachments: chunked bytes come back in order; inline rows from before still serve; deletes take the chunks', async (store) => {
  await migrateCore(store);
  const big = Buffer.alloc(CHUNK_BYTES * 2 + 123);
  for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
  const pieces = [big.subarray(0, CHUNK_BYTES), big.subarray(CHUNK_BYTES, 2 * CHUNK_BYTES), big.subarray(2 * CHUNK_BYTES)];
  await write(store, (tx) => insertAttachment(tx, meta('a1', 'r1', big.length), pieces));
  await write(store, (tx) => insertAttachment(tx, meta('a2', 'r2', 3), [Buffer.from('abc')]));
  assert.ok((await bytesOf(store, 'a1'))!.equals(big));
  assert.equal((await bytesOf(store, 'a2'))!.toString(), 'abc');
  assert.equal(await readAttachmentChunks(store, 'nope'), null);

  // A row written before migration 0008: its bytes in attachments.data, no chunks.
  await sqlOf(store).insertInto('attachments').values({ ...meta('legacy', 'r1', 6), data: Buffer.from('inline') }).execute();
  assert.equal((await bytesOf(store, 'legacy'))!.toString(), 'inline');

  const chunkRows = async () => (await sqlOf(store).selectFrom('attachment_chunks').select(['attachment_id', 'seq']).orderBy('attachment_id').orderBy('seq').execute()).map((r) => `${r.attachment_id}/${r.seq}`);
  assert.deepEqual(await chunkRows(), ['a1/0', 'a1/1', 'a1/2', 'a2/0']);
  assert.equal(await write(store, (tx) => deleteAttachment(tx, 'a2')), true);
  assert.deepEqual(await chunkRows(), ['a1/0', 'a1/1', 'a1/2']);
  assert.equal(await write(store, (tx) => deleteAttachmentsOf(tx, 'zoos', ['r1'])), 2); // a1 and legacy
  assert.deepEqual(await chunkRows(), []);
  assert.equal(await readAttachmentChunks(store, 'a1'), null);
});
