import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes a body as strict UTF-8: invalid byte sequences are a 400, never silently replaced. */
export function decodeUtf8(body: Buffer): string {
  try {
    return utf8.decode(body);
  } catch {
    throw new ApiError(400, 'Request body is not valid UTF-8', { body: 'is not valid UTF-8' });
  }
}

/** An empty body parses to undefined: the handler decides whether it needed one. */
export function parseJsonBody(body: Buffer): unknown {
  const text = decodeUtf8(body);
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text, (key, value) => (key === '__proto__' ? undefined : value));
  } catch (e) {
    throw new ApiError(400, 'Malformed JSON body', { body: `is not valid JSON (${(e as Error).message})` });
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The body as received (JSON bodies), for a MAC's bodyhash. */
    rawBody: Buffer | null;
    /** The SHA-256 of a body that was spooled to disk instead (a raw attachment upload), for a MAC's bodyhash. */
    rawBodySha256: Buffer | null;
  }
}

/** JSON is the only body type of the API: strict UTF-8, no prototype keys. Other types are 415. */
export function registerJsonParser(app: FastifyInstance): void {
  app.decorateRequest('rawBody', null);
  app.decorateRequest('rawBodySha256', null);
  app.removeAllContentTypeParsers();
  const parser = (req: FastifyRequest, body: Buffer, done: (err: Error | null, value?: unknown) => void) => {
    try {
      req.rawBody = body;
      done(null, parseJsonBody(body));
    } catch (e) {
      done(e as Error);
    }
  };
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parser);
  // application/merge-patch+json (RFC 7396) and other JSON-based types.
  app.addContentTypeParser(/^application\/[\w.-]+\+json(\s*;.*)?$/i, { parseAs: 'buffer' }, parser);
}
