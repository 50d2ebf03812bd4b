// Transport and response checks for the HTTP fuzzer (test/http-fuzz.test.ts): sends a request either
// through undici (the test server's agent) or, when undici would refuse or rewrite it (invalid
// methods, control bytes, unencoded paths, hand-made framing), as raw bytes over TLS; then checks
// the answer against the error policy of docs/api.md and docs/oauth.md.
import { connect, createSecureContext, type SecureContext, type TLSSocket } from 'node:tls';
import type { TestServer } from './server.js';

/** One concrete request, exactly as it goes on the wire. */
export interface WireRequest {
  method: string;
  /** The request target: path and query, sent as is (latin1 bytes). */
  target: string;
  /** Header lines in order; names may repeat. Values are latin1 strings (one char = one byte). */
  headers: Array<[string, string]>;
  body?: Buffer;
  /** Send as raw bytes even when undici would accept the request. */
  raw?: boolean;
  /** Raw only: the headers already frame the body (Content-Length / Transfer-Encoding); add nothing. */
  manualFraming?: boolean;
  /** Raw only: do not add a Host header. */
  noHost?: boolean;
  /** Raw only: the protocol of the request line (default HTTP/1.1). */
  version?: string;
}

export interface WireResponse {
  status: number;
  /** Lower-case names, every value kept. */
  headers: Map<string, string[]>;
  body: Buffer;
  via: 'undici' | 'raw';
}

export class NoResponseError extends Error {}

/** undici's refusals of a request it will not send as given (then it goes raw). */
const UNDICI_REFUSALS = new Set(['UND_ERR_INVALID_ARG', 'ERR_TLS_CERT_ALTNAME_INVALID', 'UND_ERR_NOT_SUPPORTED', 'ERR_INVALID_CHAR', 'ERR_INVALID_HTTP_TOKEN', 'ERR_INVALID_ARG_VALUE', 'ERR_INVALID_ARG_TYPE']);

function header(res: WireResponse, name: string): string | undefined {
  return res.headers.get(name)?.join(', ');
}

export class FuzzTransport {
  private readonly host: string;
  private readonly port: number;
  private session: Buffer | undefined;
  private readonly secureContext: SecureContext;

  constructor(
    private readonly server: TestServer,
    private readonly timeoutMs = 10_000,
  ) {
    const url = new URL(server.url);
    this.host = url.hostname;
    this.port = Number(url.port);
    this.secureContext = createSecureContext({ ca: server.ca });
  }

  /** undici first; raw TLS when the request needs it or undici refuses it or loses the answer. */
  async send(req: WireRequest): Promise<WireResponse> {
    // A raw request closed without an answer is tried again before that counts (a reset can race
    // the response); one that timed out is not.
    if (req.raw || req.manualFraming || req.noHost || req.version !== undefined)
      return this.sendRaw(req).catch((first: Error) => {
        if (first.message.startsWith('timed out')) throw new NoResponseError(`no HTTP response (raw: ${first.message})`);
        return this.sendRaw(req).catch((rawError: Error) => {
          throw new NoResponseError(`no HTTP response, twice (raw: ${rawError.message})`);
        });
      });
    try {
      const res = await this.sendUndici(req);
      this.keptAlive++;
      return res;
    } catch (e) {
      // undici refuses what it considers invalid (method, path or header bytes): sent raw instead.
      // Anything else (no answer in time, a connection closed or reset under the request) is a
      // request its keep-alive connection lost.
      if (!UNDICI_REFUSALS.has((e as { code?: string }).code ?? '')) throw new NoResponseError(`no HTTP response on a keep-alive connection (undici: ${(e as { code?: string }).code ?? ''} ${(e as Error).message})`);
      return this.sendRaw(req).catch((rawError: Error) => {
        throw new NoResponseError(`no HTTP response (undici: ${(e as Error).message}; raw: ${rawError.message})`);
      });
    }
  }

  /** Requests answered over the keep-alive connections of the test server's agent. */
  keptAlive = 0;

  async sendUndici(req: WireRequest): Promise<WireResponse> {
    const flat: string[] = [];
    for (const [k, v] of req.headers) flat.push(k, v);
    const res = await this.server.agent.request({
      origin: this.server.url,
      path: req.target,
      method: req.method as any,
      headers: flat,
      body: req.body,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
    const body = Buffer.from(await res.body.arrayBuffer());
    const headers = new Map<string, string[]>();
    for (const [k, v] of Object.entries(res.headers)) {
      if (v === undefined) continue;
      headers.set(k.toLowerCase(), Array.isArray(v) ? v : [String(v)]);
    }
    return { status: res.statusCode, headers, body, via: 'undici' };
  }

  /** The request's bytes as they are sent raw (always `Connection: close`: one request per connection). */
  static rawBytes(req: WireRequest, host: string): Buffer {
    const lines = [`${req.method} ${req.target}${req.version === '' ? '' : ` ${req.version ?? 'HTTP/1.1'}`}`];
    if (!req.noHost && !req.headers.some(([k]) => k.toLowerCase() === 'host')) lines.push(`Host: ${host}`);
    for (const [k, v] of req.headers) lines.push(`${k}: ${v}`);
    if (!req.manualFraming && req.body && req.body.length > 0) lines.push(`Content-Length: ${req.body.length}`);
    lines.push('Connection: close');
    return Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'), req.body ?? Buffer.alloc(0)]);
  }

  sendRaw(req: WireRequest): Promise<WireResponse> {
    const bytes = FuzzTransport.rawBytes(req, `${this.host}:${this.port}`);
    const head = req.method === 'HEAD';
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let settled = false;
      const socket: TLSSocket = connect(
        { host: this.host, port: this.port, secureContext: this.secureContext, servername: 'localhost', session: this.session },
        () => socket.write(bytes, () => undefined),
      );
      socket.setNoDelay(true);
      socket.on('session', (s: Buffer) => (this.session = s));
      const finish = (why: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.destroy();
        const parsed = parseRawResponse(Buffer.concat(chunks), head);
        if (parsed) resolve(parsed);
        else reject(new Error(`${why}; received ${chunks.reduce((n, c) => n + c.length, 0)} bytes: ${JSON.stringify(Buffer.concat(chunks).toString('latin1').slice(0, 300))}`));
      };
      const timer = setTimeout(() => finish(`timed out after ${this.timeoutMs} ms`), this.timeoutMs);
      socket.on('data', (d: Buffer) => {
        chunks.push(d);
        // A complete answer ends the wait even when the server keeps the connection open.
        if (parseRawResponse(Buffer.concat(chunks), head, false)) finish('complete');
      });
      socket.on('end', () => finish('connection ended'));
      socket.on('close', () => finish('connection closed'));
      socket.on('error', (e) => finish(`socket error ${(e as NodeJS.ErrnoException).code ?? e.message}`));
    });
  }
}

/**
 * Parses the first final (non-1xx) response of a connection's bytes; null when there is none, or
 * (with `final` false, while the connection is open) when its body may not be complete yet.
 */
export function parseRawResponse(all: Buffer, head: boolean, final = true): WireResponse | null {
  let rest = all;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const [statusLine, ...lines] = rest.subarray(0, end).toString('latin1').split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
    if (!m) return null;
    const status = Number(m[1]);
    const headers = new Map<string, string[]>();
    for (const l of lines) {
      const i = l.indexOf(':');
      if (i < 0) continue;
      const name = l.slice(0, i).trim().toLowerCase();
      headers.set(name, [...(headers.get(name) ?? []), l.slice(i + 1).trim()]);
    }
    let body = rest.subarray(end + 4);
    if (status >= 100 && status < 200) {
      rest = body;
      continue;
    }
    if (head || status === 204 || status === 304) body = Buffer.alloc(0);
    else if (/chunked/i.test(headers.get('transfer-encoding')?.join(',') ?? '')) {
      const decoded = dechunk(body);
      if (!decoded.complete && !final) return null;
      body = decoded.body;
    } else if (headers.has('content-length')) {
      const length = Number(headers.get('content-length')![0]);
      if (body.length < length && !final) return null;
      body = body.subarray(0, length);
    } else if (!final) return null;
    return { status, headers, body, via: 'raw' };
  }
}

function dechunk(data: Buffer): { body: Buffer; complete: boolean } {
  const out: Buffer[] = [];
  let at = 0;
  while (at < data.length) {
    const eol = data.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(data.subarray(at, eol).toString('latin1').split(';')[0], 16);
    if (!Number.isFinite(size)) break;
    if (size === 0) return { body: Buffer.concat(out), complete: true };
    if (eol + 2 + size > data.length) break;
    out.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return { body: Buffer.concat(out), complete: false };
}

// ---------------------------------------------------------------------------------------------
// Checks

/** What no body may contain: stack frames, source positions, Node internals, absolute file paths. */
export const LEAK_PATTERNS: readonly RegExp[] = [/ {4}at /, /\.ts:/, /\.js:/, /node:internal/, /\/work\//, /\/tmp\//, /\/home\//, /dist\//];

export function leakIn(text: string): string | undefined {
  for (const p of LEAK_PATTERNS) {
    const m = p.exec(text);
    if (m) return `${p} at ${m.index}: ${JSON.stringify(text.slice(Math.max(0, m.index - 60), m.index + 80))}`;
  }
  return undefined;
}

/** Lenient percent-decoding (each valid %XX on its own), for checking what a request could make the server echo. */
export function looseDecode(text: string): string {
  return text.replace(/%([0-9a-fA-F]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
}

/** Every reading of a request's bytes the server might echo back: raw, percent-decoded, '+' as space, UTF-8. */
export function requestReadings(req: WireRequest): string[] {
  const head = [req.method, req.target, ...req.headers.map(([k, v]) => `${k}: ${v}`)].join('\n');
  const texts = [head, req.body?.toString('latin1') ?? '', req.body?.toString('utf8') ?? ''];
  const out: string[] = [];
  for (const t of texts) {
    out.push(t, looseDecode(t), looseDecode(t.replace(/\+/g, ' ')), looseDecode(looseDecode(t)));
    // JSON string escapes (\u002f, \/) decode to the characters they stand for.
    out.push(t.replace(/\\u([0-9a-fA-F]{4})/g, (_, h) => String.fromCharCode(parseInt(h, 16))).replace(/\\\//g, '/'));
  }
  return out;
}

/** True when some reading of the request contains a leak pattern itself (then an echo is not a leak). */
export function requestCarriesLeakPattern(req: WireRequest): boolean {
  return requestReadings(req).some((t) => leakIn(t) !== undefined);
}

/**
 * RFC 9110 §12.5.1 quality of a media type under an Accept value (the most specific range wins); 1
 * when absent; NaN when a q value is not a valid qvalue (0 to 1), i.e. the header states no clear
 * preference.
 */
export function acceptQuality(accept: string | undefined, type: string): number {
  if (accept === undefined || accept.trim() === '') return 1;
  const [t, s] = type.split('/');
  let best = -1;
  let q = 0;
  for (const part of accept.split(',')) {
    const [range, ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    if (!range) continue;
    const [rt, rs] = range.split('/');
    let specificity = -1;
    if (rt === t && rs === s) specificity = 2;
    else if (rt === t && rs === '*') specificity = 1;
    else if (rt === '*' && rs === '*') specificity = 0;
    if (specificity <= best) continue;
    best = specificity;
    const qp = params.find((p) => p.startsWith('q='));
    q = qp === undefined ? 1 : /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(qp.slice(2)) ? Number(qp.slice(2)) : NaN;
  }
  return q;
}

/** The request's Accept as the server sees it (repeated headers joined by ", "). */
export function acceptOf(req: WireRequest): string | undefined {
  const values = req.headers.filter(([k]) => k.toLowerCase() === 'accept').map(([, v]) => v);
  return values.length ? values.join(', ') : undefined;
}

/**
 * The path of the request target as the server reads it: up to the first blank of the request line,
 * without query or fragment, absolute-form targets reduced to their path.
 */
export function targetPath(target: string): string {
  let t = target.trimStart().split(/[ \t]/)[0];
  const abs = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/.exec(t);
  if (abs) t = t.slice(abs[0].length) || '/';
  const end = t.search(/[?#]/);
  return end < 0 ? t : t.slice(0, end);
}

export interface CheckOptions {
  /** The path of the HTML pages (the authorization endpoint, e.g. /oauth/authorize), or a test of a (percent-decoded) path. */
  htmlPath: string | ((path: string) => boolean);
}

export type ProblemKind = 'status-5xx' | 'error-not-json' | 'error-shape' | 'html-for-json-client' | 'leak' | 'no-response';

export interface Problem {
  kind: ProblemKind;
  message: string;
}

/**
 * The policy every answer must follow:
 * - the status is below 500;
 * - an answer with status ≥ 400 is `application/json` with `{error: string, detail: object}` (the
 *   OAuth shape `{error, error_description, detail}` included) — except the HTML pages of the
 *   authorization endpoint and the admin console, allowed unless the request's Accept prefers
 *   application/json to text/html (docs/oauth.md, docs/admin.md);
 * - no body leaks a stack trace or an absolute file path (unless the request itself carried that
 *   text, which an answer may legitimately echo).
 */
export function checkResponse(req: WireRequest, res: WireResponse, options: CheckOptions): Problem[] {
  const problems: Problem[] = [];
  const contentType = header(res, 'content-type') ?? '';
  const text = res.body.toString('utf8');
  const isHead = req.method === 'HEAD';
  if (res.status >= 500) problems.push({ kind: 'status-5xx', message: `status ${res.status}` });
  if (res.status >= 400) {
    const accept = acceptOf(req);
    const [qJson, qHtml] = [acceptQuality(accept, 'application/json'), acceptQuality(accept, 'text/html')];
    const path = looseDecode(targetPath(req.target));
    const htmlPage = typeof options.htmlPath === 'string' ? path === options.htmlPath : options.htmlPath(path);
    const htmlAllowed = htmlPage && !(qJson > qHtml);
    if (/^text\/html/i.test(contentType) && htmlPage && !htmlAllowed) {
      problems.push({ kind: 'html-for-json-client', message: `status ${res.status} answered with an HTML page although Accept ${JSON.stringify(accept)} prefers application/json` });
    } else if (!(/^text\/html/i.test(contentType) && htmlAllowed)) {
      if (!/^application\/json(\s*;|$)/i.test(contentType)) {
        problems.push({ kind: 'error-not-json', message: `status ${res.status} with Content-Type ${JSON.stringify(contentType)} (expected application/json)` });
      } else if (!isHead) {
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {
          problems.push({ kind: 'error-shape', message: `status ${res.status}: body is not JSON` });
        }
        if (json !== undefined) {
          const ok =
            json !== null &&
            typeof json === 'object' &&
            !Array.isArray(json) &&
            typeof json.error === 'string' &&
            json.error.length > 0 &&
            typeof json.detail === 'object' &&
            json.detail !== null &&
            !Array.isArray(json.detail);
          if (!ok) problems.push({ kind: 'error-shape', message: `status ${res.status}: body is not {error: string, detail: object}` });
        }
      }
    }
  }
  const leak = leakIn(text) ?? leakIn(res.body.toString('latin1'));
  if (leak && !requestCarriesLeakPattern(req)) problems.push({ kind: 'leak', message: `the body leaks ${leak}` });
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Descriptions for failure reports

function printable(s: string, max = 400): string {
  const shown = s.length > max ? `${s.slice(0, max)}… (${s.length} chars)` : s;
  return JSON.stringify(shown);
}

function bodyDescription(body: Buffer | undefined): string {
  if (!body || body.length === 0) return '(none)';
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  let asText: string | undefined;
  try {
    asText = utf8.decode(body);
  } catch {
    asText = undefined;
  }
  const hex = body.subarray(0, 160).toString('hex') + (body.length > 160 ? '…' : '');
  return `${body.length} bytes${asText === undefined ? ' (not UTF-8)' : ''} hex=${hex}${asText !== undefined ? ` text=${printable(asText, 300)}` : ` latin1=${printable(body.toString('latin1'), 300)}`}`;
}

export function describeRequest(req: WireRequest): string {
  const lines = [`${printable(req.method, 80)} ${printable(req.target, 600)}${req.version !== undefined ? ` ${JSON.stringify(req.version)}` : ''}${req.raw || req.manualFraming || req.noHost ? ' [raw]' : ''}`];
  if (req.noHost) lines.push('  (no Host header)');
  for (const [k, v] of req.headers) lines.push(`  ${printable(k, 80)}: ${printable(v, 300)}`);
  lines.push(`  body: ${bodyDescription(req.body)}`);
  return lines.join('\n');
}

export function describeResponse(res: WireResponse): string {
  const ct = header(res, 'content-type');
  return `${res.status} via ${res.via}, content-type ${JSON.stringify(ct ?? null)}, body ${printable(res.body.toString('utf8'), 500)}`;
}
