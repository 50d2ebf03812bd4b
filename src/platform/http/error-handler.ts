import type { FastifyInstance, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { ApiError, serviceUnavailable } from './errors.js';
import { isDatabaseUnavailable, isUnstorableText } from '../store/unavailable.js';
import { HSTS } from './headers.js';
import { closeIfBodyUnread } from './unread-body.js';

// The single place where an error becomes a response: `{ error, detail }` as JSON for every
// status ≥ 400, whatever threw it (a handler, Fastify, the body parser, or the HTTP parser).

const FASTIFY_ERRORS: Record<string, (e: FastifyError) => ApiError> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new ApiError(415, 'Unsupported request body type', { 'content-type': 'must be application/json' }),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new ApiError(413, 'Request body too large', { body: 'exceeds the size limit' }),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new ApiError(400, 'Empty JSON body', { body: 'must not be empty' }),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new ApiError(400, 'Malformed JSON body', { body: 'is not valid JSON' }),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    new ApiError(400, 'Content-Length does not match the body', { 'content-length': 'does not match the body' }),
  FST_ERR_BAD_URL: () => new ApiError(400, 'Malformed URL', { url: 'is not a valid URL' }),
  FST_ERR_MAX_PARAM_LENGTH: () => new ApiError(414, 'URL too long', { url: 'a path segment is too long' }),
  FST_ERR_ASYNC_CONSTRAINT: () => new ApiError(400, 'Bad request'),
};

/** Seconds a client waits before retrying when the database is away (a restart takes a few). */
const DATABASE_RETRY_AFTER = 5;

export function toApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  const fe = err as FastifyError;
  const known = typeof fe?.code === 'string' && Object.hasOwn(FASTIFY_ERRORS, fe.code) ? FASTIFY_ERRORS[fe.code] : undefined;
  if (known) return known(fe);
  if (isDatabaseUnavailable(err)) return serviceUnavailable(DATABASE_RETRY_AFTER, 'The database is unavailable, retry shortly', { database: 'unavailable' });
  if (isUnstorableText(err)) return new ApiError(400, 'Text the database cannot store', { text: 'contains a NUL character (U+0000), which PostgreSQL cannot store' });
  if (fe?.validation) {
    // Null prototype: a field named `__proto__` is named in the answer like any other.
    const detail: Record<string, string> = Object.create(null);
    for (const v of fe.validation) {
      const field = (v.instancePath || '').replace(/^\//, '').replace(/\//g, '.') || String((v.params as any)?.missingProperty ?? 'body');
      detail[field] = v.message ?? 'is invalid';
    }
    return new ApiError(400, 'Invalid request', detail);
  }
  const status = fe?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500)
    return new ApiError(status, STATUS_CODES[status] ?? 'Bad request');
  return null;
}

/**
 * Where a person is looking (the authorization server's pages), an error may be a styled page:
 * returns the reply when it answered, null to answer with the JSON body. Set by the composition root.
 */
export type HtmlErrorPage = (reply: FastifyReply, err: ApiError) => FastifyReply | null;
const htmlErrorPages = new WeakMap<object, HtmlErrorPage>();

export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
  closeIfBodyUnread(reply);
  const page = htmlErrorPages.get(reply.server.server);
  return page?.(reply, err) ?? reply.code(err.status).type('application/json; charset=utf-8').send(err.body());
}

export function registerErrorHandling(app: FastifyInstance, htmlErrorPage?: HtmlErrorPage): void {
  if (htmlErrorPage) htmlErrorPages.set(app.server, htmlErrorPage);
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const known = toApiError(err);
    if (known) {
      // Expected answers (maintenance, overload, an unavailable dependency) are not failures of
      // the program: a line without a stack. A 500 that the code chose is logged with its cause.
      if (known.status === 503) request.log.warn({ status: 503, error: known.message, detail: known.detail, cause: (err as unknown) === known ? undefined : err.message }, 'service unavailable');
      else if (known.status >= 500) request.log.error({ err }, 'request failed');
      return sendError(reply, known);
    }
    // Unexpected: log the detail, answer with the request id and nothing else.
    request.log.error({ err }, 'unexpected failure');
    return sendError(reply, new ApiError(500, 'Internal server error', { request_id: String(request.id) }));
  });
}

/**
 * Errors Fastify's router raises before any hook runs (a malformed percent-escape, an over-long
 * path segment): the same JSON body, and the headers the policy hooks would have added.
 */
export function frameworkErrorHandler(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  reply.header('strict-transport-security', HSTS);
  reply.header('x-content-type-options', 'nosniff');
  sendError(reply, toApiError(err) ?? new ApiError(400, 'Bad request'));
}

/** Seconds a client waits before sending again a request the server could not read (HPE_PAUSED). */
const UNREAD_RETRY_AFTER = 1;

/**
 * Answers what Node's HTTP parser rejects (lower-case or unknown methods, huge headers) with the
 * JSON error body. Bound to the Fastify instance (its logger).
 */
export function clientErrorHandler(this: { log?: { warn(obj: object, msg: string): void } } | undefined, err: NodeJS.ErrnoException & { code?: string }, socket: Socket): void {
  if (!socket.writable) return;
  let status = 400;
  let body: Record<string, unknown> = { error: 'Malformed HTTP request', detail: { request: 'could not be parsed' } };
  const headers: Record<string, string> = {};
  if (err.code === 'HPE_PAUSED') {
    // Not the client's fault: Node (20, 24) handed part of a request's body to a parser it had paused
    // (tls-reads.ts; readAsStreamOncePaused keeps it from happening again on that connection).
    // That request was not processed (its body never ended): 503, send it again.
    status = 503;
    body = { error: 'The request could not be read while the server was busy; nothing was done, send it again', detail: { request: 'interrupted, not processed' } };
    headers['Retry-After'] = String(UNREAD_RETRY_AFTER);
    this?.log?.warn({ code: err.code }, 'a request body arrived at a paused HTTP parser: answered 503');
  } else if (err.code === 'HPE_INVALID_METHOD')
    body = { error: 'Unknown or not upper-case HTTP method', detail: { method: 'must be an upper-case HTTP method' } };
  else if (err.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    body = { error: 'Request headers too large', detail: { headers: 'exceed the size limit' } };
  } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  answerOnSocket(socket, status, body, headers);
}

/** A JSON error written straight to the socket (before or outside Fastify), then the connection closes. */
function answerOnSocket(socket: Socket | Duplex, status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): void {
  if (!socket.writable) return void socket.destroy();
  const text = JSON.stringify(body);
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(text)}\r\n${extra}Strict-Transport-Security: ${HSTS}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${text}`,
  );
}

/**
 * What Node's HTTP server would otherwise answer itself, without the JSON error body, or not at
 * all: CONNECT (closed without a word), a protocol upgrade (left hanging), an `Expect` other than
 * 100-continue (a bare 417), and a request without Host (a bare 400: the server is created with
 * requireHostHeader off and the request reaches the policy hook, which answers it).
 */
export function answerWhatNodeWould(server: HttpsServer): void {
  server.on('connect', (_req: IncomingMessage, socket: Duplex) =>
    answerOnSocket(socket, 405, { error: 'CONNECT is not supported', detail: { method: 'this server is not a proxy' } }),
  );
  server.on('upgrade', (_req: IncomingMessage, socket: Duplex) =>
    answerOnSocket(socket, 400, { error: 'Protocol upgrades are not supported', detail: { upgrade: 'send the request without Upgrade' } }),
  );
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const text = JSON.stringify({ error: 'Expectation not supported', detail: { expect: 'only 100-continue is supported' } });
    res.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'strict-transport-security': HSTS, 'x-content-type-options': 'nosniff', connection: 'close' });
    res.end(text);
    req.resume();
  });
}
