// Reading Server-Sent Events in tests: a stream opened with fetch (as a browser app would, since
// EventSource cannot send an Authorization header), parsed into events as they arrive.
import type { TestServer } from './server.js';

export interface SseEvent {
  id: string | null;
  event: string | null;
  data: string;
}

export interface SseStream {
  status: number;
  headers: Headers;
  events: SseEvent[];
  comments: string[];
  /** Resolves when the server ends the stream (or it fails); the time it ended. */
  ended: Promise<number>;
  /** Waits until `n` events have arrived (or throws after `ms`). */
  waitFor(n: number, ms?: number): Promise<SseEvent[]>;
  close(): void;
}

export async function openStream(server: TestServer, target: string, headers: Record<string, string>): Promise<SseStream> {
  const controller = new AbortController();
  const res = await server.fetch(target, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const waiters: (() => void)[] = [];
  const notify = () => waiters.splice(0).forEach((w) => w());
  let buffer = '';
  const parse = () => {
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const e: SseEvent = { id: null, event: null, data: '' };
      let isEvent = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) comments.push(line.slice(1).trim());
        else {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') e.id = value;
          else if (field === 'event') e.event = value;
          else if (field === 'data') e.data += (e.data ? '\n' : '') + value;
          else continue;
          isEvent = true;
        }
      }
      if (isEvent && (e.data || e.event)) events.push(e);
    }
    notify();
  };
  const ended = (async () => {
    if (!res.body || res.status !== 200) return Date.now();
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n/g, '\n');
        parse();
      }
    } catch {
      // aborted by close()
    }
    notify();
    return Date.now();
  })();
  let done = false;
  void ended.then(() => (done = true));
  return {
    status: res.status,
    headers: res.headers,
    events,
    comments,
    ended,
    async waitFor(n, ms = 5000) {
      const deadline = Date.now() + ms;
      while (events.length < n) {
        if (done) throw new Error(`the stream ended after ${events.length} of ${n} events`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`only ${events.length} of ${n} events within ${ms} ms: ${JSON.stringify(events)}`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, left);
          waiters.push(() => (clearTimeout(t), resolve()));
        });
      }
      return events.slice(0, n);
    },
    close: () => controller.abort(),
  };
}
