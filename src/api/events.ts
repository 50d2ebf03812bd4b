import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../contract/context.js';
import type { Caller } from '../contract/caller.js';
import { scopeName } from '../contract/scope-name.js';
import {
  ADMIN_EVENT_TYPES,
  EventSelection,
  RESOURCE_EVENT_TYPES,
  eventBus,
  eventJson,
  purgedThrough,
  readSelected,
  type StoredEvent,
} from '../contract/event-bus.js';
import { badRequest, forbidden, gone } from '../platform/http/errors.js';
import { namesType, requireJsonAccept } from '../platform/http/negotiation.js';
import { routeMethods } from '../platform/http/routes.js';
import type { Authenticator } from './access/authenticate.js';
import type { Links } from './links.js';
import { MAX_WAIT_S } from './parameters.js';
import { holdStream, sendStreamHead, type HeldStream, type StreamWatch } from './sse-stream.js';

// GET /v1/events (docs/events.md#the-feed-get-v1events): the outbox as a token may see it — the events of the
// records it could GET (the collection's read scope; in `owner` collections, its subject's own
// records). JSON pages with a long poll, or the same URL as Server-Sent Events (better-sse does
// the framing and the keep-alive comment). The admin side's types are never here
// (/admin/v1/events shows them to admins).

const CATCH_UP_BATCH = 500;
const ADMIN_TYPES: ReadonlySet<string> = new Set(ADMIN_EVENT_TYPES);
const RESOURCE_TYPES: ReadonlySet<string> = new Set(RESOURCE_EVENT_TYPES);

/** Query parameters of an event feed, shared by /v1/events and /admin/v1/events. */
export interface FeedQuery {
  after: number | null;
  types: string[] | null;
  collections: string[] | null;
  limit: number;
  wait: number;
}

const FEED_PARAMS = new Set(['after', 'types', 'collections', 'limit', 'wait']);

/** Reads and checks the feed's parameters: 400 naming the parameter on anything malformed or unknown. */
export function parseFeedQuery(ctx: AppContext, query: Record<string, unknown>, knownTypes: ReadonlySet<string>, lastEventId?: string): FeedQuery {
  for (const key of Object.keys(query)) if (!FEED_PARAMS.has(key)) throw badRequest('Unknown query parameter', { [key]: `is not a parameter of the event feed (${[...FEED_PARAMS].join(', ')})` });
  const one = (name: string): string | undefined => {
    const v = query[name];
    if (Array.isArray(v)) throw badRequest(`${name} given twice`, { [name]: 'must be given once' });
    return v === undefined ? undefined : String(v);
  };
  const id = (name: string, text: string | undefined): number | null => {
    if (text === undefined || text === '') return null;
    if (!/^\d{1,15}$/.test(text)) throw badRequest(`Invalid ${name}`, { [name]: 'must be an event id (a decimal number)' });
    return Number(text);
  };
  const list = (name: string): string[] | null => {
    const text = one(name);
    if (text === undefined) return null;
    const items = text.split(',').map((s) => s.trim());
    if (items.some((s) => s === '')) throw badRequest(`Invalid ${name}`, { [name]: 'must be a comma-separated list of names' });
    return [...new Set(items)];
  };
  const int = (name: string, min: number, max: number, fallback: number): number => {
    const text = one(name);
    if (text === undefined) return fallback;
    if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) throw badRequest(`Invalid ${name}`, { [name]: `must be an integer from ${min} to ${max}` });
    return Number(text);
  };
  const types = list('types');
  for (const t of types ?? [])
    if (!knownTypes.has(t))
      throw badRequest('Unknown event type', {
        types: ADMIN_TYPES.has(t) ? `${t} is an admin event: GET /admin/v1/events shows it to admins` : `${t} is not an event type (known: ${[...knownTypes].join(', ')})`,
      });
  const collections = list('collections');
  for (const c of collections ?? []) if (!ctx.collections.get(c)) throw badRequest('Unknown collection', { collections: `${c} is not a collection` });
  const after = id('after', one('after')) ?? id('last-event-id', lastEventId);
  const { defaultLimit, maxLimit } = ctx.config.api;
  return { after, types, collections, limit: int('limit', 1, maxLimit, defaultLimit), wait: int('wait', 0, MAX_WAIT_S, 0) };
}

/** What this caller may see: 403 without a read scope on any collection, or on one it names. */
export function callerSelection(ctx: AppContext, caller: Caller, q: FeedQuery): EventSelection {
  const readable = [...ctx.collections.values()].filter((m) => caller.scopes.has(scopeName(m.name, 'read')));
  if (readable.length === 0) throw forbidden('This token cannot read any collection', { scope: 'requires a <collection>:read scope' });
  for (const c of q.collections ?? [])
    if (!readable.some((m) => m.name === c)) throw forbidden(`This token cannot read ${c}`, { collections: `requires ${scopeName(c, 'read')}` });
  const names = q.collections ?? readable.map((m) => m.name);
  const owned = readable.filter((m) => m.access === 'owner' && names.includes(m.name)).map((m) => m.name);
  return new EventSelection(q.types ?? [...RESOURCE_EVENT_TYPES], names, { subject: caller.subject, collections: owned });
}

/** 410 when events after the resume point have been swept by the retention. */
export async function requireRetained(ctx: AppContext, after: number | null): Promise<void> {
  if (after !== null && after < (await purgedThrough(ctx)))
    throw gone('Events after this point are no longer kept', { after: `events older than ${ctx.config.events.retention} s are removed: start again without after` });
}

/** The JSON page: events after `after`, waiting up to `wait` seconds for one when there is none yet. */
export async function feedPage(ctx: AppContext, selection: EventSelection, q: FeedQuery, request: FastifyRequest): Promise<StoredEvent[]> {
  const after = q.after ?? 0;
  const bus = eventBus(ctx);
  if (q.wait === 0) return readSelected(ctx, selection, after, q.limit);
  let arrived: () => void = () => undefined;
  const signal = new Promise<void>((resolve) => (arrived = resolve));
  const stop = await bus.subscribe(
    (events) => events.some((e) => e.id > after && selection.matches(e)) && arrived(),
    () => arrived(),
  );
  try {
    const page = await readSelected(ctx, selection, after, q.limit);
    if (page.length > 0) return page;
    const closed = () => arrived();
    request.raw.once('close', closed);
    const timer = setTimeout(arrived, q.wait * 1000);
    await signal;
    clearTimeout(timer);
    request.raw.off('close', closed);
    return readSelected(ctx, selection, after, q.limit);
  } finally {
    stop();
  }
}

/** `Link: next` of a page: where to poll from next (the last id seen, or the same point). */
export function nextLink(url: string, query: Record<string, unknown>, q: FeedQuery, page: readonly StoredEvent[]): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (k !== 'after' && typeof v === 'string') params.set(k, v);
  const next = page.length ? page[page.length - 1].id : q.after;
  if (next !== null) params.set('after', String(next));
  return `<${url}?${params.toString()}>; rel="next"`;
}

export function wantsStream(request: FastifyRequest): boolean {
  return namesType(request.headers.accept, 'text/event-stream');
}

/**
 * Streams the selection as Server-Sent Events (sse-stream.ts): first what came after the resume
 * point (if any), then each new event as it is committed.
 */
export async function streamEvents(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  selection: EventSelection,
  after: number | null,
  watch: StreamWatch,
): Promise<void> {
  if (request.method === 'HEAD') return void sendStreamHead(reply);
  const bus = eventBus(ctx);
  let sent = after ?? 0;
  let live = after === null; // with no resume point, only new events
  const pending: StoredEvent[] = [];
  let stream: HeldStream | null = null;
  let stopped = false;
  const send = (events: readonly StoredEvent[]) => {
    const fresh = events.filter((e) => e.id > sent && selection.matches(e));
    if (!fresh.length || !stream) return;
    if (stream.write(fresh.length === 1 ? sseFrame(fresh[0]) : fresh.map(sseFrame).join(''))) sent = fresh[fresh.length - 1].id;
  };
  const unsubscribe = await bus.subscribe(
    (events) => {
      if (live) send(events);
      else pending.push(...events);
    },
    () => {
      stopped = true;
      stream?.end();
    },
  );
  if (live) sent = Math.max(sent, bus.position);
  stream = await holdStream(ctx, request, reply, watch, unsubscribe);
  if (stopped) return stream.end();
  if (!live) {
    try {
      for (;;) {
        const page = await readSelected(ctx, selection, sent, CATCH_UP_BATCH);
        send(page);
        if (page.length < CATCH_UP_BATCH || stream.ended) break;
      }
    } catch (e) {
      request.log.warn(`event stream: cannot read the events to catch up: ${(e as Error).message}`);
      stream.end();
      return;
    }
    live = true;
    send(pending.splice(0));
  }
}

const frameOf = new WeakMap<StoredEvent, string>();

/**
 * An event as one SSE frame (`id`, `event`, `data`), made once per event object: a bus batch is
 * shared by every stream, so 1,000 streams write the same string rather than frame it 1,000 times.
 * better-sse opens the stream and sends the keep-alive; the frames are this small format itself.
 */
export function sseFrame(e: StoredEvent): string {
  let frame = frameOf.get(e);
  if (frame === undefined) {
    // JSON text has no raw line breaks, but a data line must never carry one: split just in case.
    const data = eventJson(e)
      .split(/\r\n|\r|\n/)
      .map((line) => `data: ${line}\n`)
      .join('');
    frameOf.set(e, (frame = `id: ${e.id}\nevent: ${e.type}\n${data}\n`));
  }
  return frame;
}

export function registerEventRoutes(api: FastifyInstance, v: string, ctx: AppContext, authenticator: Authenticator, links: Links): void {
  routeMethods(
    api,
    `${v}/events`,
    {
      GET: async (request, reply) => {
        const caller = request.caller!;
        const stream = wantsStream(request);
        if (!stream) requireJsonAccept(request.headers.accept);
        const lastEventId = stream ? headerValue(request.headers['last-event-id']) : undefined;
        const q = parseFeedQuery(ctx, request.query as Record<string, unknown>, RESOURCE_TYPES, lastEventId);
        const selection = callerSelection(ctx, caller, q);
        await requireRetained(ctx, q.after);
        if (stream) {
          const token = authenticator.presentedToken(request);
          return streamEvents(ctx, request, reply, selection, q.after, {
            endsAt: caller.expiresAt,
            stillValid: async () => token !== null && (await authenticator.tokens.verify(token)) !== null,
          });
        }
        const page = await feedPage(ctx, selection, q, request);
        reply.header('link', nextLink(links.url('/events'), request.query as Record<string, unknown>, q, page));
        return reply.type('application/json; charset=utf-8').send(`[${page.map(eventJson).join(',')}]`);
      },
    },
    { config: { negotiates: true } },
  );
}

function headerValue(h: string | string[] | undefined): string | undefined {
  return Array.isArray(h) ? h[0] : h;
}
