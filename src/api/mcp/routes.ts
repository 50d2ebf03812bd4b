import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListResourceTemplatesRequestSchema, ListResourcesRequestSchema, ListToolsRequestSchema, McpError, ReadResourceRequestSchema, SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { AppContext } from '../../contract/context.js';
import type { Caller } from '../../contract/caller.js';
import { resourceNamed } from '../../contract/resources.js';
import { scopeUniverse } from '../../contract/scopes.js';
import { DPOP_ALGS } from '../../platform/crypto/dpop-proof.js';
import { toApiError } from '../../platform/http/error-handler.js';
import { decodeUtf8 } from '../../platform/http/body-parsers.js';
import { routeMethods } from '../../platform/http/routes.js';
import { Authenticator } from '../access/authenticate.js';
import { guardResourceScope } from '../access/guard.js';
import { registerResourceMetadata } from '../access/protected-resource.js';
import type { Records } from '../records.js';
import { ToolCalls, toolResult } from './calls.js';
import { plainToolCall, toolCallFailure, toolCallResponse } from './fast-path.js';
import { RecordResources, rpcError } from './resources.js';
import { catalogueOf, toolsFor } from './tools.js';
import { sessionOf, sessionToAnswer, type McpSession } from './sessions.js';
import { sessionStreamRoute } from './stream.js';
import { Subscriptions } from './subscriptions.js';

// `{publicUrl}/mcp`: the Model Context Protocol server (docs/mcp.md), a second face of the resource
// server over the same collections, records and access rules as /v1. Streamable HTTP transport of
// the official SDK, stateless (docs/decisions.md): every POST is answered on its own — a server and
// a transport made for it, a JSON response, nothing kept — so any instance answers any request. A
// session (sessions.ts: an id that verifies itself, answered to initialize) only lets a client's
// resource subscriptions (subscriptions.ts) meet its GET stream (stream.ts) on whichever instance.
// Behind the same gate as /v1 (access/guard.ts) with a token whose audience is /mcp.
// A plain `tools/call`, the bulk of an agent's traffic, skips the SDK (fast-path.ts).

/** A body that is not JSON: handed to the SDK as text, which answers its JSON-RPC parse error. */
class Unparsed {
  constructor(readonly text: string) {}
}

export async function registerMcpServer(app: FastifyInstance, ctx: AppContext, records: Records): Promise<void> {
  const resource = resourceNamed(ctx.config, 'mcp');
  const authenticator = new Authenticator(ctx, resource);
  registerResourceMetadata(app, ctx, resource, () => ({
    scopes_supported: scopeUniverse(ctx.collections),
    bearer_methods_supported: ['header'],
    resource_name: 'gatehouse MCP server',
    token_types_supported: ['bearer', 'mac'],
    dpop_signing_alg_values_supported: [...DPOP_ALGS],
    dpop_bound_access_tokens_required: false,
  }));

  await app.register(async (scope) => {
    await guardResourceScope(scope, ctx, authenticator);
    // JSON-RPC's own parse error for a malformed body (the SDK's), not the API's 400.
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
      request.rawBody = body;
      let text: string;
      try {
        text = decodeUtf8(body);
      } catch {
        return done(null, new Unparsed(''));
      }
      try {
        done(null, JSON.parse(text, (key, value) => (key === '__proto__' ? undefined : value)));
      } catch {
        done(null, new Unparsed(text));
      }
    });
    const handle = async (request: FastifyRequest, reply: FastifyReply) => {
      const caller = request.caller!;
      // The session it names, if any: 404 for one forged, expired or another caller's, on either path.
      const session = await sessionOf(ctx, request);
      const call = plainToolCall(request);
      if (call) {
        const { calls } = servicesOf(ctx, records);
        let answer: string;
        try {
          answer = toolCallResponse(call.id, await calls.call(caller, call.name, call.arguments, request.log));
        } catch (e) {
          answer = toolCallFailure(call.id, e);
        }
        return reply.code(200).header('content-type', 'application/json').send(answer);
      }
      const server = mcpServer(ctx, records, caller, request.log, session);
      // The SDK's transport keeps no session (sessions.ts has them); answers as JSON rather than a stream (every answer is ready at once).
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      // Not closed after: the answer is sent once every handler has answered, so nothing is pending,
      // and closing (the SDK rejects pending calls with a new McpError, stack and all) was 15% of a
      // call's CPU (docs/benchmarks.md). Server and transport are garbage with the request.
      const url = `${ctx.config.publicUrl}/mcp`;
      const response =
        request.body instanceof Unparsed
          ? await transport.handleRequest(new Request(url, { method: 'POST', headers: fetchHeaders(request.headers), body: request.body.text }))
          : await transport.handleRequest(parsedRequest(url, request.headers), { parsedBody: request.body });
      reply.code(response.status);
      response.headers.forEach((value, key) => void reply.header(key, value));
      const issued = response.ok ? sessionToAnswer(ctx, caller, request.body) : null;
      if (issued) reply.header('mcp-session-id', await issued);
      const text = await response.text();
      return reply.send(text === '' ? undefined : text);
    };
    // GET is a session's stream (stream.ts; 405 without a session); DELETE is 405: a session ends
    // at its expiry (docs/decisions.md). The SDK negotiates (a POST must accept JSON and event streams: 406).
    routeMethods(scope, '/mcp', { POST: handle, GET: sessionStreamRoute(ctx, authenticator) }, { config: { negotiates: true } });
  });
}

type NodeHeaders = FastifyRequest['headers'];
const headerValue = (v: string | string[] | undefined): string | null => (v === undefined ? null : Array.isArray(v) ? v.join(', ') : v);

function fetchHeaders(headers: NodeHeaders): Headers {
  const out = new Headers();
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out.set(k, headerValue(v)!);
  return out;
}

/**
 * What the SDK's transport reads of a POST whose body it is given parsed: its method, URL and
 * headers (`get`, `entries`). A Fetch Request with its Headers cost about a tenth of a tool call's
 * CPU (docs/benchmarks.md); test/mcp-*.test.ts run the real SDK client against this one.
 */
function parsedRequest(url: string, headers: NodeHeaders): Request {
  const view = {
    get: (name: string) => headerValue(headers[name.toLowerCase()]),
    entries: () => Object.entries(headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, headerValue(v)!] as [string, string]])),
  };
  return { method: 'POST', url, headers: view, body: null } as unknown as Request;
}

type Services = { calls: ToolCalls; resources: RecordResources; subscriptions: Subscriptions };

const tools = new WeakMap<Records, Services>();
/**
 * The SDK's JSON Schema validator (for elicitation, which this server never asks for): one for the
 * process. Left to the SDK, every per-request server makes its own Ajv — most of a request's CPU.
 */
let validator: AjvJsonSchemaValidator | undefined;

/** The tool calls, record resources and subscriptions over these records, made again when a config reload changes the collections. */
function servicesOf(ctx: AppContext, records: Records): Services {
  let made = tools.get(records);
  const catalogue = catalogueOf(ctx.collections, ctx.config.api);
  if (!made || made.calls.catalogue !== catalogue) {
    const resources = new RecordResources(ctx, records);
    tools.set(records, (made = { calls: new ToolCalls(ctx, records, catalogue), resources, subscriptions: new Subscriptions(ctx, resources) }));
  }
  return made;
}

/** The MCP server of one request, for its caller: the tools its scopes allow, and the records it may read as resources. */
function mcpServer(ctx: AppContext, records: Records, caller: Caller, log: FastifyBaseLogger, session: McpSession | null): Server {
  const { calls, resources, subscriptions } = servicesOf(ctx, records);
  const catalogue = calls.catalogue;
  const server = new Server(
    { name: 'gatehouse', version: '1' },
    {
      capabilities: { tools: { listChanged: false }, resources: { subscribe: true } },
      jsonSchemaValidator: (validator ??= new AjvJsonSchemaValidator()),
      instructions: 'The collections of this gatehouse deployment, as tools: list_, get_, create_, update_ and delete_<collection>, as far as the access token allows.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolsFor(catalogue, caller) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => toolResult(await calls.call(caller, request.params.name, request.params.arguments, log)));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: resources.templates(caller) }));
  server.setRequestHandler(ListResourcesRequestSchema, (request) => answered(log, resources.list(caller, request.params?.cursor)));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => answered(log, resources.read(caller, request.params.uri)));
  server.setRequestHandler(SubscribeRequestSchema, (request) => answered(log, subscriptions.subscribe(caller, session, request.params.uri)));
  server.setRequestHandler(UnsubscribeRequestSchema, (request) => answered(log, subscriptions.unsubscribe(session, request.params.uri)));
  return server;
}

/**
 * A resource method's answer. The SDK answers a handler's error with its message: a failure that
 * is not the protocol's (a database error) is the API's if it is known (503), else logged and
 * answered as JSON-RPC's internal error, its message kept out as calls.ts keeps a tool's.
 */
async function answered<T>(log: FastifyBaseLogger, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (e) {
    if (e instanceof McpError) throw e;
    const known = toApiError(e);
    if (known) throw rpcError(known);
    log.error({ err: e }, 'unexpected failure');
    throw new McpError(ErrorCode.InternalError, 'Internal error');
  }
}
