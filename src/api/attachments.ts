import { createHash } from 'node:crypto';
import { closeSync, createWriteStream, openSync, readSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import type { AppContext } from '../contract/context.js';
import { ApiError, notFound, unprocessable, unsupportedMediaType } from '../platform/http/errors.js';
import { acceptsJson, namesType } from '../platform/http/negotiation.js';
import { routeMethods, type Method } from '../platform/http/routes.js';
import type { AttachmentsTable } from '../platform/store/schema.js';
import { write } from '../platform/store/write-path.js';
import { CHUNK_BYTES, deleteAttachment, findAttachmentMeta, insertAttachment, listAttachmentMeta, readAttachmentChunks, type AttachmentMeta } from './store/attachments.js';
import type { CollectionModel } from '../contract/collections.js';
import type { ResourceApi } from './resource-api.js';
import { FileBytes, fileProblem } from './file-types.js';
import { newTimeOrderedId } from '../platform/crypto/secrets.js';
import { bodyGarbage } from '../platform/http/body-garbage.js';

// Attachments of a record (POST /v1/<collection>/<id>/attachments, multipart or a raw body of a
// declared type). A file over maxBytes, of an undeclared type, or whose bytes are not what its
// type says (file-types.ts) is a 422. An upload is never held whole in memory: it is spooled to a
// temporary file as it arrives (counted and hashed on the way), validated from there through a
// small window, and stored chunk by chunk in one transaction with its metadata, or not at all.

/**
 * An upload written to a temporary file by spool(). A class, not a shape: only an instance made
 * here names a file the server may read and remove — a JSON body that looks alike is not one.
 */
class Spooled {
  constructor(
    readonly file: string,
    readonly size: number,
    readonly sha256: Buffer,
  ) {}
}
type Upload = { spooled: Spooled; type: string; filename: string } | ApiError;
const tooLarge = (max: number) => unprocessable('The attachment is too large', { file: `must be at most ${max} bytes` });

/**
 * Writes an upload to a new temporary file, counting and hashing it. Past `max` the file is
 * removed and the rest of the body drained and dropped (a body far past the limit is cut off).
 */
async function spool(stream: Readable, max: number): Promise<Spooled | ApiError> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gatehouse-upload-'));
  const file = path.join(dir, 'body');
  const hash = createHash('sha256');
  let size = 0;
  let over = false;
  const passed = bodyGarbage();
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      passed(chunk.length);
      if (size > max) {
        over = true;
        if (size > max * 4 + 1_048_576) return callback(tooLarge(max));
        return callback(); // drained, not written
      }
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  try {
    await pipeline(stream, counted, createWriteStream(file));
  } catch (e) {
    await removeSpooled(file);
    if (over) return tooLarge(max);
    throw e;
  }
  if (over) {
    await removeSpooled(file);
    return tooLarge(max);
  }
  return new Spooled(file, size, hash.digest());
}

async function removeSpooled(file: string): Promise<void> {
  await rm(path.dirname(file), { recursive: true, force: true });
}

/**
 * The spooled file in pieces of at most CHUNK_BYTES, read as the store asks for them into one
 * buffer: each piece is written (the driver copies it) before the next is read, so a large file
 * leaves no trail of dead buffers for the garbage collector.
 */
function* chunksOf(spooled: Spooled): Generator<Buffer> {
  const fd = openSync(spooled.file, 'r');
  const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, spooled.size));
  try {
    for (let at = 0; at < spooled.size; ) {
      const length = Math.min(CHUNK_BYTES, spooled.size - at);
      const n = readSync(fd, buffer, 0, length, at);
      if (n !== length) throw new Error(`the spooled upload ended early (${at + n} of ${spooled.size} bytes)`);
      at += n;
      yield buffer.subarray(0, n);
    }
  } finally {
    closeSync(fd);
  }
}

function filenameFrom(header: string | undefined): string {
  const m = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(header ?? '');
  const raw = m ? decodeURIComponentSafe(m[1]) : 'attachment';
  return raw.replace(/[\\/\x00-\x1f]/g, '_').slice(0, 255) || 'attachment';
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export async function registerAttachmentRoutes(api: FastifyInstance, v: string, ctx: AppContext, a: ResourceApi): Promise<void> {
  const withAttachments = [...ctx.collections.values()].some((m) => m.attachments);
  if (!withAttachments) return;

  await api.register(async (scope) => {
    await scope.register(multipart, { limits: { files: 1, fields: 10, parts: 20 } });
    // The file a request spools (a raw body, before the handler runs; a multipart file, in it) is
    // removed once the request is over — answered, whatever the answer (a 404 record, a 403, a
    // 422), or abandoned by the client — and the spooling has settled: the response's 'close'
    // comes exactly once in every case, and a client may leave while its body is still being
    // written to disk.
    const spooling = new WeakMap<FastifyRequest, Promise<Spooled | ApiError>>();
    const closed = new WeakSet<FastifyRequest>();
    const removeOnceSettled = (pending: Promise<Spooled | ApiError>) =>
      void pending.then((r) => (r instanceof Spooled ? removeSpooled(r.file) : undefined), () => undefined);
    const track = (request: FastifyRequest, pending: Promise<Spooled | ApiError>) => {
      // A client that left before its body reached the parser: nothing will close after this.
      if (closed.has(request)) removeOnceSettled(pending);
      else spooling.set(request, pending);
      return pending;
    };
    scope.addHook('onRequest', (request, reply, done) => {
      reply.raw.once('close', () => {
        closed.add(request);
        const pending = spooling.get(request);
        if (pending) removeOnceSettled(pending);
      });
      done();
    });
    // Every other body type reaches the handler as a counted stream; the handler decides.
    scope.addContentTypeParser('*', (request, payload, done) => {
      const model = ctx.collections.get((request.params as { collection: string }).collection);
      const max = model?.attachments?.maxBytes ?? 0;
      track(request, spool(payload, max)).then(
        (r) => {
          if (!(r instanceof ApiError)) request.rawBodySha256 = r.sha256;
          done(null, r);
        },
        (e) => done(e as Error),
      );
    });

    const modelWithAttachments = (request: FastifyRequest): CollectionModel => {
      const { collection } = request.params as { collection: string };
      const model = ctx.collections.get(collection);
      if (!model) throw notFound(`No collection named ${collection}`, { collection: 'does not exist' });
      if (!model.attachments) throw notFound(`${collection} records have no attachments`, { path: 'does not exist' });
      return model;
    };

    const methodsOf: Method[] = ['GET', 'POST'];
    const oneMethods: Method[] = ['GET', 'DELETE'];
    const contentMethods: Method[] = ['GET'];
    const recordOf = async (request: FastifyRequest, offered: Method[]) => {
      const model = modelWithAttachments(request);
      const caller = a.authorize(request, model.name, offered);
      const { id } = request.params as { id: string };
      const row = await a.records.read({ model, parentId: null }, caller, id);
      return { model, row, caller };
    };
    const resource = (model: CollectionModel, recordId: string, att: Omit<AttachmentsTable, 'data'>) => {
      const base = `${a.links.recordPath(model, recordId)}/attachments`;
      const content = a.links.link(`${base}/${att.id}/content`, `The file ${att.filename}`);
      return {
        id: att.id,
        filename: att.filename,
        content_type: att.content_type,
        size: Number(att.size),
        sha256: att.sha256,
        created_at: att.created_at,
        link: {
          self: a.links.link(`${base}/${att.id}`, att.filename),
          content: { ...content, type: att.content_type },
          collection: a.links.link(base, 'The attachments of the record'),
          parent: a.links.link(a.links.recordPath(model, recordId), `The ${model.name} record`),
        },
      };
    };

    const upload = async (request: FastifyRequest): Promise<Upload> => {
      const model = modelWithAttachments(request);
      const max = model.attachments!.maxBytes;
      if (request.isMultipart()) {
        let part;
        try {
          part = await request.file({ limits: { fileSize: max, files: 1 } });
        } catch (e) {
          return unprocessable('The multipart body cannot be read', { file: (e as Error).message });
        }
        if (!part) return unprocessable('No file in the multipart body', { file: 'is required' });
        let spooled: Spooled | ApiError;
        try {
          // Busboy stops the file at the limit and marks it truncated.
          spooled = await track(request, spool(part.file, max));
        } catch (e) {
          return unprocessable('The file cannot be read', { file: (e as Error).message });
        }
        if (spooled instanceof ApiError) return spooled;
        if (part.file.truncated) return tooLarge(max);
        return { spooled, type: part.mimetype.toLowerCase(), filename: filenameFrom(`filename="${part.filename}"`) };
      }
      const body = request.body;
      if (body instanceof ApiError) return body;
      if (!(body instanceof Spooled)) return unprocessable('A file is required', { file: 'send multipart/form-data or the file as the body' });
      const type = String(request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      return { spooled: body, type, filename: filenameFrom(request.headers['content-disposition']) };
    };

    routeMethods(
      scope,
      `${v}/:collection/:id/attachments`,
      {
        GET: async (request) => {
          const { model, row } = await recordOf(request, methodsOf);
          const rows = await listAttachmentMeta(ctx.store, model.name, row.id);
          return rows.map((r) => resource(model, row.id, r));
        },
        POST: async (request, reply) => {
          const { model, row, caller } = await recordOf(request, methodsOf);
          const file = await upload(request);
          if (file instanceof ApiError) throw file;
          const allowed = model.attachments!.types;
          if (!allowed.includes(file.type))
            throw unprocessable('This type of attachment is not accepted', { 'content-type': `must be one of ${allowed.join(', ')}` });
          if (file.spooled.size === 0) throw unprocessable('The attachment is empty', { file: 'must not be empty' });
          const bytes = new FileBytes(file.spooled.file, file.spooled.size);
          let problem: string | null;
          try {
            problem = fileProblem(file.type, bytes);
          } finally {
            bytes.close();
          }
          if (problem) throw unprocessable('The file content does not match its type', { file: `is not a valid ${file.type} file: ${problem}` });
          const att: AttachmentMeta = {
            id: newTimeOrderedId(),
            collection: model.name,
            record_id: row.id,
            filename: file.filename,
            content_type: file.type,
            size: file.spooled.size,
            sha256: file.spooled.sha256.toString('hex'),
            created_at: new Date().toISOString(),
          };
          const out = resource(model, row.id, att);
          await write(ctx.store, async (tx) => {
            await insertAttachment(tx, att, chunksOf(file.spooled));
            tx.emit({ type: 'attachment.created', collection: model.name, record_id: row.id, owner: row.owner, actor: caller.subject, data: JSON.stringify(out) });
          });
          reply.header('location', out.link.self.href);
          return reply.code(201).send(out);
        },
      },
      {},
      async (request) => void (await recordOf(request, methodsOf)),
    );

    routeMethods(
      scope,
      `${v}/:collection/:id/attachments/:attachmentId`,
      {
        GET: async (request: FastifyRequest, reply: FastifyReply) => {
          const { model, row } = await recordOf(request, oneMethods);
          const att = await findAttachment(ctx, model, row.id, request);
          // JSON metadata by default; the bytes when the client names the file's own type.
          const accept = request.headers.accept;
          if (!namesType(accept, att.content_type)) {
            if (acceptsJson(accept)) return resource(model, row.id, att);
            throw unsupportedMediaType('This attachment is offered as JSON metadata or as its own type', {
              accept: `must allow application/json or ${att.content_type}`,
            });
          }
          return sendFile(ctx, reply, att);
        },
        DELETE: async (request: FastifyRequest, reply: FastifyReply) => {
          const { model, row, caller } = await recordOf(request, oneMethods);
          const att = await findAttachment(ctx, model, row.id, request);
          const data = JSON.stringify(resource(model, row.id, att));
          await write(ctx.store, async (tx) => {
            // Deleted meanwhile by another request: that one's event describes it.
            if (await deleteAttachment(tx, att.id))
              tx.emit({ type: 'attachment.deleted', collection: model.name, record_id: row.id, owner: row.owner, actor: caller.subject, data });
          });
          return reply.code(204).send();
        },
      },
      { config: { negotiates: true } },
      async (request) => void (await recordOf(request, oneMethods)),
    );

    // The bytes whatever Accept says (links, `curl -O`, browsers send */*): link.content.
    routeMethods(
      scope,
      `${v}/:collection/:id/attachments/:attachmentId/content`,
      {
        GET: async (request: FastifyRequest, reply: FastifyReply) => {
          const { model, row } = await recordOf(request, contentMethods);
          return sendFile(ctx, reply, await findAttachment(ctx, model, row.id, request));
        },
      },
      { config: { negotiates: true } },
      async (request) => void (await recordOf(request, contentMethods)),
    );
  });
}

/**
 * The file itself, streamed chunk by chunk: its own type, its length, a download name, its sha256
 * as a strong ETag (nosniff comes from the HTTP policy).
 */
async function sendFile(ctx: AppContext, reply: FastifyReply, att: AttachmentMeta) {
  const chunks = await readAttachmentChunks(ctx.store, att.id);
  if (!chunks) throw notFound('No such attachment', { attachmentId: 'does not exist' });
  reply.header('content-disposition', contentDisposition(att.filename));
  reply.header('etag', `"${att.sha256}"`);
  reply.header('content-length', String(att.size));
  return reply.type(att.content_type).send(Readable.from(collectedAsSent(chunks), { objectMode: false }));
}

/** The chunks as they are, the dead ones collected every few MiB (body-garbage.ts). */
async function* collectedAsSent(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const passed = bodyGarbage();
  for await (const chunk of chunks) {
    yield chunk;
    passed(chunk.length);
  }
}

/**
 * `attachment; filename="…"` (RFC 6266) with a plain-ASCII name, plus `filename*=UTF-8''…`
 * (RFC 8187, formerly 5987) carrying the real name when that one is not plain ASCII.
 */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/"/g, '');
  const plain = `attachment; filename="${ascii}"`;
  if (ascii === filename) return plain;
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${plain}; filename*=UTF-8''${encoded}`;
}

async function findAttachment(ctx: AppContext, model: CollectionModel, recordId: string, request: FastifyRequest) {
  const { attachmentId } = request.params as { attachmentId: string };
  const att = await findAttachmentMeta(ctx.store, model.name, recordId, attachmentId);
  if (!att) throw notFound('No such attachment', { attachmentId: 'does not exist' });
  return att;
}
