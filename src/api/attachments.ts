import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { v7 as uuidv7 } from 'uuid';
import type { AppContext } from '../contract/context.js';
import { ApiError, notFound, unprocessable, unsupportedMediaType } from '../platform/http/errors.js';
import { acceptsJson, namesType } from '../platform/http/negotiation.js';
import { routeMethods, type Method } from '../platform/http/routes.js';
import type { AttachmentsTable } from '../platform/store/schema.js';
import { write } from '../platform/store/write-path.js';
import { deleteAttachment, findAttachmentMeta, insertAttachment, listAttachmentMeta, readAttachmentBytes, type AttachmentMeta } from './store/attachments.js';
import type { CollectionModel } from '../contract/collections.js';
import type { ResourceApi } from './resource-api.js';
import { fileProblem } from './file-types.js';

// Attachments of a record (POST /v1/<collection>/<id>/attachments, multipart or a raw body of a
// declared type). A file over maxBytes, of an undeclared type, or whose bytes are not what its
// type says (file-types.ts) is a 422; the file and its metadata are written in one statement or
// not at all.

type Upload = { bytes: Buffer; type: string; filename: string } | ApiError;
const tooLarge = (max: number) => unprocessable('The attachment is too large', { file: `must be at most ${max} bytes` });

/** Reads a raw upload, counting bytes; past the limit the rest is drained and dropped. */
function readLimited(stream: Readable, max: number): Promise<Buffer | ApiError> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        over = true;
        chunks.length = 0;
        if (size > max * 4 + 1_048_576) stream.destroy();
      } else chunks.push(chunk);
    });
    stream.on('end', () => resolve(over ? tooLarge(max) : Buffer.concat(chunks)));
    stream.on('close', () => over && resolve(tooLarge(max)));
    stream.on('error', reject);
  });
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
    // Every other body type reaches the handler as a counted stream; the handler decides.
    scope.addContentTypeParser('*', (request, payload, done) => {
      const model = ctx.collections.get((request.params as { collection: string }).collection);
      const max = model?.attachments?.maxBytes ?? 0;
      readLimited(payload, max).then(
        (r) => {
          if (Buffer.isBuffer(r)) request.rawBody = r;
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
        try {
          const bytes = await part.toBuffer();
          return { bytes, type: part.mimetype.toLowerCase(), filename: filenameFrom(`filename="${part.filename}"`) };
        } catch (e) {
          if ((e as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge(max);
          return unprocessable('The file cannot be read', { file: (e as Error).message });
        }
      }
      const body = request.body as Buffer | ApiError | undefined;
      if (body instanceof ApiError) return body;
      if (!Buffer.isBuffer(body)) return unprocessable('A file is required', { file: 'send multipart/form-data or the file as the body' });
      const type = String(request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      return { bytes: body, type, filename: filenameFrom(request.headers['content-disposition']) };
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
          if (file.bytes.length === 0) throw unprocessable('The attachment is empty', { file: 'must not be empty' });
          const problem = fileProblem(file.type, file.bytes);
          if (problem) throw unprocessable('The file content does not match its type', { file: `is not a valid ${file.type} file: ${problem}` });
          const att: AttachmentsTable = {
            id: uuidv7(),
            collection: model.name,
            record_id: row.id,
            filename: file.filename,
            content_type: file.type,
            size: file.bytes.length,
            sha256: createHash('sha256').update(file.bytes).digest('hex'),
            data: file.bytes,
            created_at: new Date().toISOString(),
          };
          const out = resource(model, row.id, att);
          await write(ctx.store, async (tx) => {
            await insertAttachment(tx, att);
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

/** The file itself: its own type, a download name, its sha256 as a strong ETag (nosniff comes from the HTTP policy). */
async function sendFile(ctx: AppContext, reply: FastifyReply, att: AttachmentMeta) {
  const bytes = await readAttachmentBytes(ctx.store, att.id);
  if (!bytes) throw notFound('No such attachment', { attachmentId: 'does not exist' });
  reply.header('content-disposition', contentDisposition(att.filename));
  reply.header('etag', `"${att.sha256}"`);
  return reply.type(att.content_type).send(bytes);
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
