import type { FastifyReply, FastifyRequest } from 'fastify';
import { createSession } from 'better-sse';
import type { AppContext } from '../contract/context.js';
import { onRevocation } from '../contract/revocation-notices.js';

// A Server-Sent Events stream held open for a token, as GET /v1/events and GET /mcp hold theirs
// (docs/events.md, docs/mcp.md): better-sse opens it and sends the keep-alive comment; it ends
// when the token expires or is revoked (checked again every RECHECK_MS, at once on a notice here),
// when the client leaves, or when the client reads too slowly. What is written is the caller's.

const KEEP_ALIVE_MS = 15_000;
/** How often a stream checks its token again: with the token cache's 500 ms, a revocation anywhere ends it within 1 s. */
const RECHECK_MS = 500;
const MAX_UNSENT_BYTES = 1 << 20;

export interface StreamWatch {
  /** Epoch ms at which the token ends. */
  endsAt: number;
  /** Whether the token is still good (revocation). */
  stillValid: () => Promise<boolean>;
}

export interface HeldStream {
  /** Writes frames; false (and the stream ended) when the client has this much unread already. */
  write(frames: string): boolean;
  end(): void;
  readonly ended: boolean;
}

/** A HEAD of a stream: its headers without a stream, answered at once. */
export function sendStreamHead(reply: FastifyReply): FastifyReply {
  return reply.headers(outgoingHeaders(reply)).type('text/event-stream').send();
}

/** Opens the stream on this request (the reply is hijacked); onEnd runs once, however it ends. */
export async function holdStream(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, watch: StreamWatch, onEnd: () => void): Promise<HeldStream> {
  const timers: NodeJS.Timeout[] = [];
  let stopRevocations: () => void = () => undefined;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    onEnd();
    stopRevocations();
    for (const t of timers) clearTimeout(t);
    if (!reply.raw.writableEnded) reply.raw.end();
  };
  reply.hijack();
  const session = await createSession(request.raw, reply.raw, {
    headers: outgoingHeaders(reply),
    keepAlive: KEEP_ALIVE_MS,
    retry: null,
    trustClientEventId: false,
  });
  session.on('disconnected', end);
  request.raw.once('close', end);
  timers.push(setTimeout(end, Math.min(Math.max(watch.endsAt - Date.now(), 0), 2 ** 31 - 1)));
  const recheck = () => void watch.stillValid().then((ok) => ok || end(), () => undefined);
  timers.push(setInterval(recheck, RECHECK_MS));
  stopRevocations = onRevocation(ctx, recheck);
  return {
    write(frames) {
      if (ended || !session.isConnected) return false;
      // A reader that does not keep up is let go rather than buffered without bound: it resumes
      // with Last-Event-ID and gets what it missed from the database.
      if (reply.raw.writableLength > MAX_UNSENT_BYTES) {
        end();
        return false;
      }
      reply.raw.write(frames);
      return true;
    },
    end,
    get ended() {
      return ended;
    },
  };
}

/** The headers set so far by the hooks (security policy, CORS): a hijacked reply must send them itself. */
function outgoingHeaders(reply: FastifyReply): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) out[k] = Array.isArray(v) ? v : String(v);
  out['cache-control'] = 'no-store';
  out['x-accel-buffering'] = 'no';
  return out;
}
