import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { AppContext } from '../../contract/context.js';
import type { Caller } from '../../contract/caller.js';
import { ApiError, badRequest, notFound } from '../../platform/http/errors.js';
import { scopeName } from '../../contract/scope-name.js';
import { decideAccess } from '../access/decide.js';
import { parseListQuery } from '../query.js';
import type { Records } from '../records.js';
import type { CollectionModel } from '../../contract/collections.js';
import type { RecordRow } from '../store/records.js';

// Records as MCP resources (docs/mcp.md): `gatehouse://<collection>/<id>`, readable under
// <collection>:read through the same access decision and resource service as GET /v1/<collection>/<id>.

const SCHEME = 'gatehouse://';
const MIME = 'application/json';
const RECORD_METHODS = ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'];
/** A resource's error as JSON-RPC: "not found" (-32002) for a missing or deleted record, invalid params otherwise. */
export function rpcError(e: ApiError): McpError {
  const detail = Object.entries(e.detail).map(([k, v]) => `${k}: ${v}`).join('; ');
  return new McpError(e.status === 404 || e.status === 410 ? -32002 : ErrorCode.InvalidParams, `${e.status} ${e.message}${detail ? ` (${detail})` : ''}`);
}

const asRpc = (e: unknown): unknown => (e instanceof ApiError ? rpcError(e) : e);

export class RecordResources {
  constructor(
    private readonly ctx: AppContext,
    private readonly records: Records,
  ) {}

  private readable(caller: Caller) {
    return [...this.ctx.collections.values()].filter((m) => caller.scopes.has(scopeName(m.name, 'read')));
  }

  templates(caller: Caller) {
    return this.readable(caller).map((m) => ({
      uriTemplate: `${SCHEME}${m.name}/{id}`,
      name: m.name,
      title: m.title,
      description: m.description ?? `A ${m.name} record`,
      mimeType: MIME,
    }));
  }

  /** The first page (api.defaultLimit, newest first) of each collection the caller may read. */
  async list(caller: Caller, _cursor: string | undefined) {
    const resources = [];
    for (const model of this.readable(caller)) {
      const query = parseListQuery(model, { sortby: 'created_at', order: 'desc' }, this.ctx.config.api);
      const { rows } = await this.records.list({ model, parentId: null }, caller, query);
      for (const row of rows) resources.push({ uri: `${SCHEME}${model.name}/${row.id}`, name: `${model.name}/${row.id}`, mimeType: MIME });
    }
    return { resources };
  }

  /** A record URI's collection and id: invalid params for anything else, not found for an unknown collection. */
  address(uri: string): { model: CollectionModel; id: string } {
    try {
      const m = /^gatehouse:\/\/([a-z][a-z0-9_]*)\/([^/?#]+)$/.exec(uri);
      if (!m) throw badRequest('Not a record URI', { uri: `must be ${SCHEME}<collection>/<id>` });
      const model = this.ctx.collections.get(m[1]);
      if (!model) throw notFound(`No collection named ${m[1]}`, { uri: 'names no collection' });
      let id: string;
      try {
        id = decodeURIComponent(m[2]);
      } catch {
        throw badRequest('Not a record URI', { uri: 'has a malformed escape' });
      }
      return { model, id };
    } catch (e) {
      throw asRpc(e);
    }
  }

  /** The record a URI names, if this caller may read it: the refusals of GET /v1/<collection>/<id> (scope, ownership, missing, deleted). */
  async record(caller: Caller, uri: string): Promise<{ model: CollectionModel; row: RecordRow }> {
    const { model, id } = this.address(uri);
    try {
      decideAccess(caller, model.name, 'GET', RECORD_METHODS);
      return { model, row: await this.records.read({ model, parentId: null }, caller, id) };
    } catch (e) {
      throw asRpc(e);
    }
  }

  async read(caller: Caller, uri: string) {
    const { model, row } = await this.record(caller, uri);
    return { contents: [{ uri, mimeType: MIME, text: this.records.resourceJson(model, row) }] };
  }
}
