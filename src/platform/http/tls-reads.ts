import type { Server } from 'node:https';
import type { TLSSocket } from 'node:tls';

const ignore = () => undefined;

/**
 * Node (20, and 24 still) hands an HTTPS connection's bytes to its HTTP parser from C++ (the socket is
 * "consumed"). When a request arrives while the previous response on that connection still waits
 * to drain, Node pauses the socket and its parser — but TLS goes on handing over the records it
 * has already decrypted, and the paused parser fails with HPE_PAUSED: the request is lost and the
 * connection closed (when it happens: docs/benchmarks.md, "Why the code is as it is").
 *
 * A connection's first pause switches it to reading as a stream (a 'data' listener makes Node
 * stop consuming it), where a paused socket keeps the bytes until the parser resumes. Only then:
 * reading every connection as a stream costs CPU on every GET (docs/benchmarks.md, "Why the code
 * is as it is"; test/http-tls-reads.test.ts reproduces the loss and its absence).
 *
 * The stream's own bookkeeping must be told that nothing is being read at the switch: while C++
 * consumed the socket, the read the stream had started before never completed in JavaScript, so
 * it still counts as under way, and the stream would never ask for bytes again — the socket
 * paused for a request body nobody reads yet (a 401 answered before the body, a request waiting
 * for its turn) stayed paused once that request's answer resumed it, and the connection's next
 * request was never read (test/http-keep-alive.test.ts).
 */
export function readAsStreamOncePaused(server: Server): void {
  server.on('secureConnection', (socket: TLSSocket) =>
    socket.once('pause', () => {
      socket.on('data', ignore);
      (socket as unknown as { _readableState: { reading: boolean } })._readableState.reading = false;
    }),
  );
}
