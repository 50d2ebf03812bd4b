// An answer sent before its request's body was read (every error answer goes through
// closeIfBodyUnread: sendError in error-handler.ts): keep the connection usable, or close it cleanly.
import type { FastifyReply } from 'fastify';
import type { Socket } from 'node:net';

/** How long a connection that answered with `Connection: close` still takes in a request body's bytes. */
const LINGER_MS = 1000;

/**
 * An answer sent before the request's body was read (401, 404, 413, 415, 429, 503, …): Node reads
 * and drops the rest of the body afterwards so that the connection serves its next request. Up to
 * the body limit that is cheap; a body declared larger, or chunked with no declared size, is not
 * worth reading: the answer says `Connection: close` and the connection ends after it.
 */
export function closeIfBodyUnread(reply: FastifyReply): void {
  const req = reply.request.raw;
  if (req.complete) return;
  const length = req.headers['content-length'];
  const limit = reply.request.routeOptions.bodyLimit ?? reply.server.initialConfig.bodyLimit ?? 0;
  if (length === undefined ? req.headers['transfer-encoding'] === undefined : Number(length) <= limit) return;
  reply.header('connection', 'close');
  // From now on a request that arrives on this connection is not processed: its answer could not be sent.
  const parser = (req.socket as Socket & { parser?: { onIncoming: unknown } | null }).parser;
  if (parser) parser.onIncoming = ignoreRequest;
  lingerOnClose(req.socket);
}

/** What a connection that is closing does with a request that still arrives on it: nothing. */
const ignoreRequest = () => 0;

/**
 * Closing a connection whose client is still sending makes the kernel reset it, and a reset can
 * discard the answer before the client read it. So once the answer is out, the connection is
 * half-closed and still takes in (and drops) bytes until the client closes or LINGER_MS pass; only
 * then is it closed (where Node would close at once).
 */
function lingerOnClose(socket: Socket): void {
  socket.destroySoon = function lingeringClose(this: Socket) {
    if (this.writable) this.end();
    const close = () => this.destroy();
    const timer = setTimeout(close, LINGER_MS);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
    this.once('end', close);
  };
}
