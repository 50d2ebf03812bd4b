import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../contract/context.js';
import type { Caller } from '../contract/caller.js';
import { Authenticator } from './access/authenticate.js';
import { decideAccess } from './access/decide.js';
import { ApiError, badRequest, notFound } from '../platform/http/errors.js';
import { routeMethods, withHead, type Method } from '../platform/http/routes.js';
import { Links } from './links.js';
import { Records, type Address, type RecordRow } from './records.js';
import { parseListQuery, parseRecordQuery, rejectQuery } from './query.js';
import type { CollectionModel } from '../contract/collections.js';
import { Jobs } from './jobs.js';
import { registerIndexRoutes } from './index-routes.js';
import { registerAttachmentRoutes } from './attachments.js';
import { registerEventRoutes } from './events.js';
import type { ResourceApi } from './resource-api.js';
import { registerProtectedResourceMetadata } from './access/protected-resource.js';
import { guardResourceScope } from './access/guard.js';
import { registerMcpServer } from './mcp/routes.js';

// The resource API's HTTP surface. Handlers are thin: resolve the address, let the access layer
// decide, call the resource service, shape the response.

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling, once the access token is verified (null until then, or when it failed). */
    caller: Caller | null;
    /** Why the access token was refused; answered after the rate limit has counted the request. */
    authFailure: ApiError | null;
  }
}

type Params = { collection: string; id?: string; child?: string; childId?: string };


export { quotaRejectionObservers } from './access/guard.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const COLLECTION_METHODS: Method[] = ['GET', 'POST'];
const RECORD_METHODS: Method[] = ['GET', 'PUT', 'PATCH', 'DELETE'];

/** `openapiPaths`: operations served beside the resource API (the admin API) for its OpenAPI document. */
export async function registerResourceApi(app: FastifyInstance, ctx: AppContext, openapiPaths?: () => Record<string, unknown>): Promise<void> {
  const { config } = ctx;
  const links = new Links(() => ctx.config.publicUrl, config.api.version, ctx.collections);
  const records = new Records(ctx, links);
  const jobs = new Jobs(ctx, records, app.log);
  const authenticator = new Authenticator(ctx);
  const v = `/v${config.api.version}`;

  await registerIndexRoutes(app, ctx, links, openapiPaths);
  registerProtectedResourceMetadata(app, ctx);
  // The MCP server: a second face of the same collections, records and access rules (src/api/mcp/).
  await registerMcpServer(app, ctx, records);

  await app.register(async (api) => {
    await guardResourceScope(api, ctx, authenticator);

    const resourceApi: ResourceApi = {
      records,
      links,
      jobs,
      authorize(request, collection, offered) {
        const caller = request.caller!;
        decideAccess(caller, collection, request.method, withHead(offered));
        return caller;
      },
      address(request, offered) {
        const p = request.params as Params;
        const top = modelOr404(ctx, p.collection);
        let address: Address = { model: top, parentId: null };
        if (p.child !== undefined) {
          const child = ctx.collections.get(p.child);
          if (!child || child.parent?.collection !== top.name) throw notFound(`${top.name} has no child collection ${p.child}`, { path: 'does not exist' });
          address = { model: child, parentId: p.id! };
        }
        const caller = resourceApi.authorize(request, address.model.name, offered);
        return { address, caller };
      },
    };

    registerEventRoutes(api, v, ctx, authenticator, links);
    registerCollectionRoutes(api, v, ctx, resourceApi);
    registerJobRoutes(api, v, resourceApi);
    await registerAttachmentRoutes(api, v, ctx, resourceApi);
  });

  jobs.start();
  app.addHook('onClose', async () => jobs.stop());
}

function modelOr404(ctx: AppContext, name: string): CollectionModel {
  const model = ctx.collections.get(name);
  if (!model) throw notFound(`No collection named ${name}`, { collection: 'does not exist' });
  return model;
}

function sendRecord(reply: FastifyReply, api: ResourceApi, model: CollectionModel, row: RecordRow, status = 200, body = api.records.resourceJson(model, row)) {
  reply.header('etag', api.records.etag(row));
  reply.header('last-modified', new Date(row.updated_at).toUTCString());
  return reply.code(status).type(JSON_TYPE).send(body);
}

function registerCollectionRoutes(api: FastifyInstance, v: string, ctx: AppContext, a: ResourceApi): void {
  const list = async (request: FastifyRequest, reply: FastifyReply) => {
    const { address, caller } = a.address(request, COLLECTION_METHODS);
    const fixed = address.parentId !== null && address.model.parent ? [address.model.parent.field] : [];
    const query = parseListQuery(address.model, request.query as Record<string, unknown>, ctx.config.api, fixed);
    const { rows, total, next, prev } = await a.records.list(address, caller, query);
    const body = await a.records.renderList(address, caller, query, rows);
    if (total !== null) reply.header('x-total-count', String(total));
    const base = a.links.url(a.links.collectionPath(address.model, address.parentId));
    reply.header('link', a.links.paging(base, request.query as Record<string, unknown>, query, { count: rows.length, total, next, prev }));
    return reply.type(JSON_TYPE).send(body);
  };

  const create = async (request: FastifyRequest, reply: FastifyReply) => {
    const { address, caller } = a.address(request, COLLECTION_METHODS);
    if (Array.isArray(request.body)) {
      const job = await a.jobs.submit(address, caller, request.body);
      reply.header('location', a.links.url(`/jobs/${job.id}`));
      return reply.code(202).send(a.jobs.toResource(job));
    }
    const key = idempotencyKey(request);
    const { id, row, replayed } = await a.records.create(address, caller, request.body, key);
    reply.header('location', a.links.url(a.links.recordPath(address.model, id)));
    // 303 (docs/api.md, "Idempotency-Key → 303"): a repeat points at the record created the first time (its URL answers 410 if deleted since).
    if (row) return sendRecord(reply, a, address.model, row, replayed ? 303 : 201);
    return reply.code(303).send({ id, link: { self: a.links.link(a.links.recordPath(address.model, id), 'The record created first') } });
  };

  const read = async (request: FastifyRequest, reply: FastifyReply) => {
    const { address, caller } = a.address(request, RECORD_METHODS);
    const view = parseRecordQuery(address.model, request.query as Record<string, unknown>);
    const row = await a.records.read(address, caller, recordId(request));
    return sendRecord(reply, a, address.model, row, 200, await a.records.renderRecord(address, caller, view, row));
  };

  const update = (mode: 'replace' | 'merge') => async (request: FastifyRequest, reply: FastifyReply) => {
    const { address, caller } = a.address(request, RECORD_METHODS);
    rejectQuery(request.query as Record<string, unknown>);
    const row = await a.records.update(address, caller, recordId(request), request.body, mode, ifMatch(request));
    return sendRecord(reply, a, address.model, row);
  };

  const remove = async (request: FastifyRequest, reply: FastifyReply) => {
    const { address, caller } = a.address(request, RECORD_METHODS);
    rejectQuery(request.query as Record<string, unknown>);
    await a.records.remove(address, caller, recordId(request), ifMatch(request));
    return reply.code(204).send();
  };

  const collectionHandlers = { GET: list, POST: create };
  const recordHandlers = { GET: read, PUT: update('replace'), PATCH: update('merge'), DELETE: remove };
  const onCollection = (request: FastifyRequest) => void a.address(request, COLLECTION_METHODS);
  const onRecord = (request: FastifyRequest) => void a.address(request, RECORD_METHODS);
  routeMethods(api, `${v}/:collection`, collectionHandlers, {}, onCollection);
  routeMethods(api, `${v}/:collection/:id`, recordHandlers, {}, onRecord);
  routeMethods(api, `${v}/:collection/:id/:child`, collectionHandlers, {}, onCollection);
  routeMethods(api, `${v}/:collection/:id/:child/:childId`, recordHandlers, {}, onRecord);
}

/** A bulk POST's job (docs/api.md, "Bulk POST → 202 and jobs"): its submitter follows its progress. */
function registerJobRoutes(api: FastifyInstance, v: string, a: ResourceApi): void {
  routeMethods(api, `${v}/jobs/:id`, {
    GET: async (request: FastifyRequest) => a.jobs.read(request.caller!, (request.params as { id: string }).id),
  });
}

function recordId(request: FastifyRequest): string {
  const p = request.params as Params;
  return p.childId ?? p.id!;
}

function ifMatch(request: FastifyRequest): string | undefined {
  const h = request.headers['if-match'];
  return Array.isArray(h) ? h.join(', ') : h;
}

function idempotencyKey(request: FastifyRequest): string | undefined {
  const h = request.headers['idempotency-key'];
  if (h === undefined) return undefined;
  const key = Array.isArray(h) ? h.join(',') : h;
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) throw badRequest('Invalid Idempotency-Key', { 'idempotency-key': 'must be 1 to 255 visible ASCII characters' });
  return key;
}
