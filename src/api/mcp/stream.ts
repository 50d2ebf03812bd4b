import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { contextCache } from '../../contract/context-cache.js';
import { EventSelection, RESOURCE_EVENT_TYPES, eventBus, readSelected, type StoredEvent } from '../../contract/event-bus.js';
import { randomSecret } from '../../platform/crypto/secrets.js';
import { ApiError, methodNotAllowed } from '../../platform/http/errors.js';
import { write } from '../../platform/store/write-path.js';
import type { Authenticator } from '../access/authenticate.js';
import { callerSelection, parseFeedQuery, wantsStream } from '../events.js';
import { holdStream, sendStreamHead, type HeldStream, type StreamWatch } from '../sse-stream.js';
import { claimStream, subscribersOf, subscriptionsOf, type FollowedRecord } from '../store/mcp-sessions.js';
import { sessionOf, type McpSession } from './sessions.js';
import { MAX_SESSIONS } from './subscriptions.js';

// GET /mcp with a session (docs/mcp.md#following-changes): the session's server-to-client stream,
// where `notifications/resources/updated` arrives for each record it follows that is updated or
// deleted. The events are the outbox's, as GET /v1/events reads them (the bus: this process's
// commits at once, another instance's through Redis or the bus's poll); one read of the
// subscriptions per batch of events serves every stream of this instance. A session has one
// stream: a new one, on any instance, replaces it. Without a session GET stays 405 (stateless).

const NOTIFIED: readonly string[] = ['record.updated', 'record.deleted'];
const KNOWN_TYPES: ReadonlySet<string> = new Set(RESOURCE_EVENT_TYPES);
const CATCH_UP_BATCH = 500;

const keyOf = (r: FollowedRecord) => `${r.collection}\u0000${r.recordId}`;
const followedOf = (e: StoredEvent): FollowedRecord | null =>
  NOTIFIED.includes(e.type) && e.collection !== null && e.record_id !== null ? { collection: e.collection, recordId: e.record_id } : null;

/** A notification as one SSE frame: the event's id (Last-Event-ID resumes from it) and the JSON-RPC message. */
function frameOf(e: StoredEvent, uri: string): string {
  const message = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });
  return `id: ${e.id}\nevent: message\ndata: ${message}\n\n`;
}

/** One session's stream on this instance. */
class SessionStream {
  stream: HeldStream | null = null;
  /** Until it is open (and has caught up from Last-Event-ID), what arrives live waits here. */
  pending: { events: StoredEvent[]; uris: Map<string, string> }[] | null = [];
  /** Named the session's stream in the database: from then on another name there means it was replaced. */
  claimed = false;

  constructor(
    readonly session: McpSession,
    readonly name: string,
    readonly selection: EventSelection,
    public sent: number,
  ) {}

  /** Writes the notifications of these events (the records it follows, `uris` by record) this stream may see and has not sent. */
  notify(events: readonly StoredEvent[], uris: ReadonlyMap<string, string>): void {
    if (this.pending) this.pending.push({ events: [...events], uris: new Map(uris) });
    else this.write(events, uris);
  }

  write(events: readonly StoredEvent[], uris: ReadonlyMap<string, string>): void {
    let frames = '';
    let last = this.sent;
    for (const e of events) {
      const followed = followedOf(e);
      const uri = followed && uris.get(keyOf(followed));
      if (!uri || e.id <= last || !this.selection.matches(e)) continue;
      frames += frameOf(e, uri);
      last = e.id;
    }
    if (frames && this.stream?.write(frames)) this.sent = last;
  }
}

/** The MCP streams of this process, fed from the event bus (one per context: sessionStreams(ctx)). */
class SessionStreams {
  private readonly streams = new Map<string, SessionStream>();
  private stopListening: (() => void) | null = null;
  private listening: Promise<void> | null = null;
  private delivering: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: AppContext) {}

  async hold(request: FastifyRequest, reply: FastifyReply, session: McpSession, selection: EventSelection, after: number | null, watch: StreamWatch): Promise<void> {
    const bus = eventBus(this.ctx);
    // In the map from the start (what arrives meanwhile waits in `pending`), so that the bus is not
    // let go by another stream ending while this one is being opened.
    const mine = new SessionStream(session, randomSecret(12), selection, 0);
    const previous = this.streams.get(session.id);
    this.streams.set(session.id, mine);
    previous?.stream?.end();
    try {
      await this.listen();
      await write(this.ctx.store, (tx) => claimStream(tx, session, mine.name, MAX_SESSIONS));
      mine.claimed = true;
      mine.sent = after ?? bus.position;
      mine.stream = await holdStream(this.ctx, request, reply, watch, () => this.release(mine));
    } catch (e) {
      this.release(mine);
      throw e;
    }
    if (this.streams.get(session.id) !== mine) return mine.stream.end(); // replaced while opening
    if (after !== null) {
      try {
        const followed = new Map((await subscriptionsOf(this.ctx.store, session.id)).map((s) => [keyOf(s), s.uri]));
        for (;;) {
          const page = await readSelected(this.ctx, selection, mine.sent, CATCH_UP_BATCH);
          mine.write(page, followed);
          if (page.length < CATCH_UP_BATCH || mine.stream.ended) break;
          mine.sent = Math.max(mine.sent, page[page.length - 1].id);
        }
      } catch (e) {
        request.log.warn(`mcp stream: cannot read the events to catch up: ${(e as Error).message}`);
        return mine.stream.end();
      }
    }
    const queued = mine.pending ?? [];
    mine.pending = null;
    for (const { events, uris } of queued) mine.write(events, uris);
  }

  /** Listens to the bus while this instance holds streams (batches delivered one after the other, in order). */
  private async listen(): Promise<void> {
    if (this.stopListening) return;
    this.listening ??= eventBus(this.ctx)
      .subscribe(
        (events) => void (this.delivering = this.delivering.then(() => this.deliver(events)).catch(() => undefined)),
        () => this.endAll(),
      )
      .then((stop) => void (this.stopListening = stop))
      .finally(() => (this.listening = null));
    await this.listening;
  }

  private release(stream: SessionStream): void {
    if (this.streams.get(stream.session.id) === stream) this.streams.delete(stream.session.id);
    if (this.streams.size === 0 && this.stopListening) {
      this.stopListening();
      this.stopListening = null;
    }
  }

  /** The bus stops (the server is closing): the streams end, they would hold its connections open. */
  private endAll(): void {
    this.stopListening = null;
    for (const s of [...this.streams.values()]) s.stream?.end();
  }

  /** One batch of events: which of this instance's sessions follow the records it changed, read once; each stream gets its own. */
  private async deliver(events: readonly StoredEvent[]): Promise<void> {
    if (this.streams.size === 0) return;
    const changed = new Map<string, FollowedRecord>();
    for (const e of events) {
      const followed = followedOf(e);
      if (followed) changed.set(keyOf(followed), followed);
    }
    if (changed.size === 0) return;
    let subscribers;
    try {
      subscribers = await subscribersOf(this.ctx.store, [...changed.values()], [...this.streams.keys()], Date.now());
    } catch {
      return; // the database is away for a moment; a stream resumed with Last-Event-ID gets them again
    }
    const bySession = new Map<string, Map<string, string>>();
    for (const s of subscribers) {
      const here = this.streams.get(s.sessionId);
      if (!here) continue;
      // Replaced by a newer stream of the same session (here or on another instance).
      if (here.claimed && s.stream !== here.name) {
        here.stream?.end();
        continue;
      }
      let uris = bySession.get(s.sessionId);
      if (!uris) bySession.set(s.sessionId, (uris = new Map()));
      uris.set(keyOf(s), s.uri);
    }
    for (const [sessionId, uris] of bySession) this.streams.get(sessionId)?.notify(events, uris);
  }
}

export function sessionStreams(ctx: AppContext): SessionStreams {
  return contextCache(ctx, 'mcp-session-streams', () => new SessionStreams(ctx));
}

/** `GET /mcp`: the session's stream; 405 without a session (a stateless client has none). */
export function sessionStreamRoute(ctx: AppContext, authenticator: Authenticator): RouteHandlerMethod {
  return async (request, reply) => {
    const caller = request.caller!;
    const session = await sessionOf(ctx, request);
    if (!session)
      throw methodNotAllowed(['POST'], 'GET /mcp needs a session', { 'mcp-session-id': 'required: the id answered to initialize (without a session, /mcp answers POSTs only)' });
    if (!wantsStream(request)) throw new ApiError(406, 'GET /mcp is an event stream', { accept: 'must allow text/event-stream' });
    const lastEventId = request.headers['last-event-id'];
    const q = parseFeedQuery(ctx, {}, KNOWN_TYPES, typeof lastEventId === 'string' ? lastEventId : undefined);
    const selection = callerSelection(ctx, caller, { ...q, types: [...NOTIFIED] });
    if (request.method === 'HEAD') return sendStreamHead(reply);
    const token = authenticator.presentedToken(request);
    return sessionStreams(ctx).hold(request, reply, session, selection, q.after, {
      endsAt: Math.min(caller.expiresAt, session.expiresAt),
      stillValid: async () => token !== null && (await authenticator.tokens.verify(token)) !== null,
    });
  };
}
