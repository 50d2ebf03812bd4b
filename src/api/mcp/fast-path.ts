import { ErrorCode, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { FastifyRequest } from 'fastify';
import { toolResultJson, type ToolOutcome } from './calls.js';

// The fast path of `POST /mcp` (docs/mcp.md#stateless, docs/decisions.md): a single, well-formed
// `tools/call` — what an agent sends most — answered without the SDK's per-request server and
// transport, which cost five times the tool itself (docs/benchmarks.md). It answers only what it is
// sure the SDK would answer the same way: a request it does not recognise to the letter (a batch,
// a notification, another method, `_meta`, a task, an odd header) goes to the SDK, which also owns
// every protocol error. The tool runs through the same `ToolCalls.call` either way;
// test/mcp-fast-path.test.ts sends each call both ways and holds the answers equal.

/** A `tools/call` the fast path may answer. */
export interface PlainToolCall {
  id: string | number;
  name: string;
  arguments: Record<string, unknown> | undefined;
}

const REQUEST_KEYS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAMS_KEYS: ReadonlySet<string> = new Set(['name', 'arguments']);
const VERSIONS: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS;

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const onlyKeys = (o: Record<string, unknown>, allowed: ReadonlySet<string>): boolean => {
  for (const key in o) if (!allowed.has(key)) return false;
  return true;
};

/**
 * The request as a plain tool call, or null for the SDK: the headers the SDK's transport checks
 * (Content-Type JSON, Accept naming JSON and event streams, a supported Mcp-Protocol-Version or none) and the exact
 * shape of a JSON-RPC request (strict, as the SDK's schema) for `tools/call` with a name and an
 * object of arguments or none.
 */
export function plainToolCall(request: FastifyRequest): PlainToolCall | null {
  const { accept, 'content-type': type, 'mcp-protocol-version': version } = request.headers;
  // The transport's own Content-Type test: Fastify's parser takes as JSON some types it refuses (415).
  if (!isJsonContentType(type)) return null;
  if (typeof accept !== 'string' || !accept.includes('application/json') || !accept.includes('text/event-stream')) return null;
  if (version !== undefined && (typeof version !== 'string' || !VERSIONS.includes(version))) return null;
  const body = request.body;
  if (!isPlainObject(body) || !onlyKeys(body, REQUEST_KEYS) || body.jsonrpc !== '2.0' || body.method !== 'tools/call') return null;
  const { id, params } = body;
  // A safe integer, as the SDK's schema (zod's int) takes it: past 2^53 it refuses the request, so must this.
  if (!(typeof id === 'string' || Number.isSafeInteger(id))) return null;
  if (!isPlainObject(params) || !onlyKeys(params, PARAMS_KEYS) || typeof params.name !== 'string') return null;
  const args = params.arguments;
  if (args !== undefined && !isPlainObject(args)) return null;
  return { id: id as string | number, name: params.name, arguments: args };
}

/** The JSON-RPC response to a tool call, as the SDK's protocol writes it (`result`, `jsonrpc`, `id`). */
export function toolCallResponse(id: string | number, outcome: ToolOutcome): string {
  return `{"result":${toolResultJson(outcome)},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;
}

/** The JSON-RPC error response to a tool call that failed unexpectedly (calls.ts throws an McpError), as the SDK's protocol writes it. */
export function toolCallFailure(id: string | number, error: unknown): string {
  const e = error as { code?: unknown; message?: string; data?: unknown };
  const code = Number.isSafeInteger(e.code) ? e.code : ErrorCode.InternalError;
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message: e.message ?? 'Internal error', ...(e.data !== undefined && { data: e.data }) } });
}
