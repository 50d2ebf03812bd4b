import type { AppContext } from '../../contract/context.js';
import type { Caller } from '../../contract/caller.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import { ApiError, badRequest, forbidden, notFound } from '../../platform/http/errors.js';
import { toApiError } from '../../platform/http/error-handler.js';
import { decideAccess } from '../access/decide.js';
import { parseListQuery } from '../query.js';
import type { Address, Records } from '../records.js';
import type { Catalogue, Tool, ToolTarget } from './tools.js';

// What a tool call does: the same access decision (decide.ts) and the same resource service
// (records.ts: ownership, validation, the one write path, events with the caller as actor) as the
// /v1 request it stands for. A refusal is a tool error (`isError`) that says what /v1 would have:
// the status, the reason and the per-field detail, the missing scope named.

/** A tool's answer (MCP CallToolResult): the JSON as text, and as structuredContent. */
export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * What a tool call came to: the JSON text of its answer (a record, a page, a deletion), as
 * `Records` wrote it, or a tool error. It becomes a CallToolResult in one of two ways — an object
 * for the SDK (`toolResult`), or JSON text for the fast path (`toolResultJson`, fast-path.ts) —
 * which test/mcp-fast-path.test.ts holds equal.
 */
export type ToolOutcome = { json: string } | { error: ToolResult };

type Args = Record<string, unknown>;

const COLLECTION_METHODS = ['GET', 'HEAD', 'POST'];
const RECORD_METHODS = ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'];
const METHOD = { list: 'GET', get: 'GET', create: 'POST', update: 'PATCH', delete: 'DELETE' } as const;

/** An error the caller should read: what /v1 would have answered, as a tool error. */
export function toolError(e: ApiError): ToolResult {
  const body = { status: e.status, error: e.message, detail: e.detail };
  return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true };
}

/** The CallToolResult of an outcome, as an object: a success is the JSON as text and as structuredContent (the spec asks for both). */
export function toolResult(outcome: ToolOutcome): ToolResult {
  if ('error' in outcome) return outcome.error;
  return { content: [{ type: 'text', text: outcome.json }], structuredContent: JSON.parse(outcome.json) as Record<string, unknown> };
}

/** The same CallToolResult as JSON text, the record's JSON written in as it is rather than parsed and written again. */
export function toolResultJson(outcome: ToolOutcome): string {
  if ('error' in outcome) return JSON.stringify(outcome.error);
  return `{"content":[{"type":"text","text":${JSON.stringify(outcome.json)}}],"structuredContent":${outcome.json}}`;
}

export class ToolCalls {
  constructor(
    private readonly ctx: AppContext,
    private readonly records: Records,
    readonly catalogue: Catalogue,
  ) {}

  /**
   * Runs a tool for the caller; every refusal or bad argument is a tool error, nothing changed, as
   * is an unavailable database (503). Anything unexpected is logged and answered as JSON-RPC's
   * internal error, its message kept out of the answer as /v1's 500s keep it.
   */
  async call(caller: Caller, name: string, args: Args | undefined, log: FastifyBaseLogger): Promise<ToolOutcome> {
    try {
      const tool = this.catalogue.tools.get(name);
      if (!tool) throw notFound(`No tool named ${name}`, { name: 'is not a tool of this server (tools/list shows those this token may use)' });
      const scope = this.catalogue.scopeOf(tool);
      if (!caller.scopes.has(scope)) throw forbidden(`This token does not allow ${name}`, { scope: `requires ${scope}` });
      decideAccess(caller, tool.model.name, METHOD[tool.verb], tool.verb === 'list' || tool.verb === 'create' ? COLLECTION_METHODS : RECORD_METHODS);
      return await this.run(caller, tool, checkArguments(tool, args ?? {}));
    } catch (e) {
      const known = e instanceof ApiError ? e : toApiError(e);
      if (known) return { error: toolError(known) };
      log.error({ err: e, tool: name }, 'unexpected failure');
      throw new McpError(ErrorCode.InternalError, 'Internal error');
    }
  }

  private async run(caller: Caller, tool: Tool & ToolTarget, args: Args): Promise<ToolOutcome> {
    const { model } = tool;
    const address: Address = { model, parentId: null };
    const records = this.records;
    switch (tool.verb) {
      case 'list': {
        const query = parseListQuery(model, listQuery(args), this.ctx.config.api);
        const { rows, total, next } = await records.list(address, caller, query);
        return { json: `{"records":${await records.renderList(address, caller, query, rows)},"next":${JSON.stringify(next)},"total":${JSON.stringify(total)}}` };
      }
      case 'get': {
        return { json: records.resourceJson(model, await records.read(address, caller, args.id as string)) };
      }
      case 'create': {
        const { row } = await records.create(address, caller, args);
        return { json: records.resourceJson(model, row!) };
      }
      case 'update': {
        const { id, ...patch } = args;
        return { json: records.resourceJson(model, await records.update(address, caller, id as string, patch, 'merge', undefined)) };
      }
      case 'delete':
        await records.remove(address, caller, args.id as string, undefined);
        return { json: JSON.stringify({ id: args.id, deleted: true }) };
    }
  }
}

/** The arguments a tool's input schema names, `id` a non-empty string where required; anything else is a 400 naming it. */
function checkArguments(tool: Tool, args: Args): Args {
  const { properties, required = [] } = tool.inputSchema;
  const detail: Record<string, string> = {};
  for (const key of Object.keys(args)) if (!Object.hasOwn(properties, key)) detail[key] = `is not an argument of ${tool.name} (it takes ${Object.keys(properties).join(', ')})`;
  for (const key of required) if (args[key] === undefined) detail[key] = 'is required';
  if (required.includes('id') && args.id !== undefined && (typeof args.id !== 'string' || args.id === '')) detail.id = 'must be a non-empty string';
  if (Object.keys(detail).length) throw badRequest(`Invalid arguments for ${tool.name}`, detail);
  return args;
}

const PAGING = ['q', 'sortby', 'order', 'limit', 'after'];

/** list_<collection>'s arguments as the query string of GET /v1/<collection> (query.ts parses and checks them as it does there). */
function listQuery(args: Args): Record<string, string> {
  const q: Record<string, string> = {};
  const scalar = (key: string, v: unknown): string => {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
    throw badRequest('Invalid filter value', { [key]: 'must be a string, number or boolean' });
  };
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined) continue;
    if (PAGING.includes(key)) {
      q[key] = scalar(key, value);
    } else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const ops = Object.entries(value as Args);
      if (ops.length === 0) throw badRequest('Invalid filter', { [key]: 'an object of operators must name at least one' });
      for (const [op, v] of ops) {
        const name = op === 'eq' ? key : `${key}[${op}]`;
        q[name] = Array.isArray(v) ? v.map((x) => scalar(name, x)).join(',') : scalar(name, v);
      }
    } else {
      q[key] = scalar(key, value);
    }
  }
  return q;
}
