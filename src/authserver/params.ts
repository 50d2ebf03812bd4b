import type { FastifyInstance, FastifyRequest } from 'fastify';
import { decodeUtf8, parseJsonBody } from '../platform/http/body-parsers.js';
import { ApiError, InvalidRequest, OAuthError } from '../platform/http/errors.js';

// The parameters of an OAuth request, whatever carried them: a query string, an
// application/x-www-form-urlencoded body (RFC 6749) or a JSON object (docs/oauth.md, token endpoint). RFC 6749 §3.1/§3.2:
// a parameter sent more than once is an invalid_request, so repeats are kept apart, not merged.

export class Params {
  constructor(
    readonly values: ReadonlyMap<string, string>,
    /** Names that appeared more than once. */
    readonly repeated: ReadonlySet<string> = new Set(),
    /** Names whose JSON value was not a string (numbers are accepted as their decimal text). */
    readonly malformed: ReadonlySet<string> = new Set(),
  ) {}

  /** The names a grant handler may read (its TokenGrant.parameters); null: any. */
  private readable: readonly string[] | null = null;

  /**
   * From now on only `names` may be read: reading another is a programming error (a grant that
   * forgot to declare a parameter), never an answer to the client. Parameters sent and not read
   * stay ignored (RFC 6749 §3.2). No copy: the token endpoint is a hot path.
   */
  restrictTo(names: readonly string[]): void {
    this.readable = names;
  }

  /** The value of `name`; an empty value counts as absent (RFC 6749 §3.1). */
  get(name: string): string | undefined {
    if (this.readable !== null && !this.readable.includes(name)) throw new Error(`Parameter ${name} is read but not declared (TokenGrant.parameters)`);
    const v = this.values.get(name);
    return v === undefined || v === '' ? undefined : v;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** Every value of a repeatable form field (consent checkboxes); empty strings dropped. */
  all(name: string): string[] {
    return (this.multi.get(name) ?? []).filter((v) => v !== '');
  }

  multi: ReadonlyMap<string, string[]> = new Map();

  /** Throws invalid_request naming the first repeated or malformed parameter among `names` (all when omitted). */
  requireSingle(names?: readonly string[]): void {
    for (const name of this.repeated)
      if (!names || names.includes(name))
        throw new InvalidRequest(`Parameter ${name} is repeated`, { [name]: 'must not be repeated' });
    for (const name of this.malformed)
      if (!names || names.includes(name))
        throw new InvalidRequest(`Parameter ${name} must be a string`, { [name]: 'must be a string' });
  }

  require(name: string): string {
    const v = this.get(name);
    if (v === undefined) throw new InvalidRequest(`Parameter ${name} is required`, { [name]: 'is required' });
    return v;
  }
}

/** Strict application/x-www-form-urlencoded: invalid percent-escapes or UTF-8 are an error, never replaced. */
export function parseUrlEncoded(text: string): Params {
  const values = new Map<string, string>();
  const multi = new Map<string, string[]>();
  const repeated = new Set<string>();
  if (text !== '') {
    for (const pair of text.split('&')) {
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      const name = decodeComponent(eq < 0 ? pair : pair.slice(0, eq));
      const value = eq < 0 ? '' : decodeComponent(pair.slice(eq + 1));
      if (values.has(name)) repeated.add(name);
      else values.set(name, value);
      multi.set(name, [...(multi.get(name) ?? []), value]);
    }
  }
  const params = new Params(values, repeated);
  params.multi = multi;
  return params;
}

function decodeComponent(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw new InvalidRequest('Malformed percent-encoding in the request', { body: 'is not valid form encoding' });
  }
}

/** A JSON body: an object whose values are strings (numbers accepted as text, e.g. ttl). */
export function paramsFromJson(body: unknown): Params {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new InvalidRequest('The request body must be a JSON object', { body: 'must be an object' });
  const values = new Map<string, string>();
  const malformed = new Set<string>();
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (typeof v === 'string') values.set(k, v);
    else if (typeof v === 'number' && Number.isFinite(v)) values.set(k, String(v));
    else if (v !== null) malformed.add(k);
  }
  const params = new Params(values, new Set(), malformed);
  params.multi = new Map([...values].map(([k, v]) => [k, [v]]));
  return params;
}

/** The query string of a request, parsed strictly. */
export function queryParams(request: FastifyRequest): Params {
  const q = request.url.indexOf('?');
  return parseUrlEncoded(q < 0 ? '' : request.url.slice(q + 1));
}

/** The body of a POST to an OAuth endpoint, as Params (absent body: no parameters). */
export function bodyParams(request: FastifyRequest): Params {
  const body = request.body;
  if (body instanceof Params) return body;
  if (body === undefined || body === null) return new Params(new Map());
  return paramsFromJson(body);
}

/** An ApiError of the shared parsers, in the RFC 6749 §5.2 shape of the OAuth endpoints. */
function asOAuthError(e: unknown): Error {
  if (e instanceof OAuthError) return e;
  if (e instanceof ApiError) return new InvalidRequest(e.message, e.detail);
  return new InvalidRequest('Malformed request body', { body: 'cannot be parsed' });
}

/**
 * The body parsers of the authorization server's scope: form bodies (RFC 6749) besides JSON
 * (docs/oauth.md), both strict UTF-8, both failing with an OAuth error body.
 */
export function registerOAuthBodyParsers(app: FastifyInstance): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (_req, body, done) => {
    try {
      done(null, parseUrlEncoded(decodeUtf8(body as Buffer)));
    } catch (e) {
      done(asOAuthError(e));
    }
  });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as Buffer));
    } catch (e) {
      done(asOAuthError(e));
    }
  });
}
