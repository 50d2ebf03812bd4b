import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerWhatNodeWould } from './error-handler.js';
import { readAsStreamOncePaused } from './tls-reads.js';

/** Longer than the idle timeout of common load balancers (60 s), as Fastify's own default. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/**
 * The HTTPS server every gatehouse process listens with (Fastify's serverFactory): requests
 * without Host reach the policy hook, what Node would answer itself gets the JSON error body, and
 * a connection Node pauses is read as a stream from then on (tls-reads.ts).
 */
export function createHttpsServer(tls: { key: string; cert: string }, handler: (req: IncomingMessage, res: ServerResponse) => void): https.Server {
  const server = https.createServer({ key: tls.key, cert: tls.cert, requireHostHeader: false }, handler);
  answerWhatNodeWould(server);
  readAsStreamOncePaused(server);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  return server;
}
