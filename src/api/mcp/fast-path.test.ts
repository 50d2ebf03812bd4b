import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyRequest } from 'fastify';
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { plainToolCall, toolCallFailure, toolCallResponse } from './fast-path.js';

// Which requests the fast path takes (test/mcp-fast-path.test.ts holds its answers equal to the
// SDK's over HTTP): a plain tools/call only; everything else is the SDK's.

const ACCEPT = 'application/json, text/event-stream';
const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_zoos', arguments: { id: 'z1' } } };
const JSON_TYPE = { 'content-type': 'application/json' };
const req = (body: unknown, headers: Record<string, unknown> = { ...JSON_TYPE, accept: ACCEPT, 'mcp-protocol-version': '2025-06-18' }) => ({ headers, body }) as unknown as FastifyRequest;

test('a plain tools/call is taken: string or integer ids, with arguments or none, with or without a protocol version', () => {
  assert.deepEqual(plainToolCall(req(call)), { id: 1, name: 'get_zoos', arguments: { id: 'z1' } });
  assert.deepEqual(plainToolCall(req({ ...call, id: 'a' })), { id: 'a', name: 'get_zoos', arguments: { id: 'z1' } });
  assert.deepEqual(plainToolCall(req({ ...call, params: { name: 'list_zoos' } })), { id: 1, name: 'list_zoos', arguments: undefined });
  assert.ok(plainToolCall(req(call, { ...JSON_TYPE, accept: ACCEPT })));
  assert.ok(plainToolCall(req(call, { 'content-type': 'application/json; charset=utf-8', accept: 'text/event-stream, application/json;q=0.9', 'mcp-protocol-version': '2025-03-26' })));
});

test('anything else is left to the SDK', () => {
  const others: [string, FastifyRequest][] = [
    ['a batch', req([call])],
    ['another method', req({ ...call, method: 'tools/list' })],
    ['a notification', req({ jsonrpc: '2.0', method: 'notifications/initialized' })],
    ['no id', req({ ...call, id: undefined })],
    ['a fractional id', req({ ...call, id: 1.5 })],
    ['a null id', req({ ...call, id: null })],
    ['an id past the safe integers', req({ ...call, id: 2 ** 53 })],
    ['a huge id', req({ ...call, id: 1e300 })],
    ['another JSON-RPC version', req({ ...call, jsonrpc: '1.0' })],
    ['an unknown member', req({ ...call, extra: true })],
    ['_meta', req({ ...call, params: { ...call.params, _meta: {} } })],
    ['a task', req({ ...call, params: { ...call.params, task: { ttl: 1 } } })],
    ['arguments as an array', req({ ...call, params: { name: 'get_zoos', arguments: [] } })],
    ['arguments null', req({ ...call, params: { name: 'get_zoos', arguments: null } })],
    ['no name', req({ ...call, params: { arguments: {} } })],
    ['no params', req({ ...call, params: undefined })],
    ['a body that is not JSON', req({ text: '{' })],
    // Fastify's parser takes this one as JSON; the SDK's transport answers it 415.
    ['a content type the SDK refuses', req(call, { 'content-type': 'application/json; a=b, c/d', accept: ACCEPT })],
    ['no content type', req(call, { accept: ACCEPT })],
    ['no event streams accepted', req(call, { ...JSON_TYPE, accept: 'application/json' })],
    ['no Accept', req(call, {})],
    ['an unknown protocol version', req(call, { ...JSON_TYPE, accept: ACCEPT, 'mcp-protocol-version': '1999-01-01' })],
    ['two protocol versions', req(call, { ...JSON_TYPE, accept: ACCEPT, 'mcp-protocol-version': ['2025-06-18', '2025-06-18'] })],
  ];
  for (const [what, request] of others) assert.equal(plainToolCall(request), null, what);
});

test('the answers are JSON-RPC responses as the SDK writes them', () => {
  const ok = JSON.parse(toolCallResponse('x', { json: '{"id":"z1","name":"Zoo \\u2028"}' }));
  assert.deepEqual(ok, { result: { content: [{ type: 'text', text: '{"id":"z1","name":"Zoo \\u2028"}' }], structuredContent: { id: 'z1', name: 'Zoo \u2028' } }, jsonrpc: '2.0', id: 'x' });
  const refused = JSON.parse(toolCallResponse(2, { error: { content: [{ type: 'text', text: '{"status":403}' }], isError: true } }));
  assert.deepEqual(refused.result, { content: [{ type: 'text', text: '{"status":403}' }], isError: true });
  assert.deepEqual(JSON.parse(toolCallFailure(3, new McpError(ErrorCode.InternalError, 'Internal error'))), { jsonrpc: '2.0', id: 3, error: { code: -32603, message: 'MCP error -32603: Internal error' } });
});
