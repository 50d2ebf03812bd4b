// HTTP fuzzing of one running server: at least 20,000 requests over every route and method —
// valid ones generated from the server's own OpenAPI document (plus a hand-written table of the
// routes it does not describe: the authorization server, /health, the index documents), then
// hostile mutations of them (wrong JSON types, bodies over the limit, deep nesting, invalid UTF-8,
// bad percent-encoding, odd and repeated headers, unusual methods, path tricks, repeated query and
// form parameters, broken framing). Every answer must follow the error policy: status < 500,
// errors as `application/json` `{error, detail}` (HTML only for the authorization pages a browser
// asked for), no stack trace or file path in any body; and the server must still be healthy after.
//
// Reproduce a run with FUZZ_SEED=<seed printed at the start>. FUZZ_RUNS (default 20400) and
// FUZZ_CONCURRENCY (default 24) tune the volume. A failing request is replayed from its seed and
// run index, shrunk by fast-check, and printed with its bytes.
// Spawned server (test/helpers/server.ts), not in process: broken framing and raw bytes on real connections.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { startServer, type TestServer } from './helpers/server.js';
import { CookieJar, addClient, authorizeUrl, basic, hiddenField, obtainCode, page, post, signIn } from './helpers/oauth.js';
import {
  FuzzTransport,
  NoResponseError,
  checkResponse,
  describeRequest,
  targetPath,
  describeResponse,
  type Problem,
  type WireRequest,
  type WireResponse,
} from './helpers/fuzz.js';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
const TOTAL = Number(process.env.FUZZ_RUNS ?? 20_400);
const WORKERS = Number(process.env.FUZZ_CONCURRENCY ?? 24);
const CHUNK = 25;
const MIN_REQUESTS = 20_000;
const BODY_LIMIT = 65_536;
const MAX_SHRINKS = 16;
const SHRINK_TIME_MS = 5_000;
const SHRINK_BUDGET_MS = 15_000;

console.log(`http-fuzz: FUZZ_SEED=${SEED} (runs ${TOTAL}, ${WORKERS} in flight); reproduce with FUZZ_SEED=${SEED}`);
assert.ok(Number.isInteger(SEED), `FUZZ_SEED must be an integer, got ${process.env.FUZZ_SEED}`);

// ---------------------------------------------------------------------------------------------
// The server and what exists on it

let server: TestServer;
let transport: FuzzTransport;
let openapi: any;

interface Browser {
  cookie: string;
  csrf: string;
  request: string;
}

const ctx = {
  apiBase: '/v1',
  username: '',
  password: '',
  clientId: '',
  clientSecret: '',
  redirectUri: '',
  scopes: [] as string[],
  userToken: '',
  clientToken: '',
  /** Never shown to the fuzzer: the authenticated request after the run. */
  sentinelToken: '',
  signedIn: { cookie: '', csrf: '', request: '' } as Browser,
  anonymous: { cookie: '', csrf: '', request: '' } as Browser,
};

/** Ids that exist (they are resolved when a request is sent; records made by the fuzzer join them). */
const pools = {
  records: new Map<string, { id: string; parent?: string }[]>(),
  codes: [] as string[],
  refresh: [] as string[],
  access: [] as string[],
};
const POOL_MAX = 64;

function remember<T>(list: T[], item: T): void {
  list.push(item);
  if (list.length > POOL_MAX) list.splice(0, list.length - POOL_MAX);
}
function pool(name: string): { id: string; parent?: string }[] {
  let p = pools.records.get(name);
  if (!p) pools.records.set(name, (p = []));
  return p;
}

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

async function passwordToken() {
  const r = await post(server, 'token', { grant_type: 'password', username: ctx.username, password: ctx.password }, { auth: basic(ctx.clientId, ctx.clientSecret) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as { access_token: string; refresh_token?: string };
}

async function create(token: string, target: string, body: unknown): Promise<string> {
  const r = await server.json('POST', target, body, bearer(token));
  assert.ok(r.status === 201 || r.status === 202, `${target}: ${r.status} ${r.text}`);
  return r.body.id;
}

// A 1×1 PNG, and the shortest files the other accepted types recognise.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0xff, 0xd9]);

async function upload(token: string, article: string): Promise<string> {
  const res = await server.fetch(`/v1/articles/${article}/attachments`, {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'image/png', 'content-disposition': 'attachment; filename="dot.png"' },
    body: PNG,
  });
  const text = await res.text();
  assert.equal(res.status, 201, text);
  return JSON.parse(text).id;
}

before(async () => {
  server = await startServer({
    config: {
      // The demo deployment (demo user and confidential demo client, the demo's login throttle:
      // wrong passwords soon get 429, which keeps argon2 from eating the run's CPU), with a body
      // limit small enough to send many bodies over it and quotas 20,000 requests do not exhaust.
      auth: { demo: true },
      api: { rateLimit: { max: 10_000_000, window: 60 } },
      server: { bodyLimit: BODY_LIMIT },
    },
  });
  transport = new FuzzTransport(server);
  const creds = JSON.parse(readFileSync(path.join(server.dataDir, 'demo-credentials.json'), 'utf8'));
  Object.assign(ctx, {
    username: creds.username,
    password: creds.password,
    clientId: creds.client_id,
    clientSecret: creds.client_secret,
    redirectUri: creds.redirect_uri,
  });

  const doc = await server.json('GET', '/v1/openapi.json');
  assert.equal(doc.status, 200, doc.text);
  openapi = doc.body;
  ctx.apiBase = new URL(openapi.servers[0].url).pathname.replace(/\/$/, '');
  ctx.scopes = Object.keys(openapi.components.securitySchemes.oauth2.flows.clientCredentials.scopes);

  // Tokens: the user's (password grant; its refresh token stays here), a second grant whose tokens
  // the fuzzer may revoke and refresh, the client's own (client_credentials, another owner), and
  // the sentinel checked at the end. The sentinel is the user's grant to another app, which the
  // fuzzer never calls: a user has one grant per app, and a fuzzed sign-in, consent or revocation
  // for the demo app may rightly narrow or end that one.
  ctx.userToken = (await passwordToken()).access_token;
  const spare = await passwordToken();
  remember(pools.access, spare.access_token);
  remember(pools.refresh, spare.refresh_token!);
  const sentinelApp = addClient(server, 'fuzz-sentinel', ['--grant', 'password']);
  const sentinel = await post(server, 'token', { grant_type: 'password', username: ctx.username, password: ctx.password }, { auth: basic(sentinelApp.client_id, sentinelApp.client_secret!) });
  assert.equal(sentinel.status, 200, JSON.stringify(sentinel.body));
  ctx.sentinelToken = sentinel.body.access_token;
  const cc = await post(server, 'token', { grant_type: 'client_credentials' }, { auth: basic(ctx.clientId, ctx.clientSecret) });
  assert.equal(cc.status, 200, JSON.stringify(cc.body));
  ctx.clientToken = cc.body.access_token;
  const cc2 = await post(server, 'token', { grant_type: 'client_credentials', scope: 'zoos:read orders:write' }, { auth: basic(ctx.clientId, ctx.clientSecret) });
  remember(pools.access, cc2.body.access_token);

  // Records of two owners, children, attachments, jobs.
  for (const [token, owner] of [
    [ctx.userToken, 'user'],
    [ctx.clientToken, 'client'],
  ] as const) {
    for (let i = 0; i < 3; i++) {
      const zoo = await create(token, '/v1/zoos', { name: `Zoo ${owner} ${i}`, city: i % 2 ? 'Berlin' : 'Wien', founded: 1800 + i });
      remember(pool('zoos'), { id: zoo });
      for (let j = 0; j < 2; j++)
        remember(pool('animals'), { id: await create(token, `/v1/zoos/${zoo}/animals`, { name: `A${i}${j}`, species: 'gorilla' }), parent: zoo });
      remember(pool('orders'), { id: await create(token, '/v1/orders', { item: `hay ${i}`, quantity: i + 1, status: 'pending' }) });
      const article = await create(token, '/v1/articles', { title: `T${i}`, body: 'text' });
      remember(pool('articles'), { id: article });
      remember(pool('attachments'), { id: await upload(token, article), parent: article });
    }
    const job = await server.json('POST', '/v1/orders', [{ item: 'bulk', quantity: 2 }, { item: 'bad', quantity: 0 }], bearer(token));
    assert.equal(job.status, 202, job.text);
    remember(pool('jobs'), { id: job.body.id });
  }

  // The browser side: a signed-in browser on the consent page, an anonymous one on the login
  // page (cookies, CSRF token, the hidden request field), and authorization codes.
  const jar = new CookieJar();
  const consent = await signIn(
    server,
    jar,
    authorizeUrl({ response_type: 'code', client_id: ctx.clientId, redirect_uri: ctx.redirectUri, scope: 'zoos:read zoos:write', state: 'fz' }),
    ctx.username,
    ctx.password,
  );
  ctx.signedIn = { cookie: jar.header(), csrf: hiddenField(consent.html, 'csrf_token'), request: hiddenField(consent.html, 'request') };
  const anonJar = new CookieJar();
  const login = await page(server, anonJar, authorizeUrl({ response_type: 'code', client_id: ctx.clientId, state: 'anon' }));
  assert.equal(login.status, 200, login.html);
  ctx.anonymous = { cookie: anonJar.header(), csrf: hiddenField(login.html, 'csrf_token'), request: hiddenField(login.html, 'request') };
  for (let i = 0; i < 2; i++) {
    const { code } = await obtainCode(server, { clientId: ctx.clientId, redirectUri: ctx.redirectUri, username: ctx.username, password: ctx.password, jar });
    remember(pools.codes, code);
  }
});

after(async () => {
  await server?.cleanup();
});

// ---------------------------------------------------------------------------------------------
// Request templates: what the generators build. `@@…@@` markers stand for ids and tokens that
// exist when the request is sent (pools change while the fuzzer runs).

interface Tpl {
  op: string;
  method: string;
  path: string;
  query: string;
  /** Replaces path + query when a mutation builds an unusual request target. */
  target?: string;
  headers: Array<[string, string]>;
  body?: Buffer;
  raw?: boolean;
  /** Hand-made framing of the final body (applied when the request is sent, after every mutation). */
  framing?: Framing;
  noHost?: boolean;
  version?: string;
  mutations: string[];
}

type Framing = 'chunked' | 'cl-short' | 'cl-twice' | 'cl-twice-different' | 'cl-and-te' | 'te-bad-chunk' | 'cl-negative' | 'cl-huge' | 'cl-plus' | 'te-twice' | 'te-unknown';

const MARKER = /@@R:([a-z]+):(\d+):(id|parent)@@|@@([CFA]):(\d+)@@/g;

/** Markers a mutation cut in two stay as they are: literal garbage. */
function resolveMarkers(text: string): string {
  return text.replace(MARKER, (_m, collection: string | undefined, index: string, field: string, kind: string, n: string) => {
    if (collection !== undefined) {
      const list = pool(collection);
      if (!list.length) return '0190a0a0-0000-7000-8000-000000000000';
      const rec = list[Number(index) % list.length];
      return (field === 'parent' ? rec.parent : rec.id) ?? rec.id;
    }
    const list = kind === 'C' ? pools.codes : kind === 'F' ? pools.refresh : pools.access;
    return list.length ? list[Number(n) % list.length] : `none-${kind}-${n}`;
  });
}

function toWire(t: Tpl): WireRequest {
  const target = t.target ?? (t.query !== '' ? `${t.path}?${t.query}` : t.path);
  let body = t.body && t.body.includes('@@') ? Buffer.from(resolveMarkers(t.body.toString('latin1')), 'latin1') : t.body;
  let headers = t.headers.map(([k, v]): [string, string] => [k, resolveMarkers(v)]);
  if (t.framing) [headers, body] = frame(t.framing, headers, body && body.length ? body : Buffer.from('{"name":"framing"}'));
  return { method: t.method, target: resolveMarkers(target), headers, body, raw: t.raw || Boolean(t.framing), manualFraming: Boolean(t.framing), noHost: t.noHost, version: t.version };
}

/** Content-Length / Transfer-Encoding as the framing mutation asked, around the body the request ends up with. */
function frame(kind: Framing, h: Pairs, body: Buffer): [Pairs, Buffer] {
  const n = body.length;
  switch (kind) {
    case 'chunked':
      return [[...h, ['Transfer-Encoding', 'chunked']], chunked(body, 8)];
    case 'cl-short':
      return [[...h, ['Content-Length', String(Math.max(0, n - 3))]], body];
    case 'cl-twice':
      return [[...h, ['Content-Length', String(n)], ['Content-Length', String(n)]], body];
    case 'cl-twice-different':
      return [[...h, ['Content-Length', String(n)], ['Content-Length', String(n + 1)]], body];
    case 'cl-and-te':
      return [[...h, ['Content-Length', String(n)], ['Transfer-Encoding', 'chunked']], chunked(body, 2)];
    case 'te-bad-chunk':
      return [[...h, ['Transfer-Encoding', 'chunked']], Buffer.concat([Buffer.from('zz\r\n'), body, Buffer.from('\r\n0\r\n\r\n')])];
    case 'cl-negative':
      return [[...h, ['Content-Length', '-1']], body];
    case 'cl-huge':
      return [[...h, ['Content-Length', '99999999999999999999999']], body];
    case 'cl-plus':
      return [[...h, ['Content-Length', `+${n}`]], body];
    case 'te-twice':
      return [[...h, ['Transfer-Encoding', 'chunked'], ['Transfer-Encoding', 'chunked']], chunked(body, 2)];
    case 'te-unknown':
      return [[...h, ['Transfer-Encoding', 'gzip, chunked']], chunked(body, 2)];
  }
}

function describeTpl(t: Tpl): string {
  return `[${t.op}] mutations: ${t.mutations.join(', ') || 'none'}\n${describeRequest(toWire(t))}`;
}

const rec = (collection: string, n: number, field: 'id' | 'parent' = 'id') => `@@R:${collection}:${n}:${field}@@`;

// ---------------------------------------------------------------------------------------------
// Values

const SAFE_CHARS = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.,:;!?()[]{}\'"\\/é€ü漢🦒'];
const safeString = (maxLength = 16, minLength = 0) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.string({ unit: fc.constantFrom(...SAFE_CHARS), minLength, maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength, maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength, maxLength }) },
  );
const token64 = fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'), minLength: 0, maxLength: 64 });
const garbageSegment = fc.oneof(
  fc.constantFrom('0', '-1', 'null', 'undefined', 'NaN', '1e309', 'x'.repeat(40), '00000000-0000-0000-0000-000000000000', "'%20OR%201=1--", '%F0%9F%A6%92', '__proto__', 'constructor', '.', '%2e'),
  fc.string({ unit: fc.constantFrom(...'abcdef0123456789-'), minLength: 1, maxLength: 40 }),
);

function enc(text: string): string {
  return encodeURIComponent(text);
}
function formEncode(pairs: Array<[string, string]>): string {
  return pairs.map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&');
}
function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

/** A JSON value valid (mostly) for a JSON Schema of the OpenAPI document. */
function fromSchema(schema: any, optionalAll = false, nullable = false, depth = 0): fc.Arbitrary<unknown> {
  if (schema?.$ref) return fromSchema(deref(schema.$ref), optionalAll, nullable, depth);
  let arb: fc.Arbitrary<unknown>;
  if (schema?.oneOf) arb = fc.oneof(...schema.oneOf.map((s: any) => fromSchema(s, optionalAll, nullable, depth)));
  else if (schema?.enum) arb = fc.constantFrom(...schema.enum);
  else
    switch (schema?.type) {
      case 'object': {
        const model: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [name, s] of Object.entries<any>(schema.properties ?? {})) {
          if (s.readOnly || name === 'link') continue;
          const parent = /^(\w+)_id$/.exec(name);
          model[name] =
            parent && pools.records.has(`${parent[1]}s`)
              ? fc.oneof({ weight: 8, arbitrary: fc.nat(63).map((n) => rec(`${parent[1]}s`, n)) }, { weight: 1, arbitrary: fc.uuid() })
              : fromSchema(s, false, nullable, depth + 1);
        }
        const required = optionalAll ? [] : (schema.required ?? []).filter((k: string) => k in model);
        arb = fc.record(model, { requiredKeys: required });
        break;
      }
      case 'array':
        arb = fc.array(fromSchema(schema.items ?? {}, optionalAll, nullable, depth + 1), { minLength: schema.minItems ?? 1, maxLength: 4 });
        break;
      case 'string':
        arb = safeString(Math.max(24, schema.minLength ?? 0), schema.minLength ?? 0);
        break;
      case 'integer':
        arb = fc.oneof(
          { weight: 5, arbitrary: fc.integer({ min: schema.minimum ?? -1000, max: Math.max(schema.minimum ?? -1000, schema.maximum ?? 100_000) }) },
          { weight: 1, arbitrary: fc.integer() },
        );
        break;
      case 'number':
        arb = fc.double({ noNaN: true, noDefaultInfinity: true });
        break;
      case 'boolean':
        arb = fc.boolean();
        break;
      default:
        arb = fc.jsonValue({ maxDepth: 2 });
    }
  return nullable && depth > 0 ? fc.oneof({ weight: 4, arbitrary: arb }, { weight: 1, arbitrary: fc.constant(null) }) : arb;
}

function deref(ref: string): any {
  return ref
    .replace(/^#\//, '')
    .split('/')
    .reduce((o: any, k) => o?.[k], openapi);
}

const JSON_TYPE = ['content-type', 'application/json'] as [string, string];
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

function jsonBody(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value) ?? 'null', 'utf8');
}

const authHeader = () =>
  fc.oneof(
    { weight: 14, arbitrary: fc.constant<[string, string][]>([['authorization', `Bearer ${ctx.userToken}`]]) },
    { weight: 5, arbitrary: fc.constant<[string, string][]>([['authorization', `Bearer ${ctx.clientToken}`]]) },
    { weight: 1, arbitrary: fc.nat(63).map((n): [string, string][] => [['authorization', `Bearer @@A:${n}@@`]]) },
    { weight: 1, arbitrary: fc.constant<[string, string][]>([]) },
  );
const acceptHeader = (types: string[] = ['application/json']) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...types).map((v): [string, string][] => [['accept', v]]) },
    { weight: 3, arbitrary: fc.constant<[string, string][]>([]) },
    { weight: 1, arbitrary: fc.constantFrom('*/*', 'application/*', 'application/json, */*;q=0.1').map((v): [string, string][] => [['accept', v]]) },
  );

// ---------------------------------------------------------------------------------------------
// Operations: the OpenAPI document's, then the hand-written table of what it does not describe

interface Op {
  label: string;
  source: 'openapi' | 'table';
  arb: fc.Arbitrary<Tpl>;
}

function pathArb(template: string): fc.Arbitrary<string> {
  const segments = template.split('/');
  const params: { index: number; collection: string }[] = [];
  segments.forEach((s, i) => {
    // A parameter names a record of the collection before it (zoos, animals, …, attachments, jobs: one pool each).
    if (/^\{\w+\}$/.test(s)) params.push({ index: i, collection: segments[i - 1] });
  });
  if (!params.length) return fc.constant(template);
  const last = params[params.length - 1];
  const single = (collection: string) =>
    fc.oneof(
      { weight: 14, arbitrary: fc.nat(63).map((n) => rec(collection, n)) },
      { weight: 2, arbitrary: fc.uuid() },
      { weight: 2, arbitrary: garbageSegment },
    );
  // Two parameters (a parent and a child): usually a real pair, sometimes independent values.
  const values: fc.Arbitrary<string[]> =
    params.length === 1
      ? single(last.collection).map((v) => [v])
      : fc.oneof(
          { weight: 4, arbitrary: fc.nat(63).map((n) => [...params.slice(0, -1).map(() => rec(last.collection, n, 'parent')), rec(last.collection, n)]) },
          { weight: 1, arbitrary: fc.tuple(...params.map((p) => single(p.collection))) },
        );
  return values.map((vs) => {
    const out = [...segments];
    params.forEach((p, i) => (out[p.index] = vs[i]));
    return out.join('/');
  });
}

function queryArb(parameters: any[]): fc.Arbitrary<string> {
  const query = parameters.filter((p) => p.in === 'query');
  if (!query.length) return fc.constant('');
  const model: Record<string, fc.Arbitrary<string>> = {};
  for (const p of query) {
    const s = p.schema ?? {};
    // The event feed's long poll: at most a second here (its own tests wait longer), or invalid.
    if (p.name === 'wait') model[p.name] = fc.constantFrom('0', '1', '31', '-1', 'x');
    else if (p.name === 'zoo_id' || /_id$/.test(p.name))
      model[p.name] = fc.oneof(fc.nat(63).map((n) => rec(`${p.name.replace(/_id$/, '')}s`, n)), fc.uuid(), garbageSegment);
    else if (s.enum) model[p.name] = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...s.enum.map(String)) }, { weight: 1, arbitrary: safeString(8) });
    else if (s.type === 'integer')
      model[p.name] = fc.oneof(
        { weight: 6, arbitrary: fc.integer({ min: s.minimum ?? 0, max: Math.max(s.minimum ?? 0, 120) }).map(String) },
        { weight: 1, arbitrary: fc.constantFrom('-1', '0', '1.5', 'abc', '', '1e3', '99999999999999999999', ' 1') },
      );
    else model[p.name] = safeString(12);
  }
  return fc.record(model, { requiredKeys: [] }).map((values) => formEncode(Object.entries(values) as Pairs));
}

const attachmentBody: fc.Arbitrary<{ type: string; body: Buffer }> = fc.oneof(
  fc.constant({ type: 'image/png', body: PNG }),
  fc.constant({ type: 'image/jpeg', body: JPEG }),
  fc.constant({ type: 'application/pdf', body: PDF }),
  fc.uint8Array({ maxLength: 64 }).map((b) => ({ type: 'image/png', body: Buffer.concat([PNG.subarray(0, 8), Buffer.from(b)]) })),
  fc.uint8Array({ maxLength: 64 }).map((b) => ({ type: 'application/pdf', body: Buffer.from(b) })),
  fc.constant({ type: 'text/plain', body: Buffer.from('hello') }),
  fc.constant({ type: 'image/png', body: Buffer.alloc(0) }),
  fc.tuple(fc.constantFrom('image/png', 'application/pdf', 'text/plain', 'application/octet-stream', ''), fc.constantFrom('file', 'other', ''), fc.boolean(), fc.constantFrom('dot.png', '../../x.png', '', 'a"b.png', 'ü.pdf')).map(
    ([type, field, withFile, filename]) => {
      const boundary = 'fzBoundary123';
      const content = type === 'application/pdf' ? PDF : PNG;
      const part = withFile
        ? `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`
        : `--${boundary}\r\nContent-Disposition: form-data; name="${field}"\r\n\r\nvalue`;
      return {
        type: `multipart/form-data; boundary=${boundary}`,
        body: Buffer.concat([Buffer.from(part, 'latin1'), withFile ? content : Buffer.alloc(0), Buffer.from(`\r\n--${boundary}--\r\n`)]),
      };
    },
  ),
);

function resourceOp(method: string, template: string, pathItem: any, operation: any): Op {
  const full = ctx.apiBase + template;
  const label = `${method} ${full}`;
  const parameters = [...(pathItem.parameters ?? []), ...(operation.parameters ?? [])];
  const headerParams = parameters.filter((p: any) => p.in === 'header').map((p: any) => p.name as string);
  const responseTypes = Object.keys(operation.responses?.['200']?.content ?? { 'application/json': {} });

  let bodyArb: fc.Arbitrary<{ type?: string; body?: Buffer }> = fc.constant({});
  const content = operation.requestBody?.content;
  if (content) {
    if (content['multipart/form-data'] || content['image/png']) bodyArb = attachmentBody;
    else {
      // PATCH is a merge patch of the record: the PUT schema with every field optional or null.
      const patch = method === 'PATCH' ? pathItem.put?.requestBody?.content?.['application/json']?.schema : undefined;
      const schema = patch ?? content['application/json']?.schema ?? Object.values<any>(content)[0]?.schema;
      const types = Object.keys(content);
      bodyArb = fc.tuple(fromSchema(schema, Boolean(patch), Boolean(patch)), fc.constantFrom(...types)).map(([value, type]) => ({ type, body: jsonBody(value) }));
    }
  }
  const headerParamArb = fc
    .record(
      Object.fromEntries(
        headerParams.map((name: string) => [
          name,
          name.toLowerCase() === 'if-match'
            ? fc.constantFrom('*', '"1"', '"2"', '"1", "2"', '"7"')
            : fc.oneof(fc.nat(40).map((n) => `fz-key-${n}`), token64.filter((s) => s.length > 0)),
        ]),
      ),
      { requiredKeys: [] },
    )
    .map((r) => Object.entries(r) as [string, string][]);

  const arb = fc
    .record({
      path: pathArb(full),
      query: method === 'GET' || method === 'HEAD' ? queryArb(parameters) : fc.constant(''),
      auth: authHeader(),
      accept: acceptHeader(responseTypes),
      extra: headerParamArb,
      body: bodyArb,
    })
    .map(
      ({ path: p, query, auth, accept, extra, body }): Tpl => ({
        op: label,
        method,
        path: p,
        query,
        headers: [...auth, ...accept, ...extra, ...(body.type !== undefined ? [['content-type', body.type] as [string, string]] : [])],
        body: body.body,
        mutations: [],
      }),
    );
  return { label, source: 'openapi', arb };
}

// The authorization server.

type Pairs = Array<[string, string]>;

const scopeArb = () =>
  fc.oneof(
    { weight: 6, arbitrary: fc.subarray(ctx.scopes, { minLength: 1 }).map((s) => s.join(' ')) },
    { weight: 1, arbitrary: fc.constantFrom('openid', 'zoos:admin', 'zoos:read  zoos:write', ' ', 'zoos:read,zoos:write', 'ZOOS:READ', 'zoos:read\tzoos:write') },
  );

/** Client authentication: headers and body parameters. */
const clientAuthArb = (): fc.Arbitrary<{ headers: Pairs; params: Pairs }> =>
  fc.oneof(
    { weight: 10, arbitrary: fc.constant({ headers: [['authorization', basic(ctx.clientId, ctx.clientSecret)]] as Pairs, params: [] as Pairs }) },
    { weight: 3, arbitrary: fc.constant({ headers: [] as Pairs, params: [['client_id', ctx.clientId], ['client_secret', ctx.clientSecret]] as Pairs }) },
    { weight: 1, arbitrary: safeString(20).map((s) => ({ headers: [['authorization', basic(ctx.clientId, s)]] as Pairs, params: [] as Pairs })) },
    { weight: 1, arbitrary: safeString(20).map((s) => ({ headers: [['authorization', basic(s, ctx.clientSecret)]] as Pairs, params: [] as Pairs })) },
    {
      weight: 1,
      arbitrary: fc.constant({
        headers: [['authorization', basic(ctx.clientId, ctx.clientSecret)]] as Pairs,
        params: [['client_id', ctx.clientId], ['client_secret', ctx.clientSecret]] as Pairs,
      }),
    },
    { weight: 1, arbitrary: fc.constant({ headers: [] as Pairs, params: [['client_id', ctx.clientId]] as Pairs }) },
    { weight: 1, arbitrary: fc.constant({ headers: [] as Pairs, params: [] as Pairs }) },
    { weight: 1, arbitrary: fc.constantFrom('Basic', 'Basic !!!', `Basic ${b64(':')}`, `Basic ${b64('%ZZ:%ZZ')}`, `Basic ${b64('a')}`, 'Bearer x').map((v) => ({ headers: [['authorization', v]] as Pairs, params: [] as Pairs })) },
  );

const opt = <T>(arb: fc.Arbitrary<T>, weight = 3) => fc.option(arb, { freq: weight, nil: undefined });

function oauthBody(params: Pairs, asJson: boolean): { type: string; body: Buffer } {
  if (asJson) return { type: 'application/json', body: jsonBody(Object.fromEntries(params)) };
  return { type: 'application/x-www-form-urlencoded', body: Buffer.from(formEncode(params), 'utf8') };
}

function present(entries: Array<[string, string | undefined]>): Pairs {
  return entries.filter((e): e is [string, string] => e[1] !== undefined);
}

function tokenEndpointArb(): fc.Arbitrary<Tpl> {
  const grants: fc.Arbitrary<Pairs> = fc.oneof(
    fc
      .record({
        code: fc.oneof({ weight: 4, arbitrary: fc.nat(63).map((n) => `@@C:${n}@@`) }, { weight: 1, arbitrary: token64 }),
        redirect: opt(fc.oneof(fc.constant(ctx.redirectUri), fc.constantFrom('https://evil.example/cb', `${ctx.redirectUri}/`, ''))),
        verifier: opt(token64, 1),
      })
      .map(({ code, redirect, verifier }) => present([['grant_type', 'authorization_code'], ['code', code], ['redirect_uri', redirect], ['code_verifier', verifier]])),
    fc
      .record({
        username: fc.oneof({ weight: 4, arbitrary: fc.constant(ctx.username) }, { weight: 1, arbitrary: safeString(12) }),
        password: fc.oneof({ weight: 1, arbitrary: fc.constant(ctx.password) }, { weight: 10, arbitrary: safeString(16) }),
        scope: opt(scopeArb()),
      })
      .map(({ username, password, scope }) => present([['grant_type', 'password'], ['username', username], ['password', password], ['scope', scope]])),
    opt(scopeArb()).map((scope) => present([['grant_type', 'client_credentials'], ['scope', scope]])),
    fc
      .record({ token: fc.oneof({ weight: 3, arbitrary: fc.nat(63).map((n) => `@@F:${n}@@`) }, { weight: 1, arbitrary: token64 }), scope: opt(scopeArb(), 1) })
      .map(({ token, scope }) => present([['grant_type', 'refresh_token'], ['refresh_token', token], ['scope', scope]])),
    fc
      .constantFrom('implicit', 'token', '', 'PASSWORD', 'urn:ietf:params:oauth:grant-type:jwt-bearer', 'device_code', 'client_credentials ')
      .map((g): Pairs => [['grant_type', g]]),
  );
  return fc
    .record({ params: grants, auth: clientAuthArb(), json: fc.nat(5).map((n) => n === 0), accept: acceptHeader() })
    .map(({ params, auth, json, accept }): Tpl => {
      const { type, body } = oauthBody([...params, ...auth.params], json);
      return { op: 'POST /oauth/token', method: 'POST', path: '/oauth/token', query: '', headers: [...auth.headers, ...accept, ['content-type', type]], body, mutations: [] };
    });
}

function tokenManagementArb(endpoint: 'revocation' | 'introspection'): fc.Arbitrary<Tpl> {
  return fc
    .record({
      token: fc.oneof(
        { weight: 3, arbitrary: fc.nat(63).map((n) => `@@A:${n}@@`) },
        { weight: 2, arbitrary: fc.nat(63).map((n) => `@@F:${n}@@`) },
        { weight: 2, arbitrary: token64 },
      ),
      hint: opt(fc.constantFrom('access_token', 'refresh_token', 'id_token', '', 'ACCESS_TOKEN'), 1),
      auth: clientAuthArb(),
      json: fc.nat(5).map((n) => n === 0),
      accept: acceptHeader(),
    })
    .map(({ token, hint, auth, json, accept }): Tpl => {
      const { type, body } = oauthBody([...present([['token', token], ['token_type_hint', hint]]), ...auth.params], json);
      return { op: `POST /oauth/${endpoint}`, method: 'POST', path: `/oauth/${endpoint}`, query: '', headers: [...auth.headers, ...accept, ['content-type', type]], body, mutations: [] };
    });
}

const authorizeQueryArb = (): fc.Arbitrary<Pairs> =>
  fc
    .record(
      {
        response_type: fc.oneof({ weight: 6, arbitrary: fc.constantFrom('code', 'token') }, { weight: 1, arbitrary: fc.constantFrom('code token', 'id_token', '', 'CODE') }),
        client_id: fc.oneof({ weight: 8, arbitrary: fc.constant(ctx.clientId) }, { weight: 1, arbitrary: safeString(10) }),
        redirect_uri: fc.oneof(
          { weight: 4, arbitrary: fc.constant(ctx.redirectUri) },
          { weight: 1, arbitrary: fc.constantFrom('https://evil.example/cb', 'javascript:alert(1)', `${ctx.redirectUri}#x`, `${ctx.redirectUri}?a=b`, `${ctx.redirectUri}/`, '') },
        ),
        scope: scopeArb(),
        state: safeString(16),
        code_challenge: token64,
        code_challenge_method: fc.constantFrom('S256', 'plain', 's256', ''),
      },
      { requiredKeys: [] },
    )
    .map((r) => Object.entries(r) as Pairs);

function authorizeGetArb(): fc.Arbitrary<Tpl> {
  return fc
    .record({
      query: authorizeQueryArb(),
      accept: fc.constantFrom<Pairs>([['accept', BROWSER_ACCEPT]], [['accept', 'text/html']], [['accept', 'application/json']], [], [['accept', '*/*']]),
      browser: fc.constantFrom('signedIn', 'anonymous', 'none'),
    })
    .map(({ query, accept, browser }): Tpl => ({
      op: 'GET /oauth/authorize',
      method: 'GET',
      path: '/oauth/authorize',
      query: formEncode(query),
      headers: [...accept, ...(browser === 'none' ? [] : ([['cookie', ctx[browser as 'signedIn' | 'anonymous'].cookie]] as Pairs))],
      mutations: [],
    }));
}

function authorizePostArb(): fc.Arbitrary<Tpl> {
  return fc
    .record({
      browser: fc.constantFrom('signedIn', 'anonymous', 'none'),
      csrfFrom: fc.oneof({ weight: 6, arbitrary: fc.constant('own') }, { weight: 1, arbitrary: fc.constantFrom('other', 'garbage', 'none') }),
      request: fc.oneof({ weight: 4, arbitrary: fc.constant('own') }, { weight: 1, arbitrary: authorizeQueryArb().map(formEncode) }, { weight: 1, arbitrary: fc.constant('none') }),
      step: fc.oneof({ weight: 6, arbitrary: fc.constantFrom('login', 'consent') }, { weight: 1, arbitrary: fc.constantFrom('logout', 'other', '') }),
      username: opt(fc.oneof({ weight: 3, arbitrary: fc.constant(ctx.username) }, { weight: 1, arbitrary: safeString(10) })),
      password: opt(fc.oneof({ weight: 1, arbitrary: fc.constant(ctx.password) }, { weight: 8, arbitrary: safeString(12) })),
      decision: opt(fc.oneof({ weight: 4, arbitrary: fc.constantFrom('allow', 'deny') }, { weight: 1, arbitrary: safeString(6) })),
      scopes: fc.subarray([...ctx.scopes, 'zoos:admin']),
      ttl: opt(fc.oneof({ weight: 4, arbitrary: fc.constantFrom('3600', '86400', '2592000', '7776000') }, { weight: 1, arbitrary: fc.constantFrom('0', '-1', '1e9', 'abc', '99999999999999999999') })),
      json: fc.nat(9).map((n) => n === 0),
      accept: fc.constantFrom<Pairs>([['accept', BROWSER_ACCEPT]], [['accept', 'text/html']], [['accept', 'application/json']], []),
    })
    .map((r): Tpl => {
      const own = r.browser === 'none' ? ctx.anonymous : ctx[r.browser as 'signedIn' | 'anonymous'];
      const other = r.browser === 'signedIn' ? ctx.anonymous : ctx.signedIn;
      const csrf = r.csrfFrom === 'own' ? own.csrf : r.csrfFrom === 'other' ? other.csrf : r.csrfFrom === 'garbage' ? 'x'.repeat(40) : undefined;
      const request = r.request === 'own' ? own.request : r.request === 'none' ? undefined : r.request;
      const params: Pairs = [
        ...present([['request', request], ['csrf_token', csrf], ['step', r.step], ['username', r.username], ['password', r.password], ['decision', r.decision], ['ttl', r.ttl]]),
        ...r.scopes.map((s): [string, string] => ['scope', s]),
      ];
      const { type, body } = r.json ? oauthBody(params, true) : oauthBody(params, false);
      return {
        op: 'POST /oauth/authorize',
        method: 'POST',
        path: '/oauth/authorize',
        query: '',
        headers: [...r.accept, ...(r.browser === 'none' ? [] : ([['cookie', own.cookie]] as Pairs)), ['content-type', type]],
        body,
        mutations: [],
      };
    });
}

/** Routes without parameters of their own (index documents, metadata, health): any query, any token. */
function plainOp(method: string, p: string): Op {
  const label = `${method} ${p}`;
  return {
    label,
    source: 'table',
    arb: fc
      .record({
        query: fc.oneof({ weight: 6, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.array(fc.tuple(safeString(6), safeString(6)), { maxLength: 3 }).map(formEncode) }),
        auth: fc.oneof({ weight: 3, arbitrary: fc.constant<Pairs>([]) }, { weight: 1, arbitrary: authHeader() }),
        accept: acceptHeader(),
      })
      .map(({ query, auth, accept }): Tpl => ({ op: label, method, path: p, query, headers: [...auth, ...accept], mutations: [] })),
  };
}

/** The HTML pages: the authorization endpoint, and the admin console (not the admin API under it). */
function isHtmlPath(path: string): boolean {
  // The authorization server's URLs answer a browser with pages (errors too: 404, 405, 503), the
  // console likewise, and the demo deployment's callback page.
  return /^\/oauth(\/|$)/.test(path) || path === '/demo/callback' || (/^\/admin(\/|$)/.test(path) && !path.startsWith('/admin/v1'));
}

/** The routes of docs/api.md, docs/oauth.md and docs/admin.md that every run must reach, whether or not the OpenAPI document lists them. */
const TABLE: Array<[string, string]> = [
  ['GET', '/'],
  ['HEAD', '/'],
  ['GET', '/v1'],
  ['HEAD', '/v1'],
  ['GET', '/v1/openapi.json'],
  ['HEAD', '/v1/openapi.json'],
  ['GET', '/health'],
  ['HEAD', '/health'],
  ['GET', '/.well-known/oauth-protected-resource'],
  ['HEAD', '/.well-known/oauth-protected-resource'],
  ['GET', '/.well-known/oauth-authorization-server'],
  ['HEAD', '/.well-known/oauth-authorization-server'],
  ['GET', '/oauth/jwks'],
  ['GET', '/oauth/authorize'],
  ['POST', '/oauth/authorize'],
  ['POST', '/oauth/token'],
  ['POST', '/oauth/revocation'],
  ['POST', '/oauth/introspection'],
  ['GET', '/admin'],
  ['POST', '/admin/signin'],
  ['GET', '/admin/clients'],
  ['POST', '/admin/clients'],
  ['GET', '/admin/grants'],
  ['POST', '/admin/maintenance'],
  ['GET', '/v0/zoos'],
  ['GET', '/v1/jobs/{id}'],
  ['HEAD', '/v1/jobs/{id}'],
  ['GET', '/v1/articles/{id}/attachments'],
  ['POST', '/v1/articles/{id}/attachments'],
  ['GET', '/v1/articles/{id}/attachments/{attachment_id}'],
  ['HEAD', '/v1/articles/{id}/attachments/{attachment_id}'],
  ['DELETE', '/v1/articles/{id}/attachments/{attachment_id}'],
];

function buildOperations(): Op[] {
  const ops = new Map<string, Op>();
  for (const [template, pathItem] of Object.entries<any>(openapi.paths)) {
    for (const m of ['get', 'put', 'post', 'patch', 'delete']) {
      if (!pathItem[m]) continue;
      const method = m.toUpperCase();
      const op = resourceOp(method, template, pathItem, pathItem[m]);
      ops.set(op.label, op);
      if (method === 'GET') {
        const head = resourceOp('HEAD', template, pathItem, pathItem[m]);
        ops.set(head.label, head);
      }
    }
  }
  for (const [method, p] of TABLE) {
    const label = `${method} ${p}`;
    if (ops.has(label)) continue;
    if (p === '/oauth/token') ops.set(label, { label, source: 'table', arb: tokenEndpointArb() });
    else if (p === '/oauth/revocation') ops.set(label, { label, source: 'table', arb: tokenManagementArb('revocation') });
    else if (p === '/oauth/introspection') ops.set(label, { label, source: 'table', arb: tokenManagementArb('introspection') });
    else if (p === '/oauth/authorize') ops.set(label, { label, source: 'table', arb: method === 'GET' ? authorizeGetArb() : authorizePostArb() });
    else if (p.includes('{')) throw new Error(`${label} is in the table but not in the OpenAPI document: describe it here`);
    else ops.set(label, plainOp(method, p));
  }
  return [...ops.values()];
}

// ---------------------------------------------------------------------------------------------
// Hostile mutations

interface Mutation {
  name: string;
  apply(t: Tpl): Tpl;
}

const mutation = (name: string, apply: (t: Tpl) => Partial<Tpl>): Mutation => ({
  name,
  apply: (t) => ({ ...t, ...apply(t), mutations: [...t.mutations, name] }),
});

function withHeader(headers: Pairs, name: string, value: string | undefined, mode: 'replace' | 'add' | 'remove' = 'replace'): Pairs {
  const others = mode === 'add' ? headers : headers.filter(([k]) => k.toLowerCase() !== name.toLowerCase());
  return mode === 'remove' || value === undefined ? others : [...others, [name, value]];
}
function headerValue(headers: Pairs, name: string): string | undefined {
  return headers.find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
}
function ensureJsonType(headers: Pairs): Pairs {
  const ct = headerValue(headers, 'content-type') ?? '';
  return /json/i.test(ct) ? headers : withHeader(headers, ...JSON_TYPE);
}
const headerMode = fc.constantFrom<'replace' | 'add' | 'remove'>('replace', 'replace', 'add', 'remove');

const WRONG_TYPES = fc.oneof(
  fc.constantFrom<unknown>(null, 0, -1, 1.5, true, false, '', 'str', [], {}, [null], [[]], 1e308, -0),
  fc
    .record(
      {
        name: fc.constantFrom<unknown>(123, null, [], {}, true, ''),
        city: fc.constantFrom<unknown>([], 5, { a: 1 }),
        founded: fc.constantFrom<unknown>('old', 1.5, 1e300, -1, '1844', null, [1844]),
        species: fc.constantFrom<unknown>(0, []),
        item: fc.constantFrom<unknown>({}, 1),
        quantity: fc.constantFrom<unknown>(0, -1, '5', 2.5, 2 ** 53 + 1, 1e400 as number, null),
        status: fc.constantFrom<unknown>('lost', 1, null),
        title: fc.constantFrom<unknown>(null, 7),
        zoo_id: fc.constantFrom<unknown>(5, null, [], '', 'not-a-uuid'),
        id: fc.constantFrom<unknown>('mine', 1),
        owner: fc.constantFrom<unknown>('user:x'),
        created_at: fc.constantFrom<unknown>('yesterday'),
        link: fc.constantFrom<unknown>({ self: 1 }),
        grant_type: fc.constantFrom<unknown>(['password'], 1, null, { a: 1 }),
        scope: fc.constantFrom<unknown>(['zoos:read'], 3, true),
        token: fc.constantFrom<unknown>([], 1, {}),
        client_id: fc.constantFrom<unknown>(1, ['demo-app']),
      },
      { requiredKeys: [] },
    )
    .map((r) => r as unknown),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
  fc.jsonValue({ maxDepth: 3 }),
);

const INVALID_UTF8: number[][] = [[0xff], [0xfe], [0xc0, 0x80], [0xc3], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc0, 0xaf], [0xe0, 0x80, 0xaf]];
const BAD_ESCAPES = ['%', '%Z', '%ZZ', '%e9', '%ff', '%c0%af', '%00', '%2', '%%', '%u0041', '%ed%a0%80', '%f0%9f', '%0a', '%0d%0a', '%2f', '%5c', '%25', '%c3%28', '%fe%ff'];

function insertAt(text: string, at: number, insert: string): string {
  const i = at % (text.length + 1);
  return text.slice(0, i) + insert + text.slice(i);
}

function deepJson(depth: number, shape: 'array' | 'object' | 'field' | 'mixed', field: string): string {
  if (shape === 'array') return '['.repeat(depth) + ']'.repeat(depth);
  if (shape === 'object') return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  if (shape === 'mixed') return '[{"a":'.repeat(depth) + 'null' + '}]'.repeat(depth);
  return `{"${field}":${'{"a":'.repeat(depth)}"x"${'}'.repeat(depth)}}`;
}

function chunked(body: Buffer, pieces: number): Buffer {
  const out: Buffer[] = [];
  const size = Math.max(1, Math.ceil(body.length / pieces));
  for (let i = 0; i < body.length; i += size) {
    const c = body.subarray(i, i + size);
    out.push(Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n'));
  }
  out.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(out);
}

function editForm(t: Tpl, edit: (pairs: Pairs) => Pairs, editJson: (obj: Record<string, unknown>) => Record<string, unknown>): Partial<Tpl> {
  const ct = headerValue(t.headers, 'content-type') ?? '';
  if (/json/i.test(ct)) {
    let obj: unknown;
    try {
      obj = JSON.parse(t.body?.toString('utf8') ?? '');
    } catch {
      obj = undefined;
    }
    const base = obj && typeof obj === 'object' && !Array.isArray(obj) ? (obj as Record<string, unknown>) : {};
    try {
      return { body: jsonBody(editJson(base)) };
    } catch {
      return {}; // too deep to serialise again: left as it was
    }
  }
  // Form pairs are edited as bytes (latin1), so whatever invalid UTF-8 they carry stays as it was.
  const pairs: Pairs = (t.body?.toString('latin1') ?? '')
    .split('&')
    .filter(Boolean)
    .map((p) => {
      const i = p.indexOf('=');
      return i < 0 ? [p, ''] : [p.slice(0, i), p.slice(i + 1)];
    });
  const edited = edit(pairs);
  return {
    body: Buffer.from(edited.map(([k, v]) => `${k}=${v}`).join('&'), 'latin1'),
    headers: /form-urlencoded/i.test(ct) ? t.headers : withHeader(t.headers, 'content-type', 'application/x-www-form-urlencoded'),
  };
}

const mutations: fc.Arbitrary<Mutation> = fc.oneof(
  // Bodies
  WRONG_TYPES.map((v) => mutation('wrong JSON type', (t) => ({ body: jsonBody(v), headers: ensureJsonType(t.headers) }))),
  fc
    .record({ extra: fc.integer({ min: 1, max: BODY_LIMIT }), shape: fc.constantFrom('string', 'array', 'form', 'bytes'), framing: fc.constantFrom('length', 'length', 'chunked') })
    .map(({ extra, shape, framing }) =>
      mutation(`body over the limit (${shape}, ${framing})`, (t) => {
        const n = BODY_LIMIT + extra;
        const body =
          shape === 'string'
            ? Buffer.from(`{"name":"${'a'.repeat(n)}"}`)
            : shape === 'array'
              ? Buffer.from(`[${'{"name":"x","item":"y","quantity":1,"species":"s","title":"t"},'.repeat(Math.ceil(n / 62))}{}]`)
              : shape === 'form'
                ? Buffer.from(`grant_type=password&username=${'u'.repeat(n)}`)
                : Buffer.alloc(n, 0x41);
        const headers = shape === 'form' ? withHeader(t.headers, 'content-type', 'application/x-www-form-urlencoded') : t.headers;
        return { body, headers, framing: framing === 'chunked' ? 'chunked' : t.framing };
      }),
    ),
  // Within the limit but larger than one read (16 KiB): answered early (401, 404, 415, …) it must
  // be read and dropped, and the keep-alive connection serve its next request.
  fc
    .record({ n: fc.integer({ min: 16_500, max: BODY_LIMIT - 100 }), framing: fc.constantFrom('length', 'length', 'chunked') })
    .map(({ n, framing }) =>
      mutation(`large body within the limit (${framing})`, (t) => ({
        body: Buffer.from(`{"name":"${'a'.repeat(n)}"}`),
        headers: ensureJsonType(t.headers),
        framing: framing === 'chunked' ? 'chunked' : t.framing,
      })),
    ),
  fc
    .record({ depth: fc.integer({ min: 64, max: 40_000 }), shape: fc.constantFrom('array', 'object', 'field', 'mixed'), field: fc.constantFrom('name', 'city', 'title', 'body', 'item', 'quantity', 'status', 'zoo_id', 'grant_type', 'scope', 'token', 'a') })
    .map(({ depth, shape, field }) =>
      mutation(`deeply nested body (${shape}, depth ${depth})`, (t) => ({ body: Buffer.from(deepJson(depth, shape as any, field)), headers: ensureJsonType(t.headers) })),
    ),
  fc
    .record({ seq: fc.constantFrom(...INVALID_UTF8), at: fc.nat(), where: fc.constantFrom('body', 'body-string', 'header', 'path', 'query') })
    .map(({ seq, at, where }) =>
      mutation(`invalid UTF-8 ${Buffer.from(seq).toString('hex')} in ${where}`, (t) => {
        const bytes = Buffer.from(seq);
        const chars = bytes.toString('latin1');
        if (where === 'body' || where === 'body-string') {
          const body = t.body && t.body.length ? t.body : Buffer.from('{"name":"x","grant_type":"password"}');
          const inString = body.indexOf('":"');
          const i = where === 'body-string' && inString >= 0 ? inString + 3 : at % (body.length + 1);
          return { body: Buffer.concat([body.subarray(0, i), bytes, body.subarray(i)]), headers: t.body && t.body.length ? t.headers : ensureJsonType(t.headers) };
        }
        if (where === 'header') return { headers: [...t.headers, [['x-request-id', 'idempotency-key', 'authorization', 'accept', 'cookie'][at % 5], `v${chars}v`]] };
        if (where === 'path') return { path: insertAt(t.path, 1 + (at % t.path.length), chars) };
        return { query: insertAt(t.query || 'limit=1', at, chars) };
      }),
    ),
  // Percent-encoding
  fc.record({ esc: fc.constantFrom(...BAD_ESCAPES), at: fc.nat() }).map(({ esc, at }) => mutation(`bad percent-escape ${esc} in the path`, (t) => ({ path: insertAt(t.path, 1 + (at % t.path.length), esc) }))),
  fc
    .record({ esc: fc.constantFrom(...BAD_ESCAPES), at: fc.nat(), how: fc.constantFrom('insert', 'name', 'value') })
    .map(({ esc, at, how }) =>
      mutation(`bad percent-escape ${esc} in the query (${how})`, (t) => ({
        query: how === 'insert' ? insertAt(t.query, at, esc) : how === 'name' ? [t.query, `${esc}=1`].filter(Boolean).join('&') : [t.query, `limit=${esc}`].filter(Boolean).join('&'),
      })),
    ),
  // Headers
  fc
    .record({
      value: fc.constantFrom(
        'application/json; charset=utf-8',
        'application/json; charset=latin1',
        'application/json;charset=UTF-16',
        'APPLICATION/JSON',
        'application/json ',
        ' application/json',
        'application/merge-patch+json',
        'application/vnd.api+json',
        'application/json, text/plain',
        'text/plain',
        'text/json',
        'application/x-www-form-urlencoded',
        'application/x-www-form-urlencoded; charset=iso-8859-1',
        'multipart/form-data',
        'multipart/form-data; boundary=',
        'multipart/form-data; boundary=x',
        'image/png',
        'application/pdf',
        'application/octet-stream',
        '',
        ';',
        '*/*',
        'application/',
        '/json',
        'application/json;;;',
        'application/jsonx',
        'application/json; charset="utf-8"',
        'application/+json',
        `application/${'x'.repeat(3000)}+json`,
      ),
      mode: headerMode,
    })
    .map(({ value, mode }) => mutation(`Content-Type ${JSON.stringify(value.slice(0, 60))} (${mode})`, (t) => ({ headers: withHeader(t.headers, 'content-type', value, mode) }))),
  fc
    .record({
      value: fc.constantFrom(
        'application/xml',
        'text/html',
        BROWSER_ACCEPT,
        'text/html, application/json;q=0.9',
        'application/json;q=0',
        '*/*;q=0',
        'application/*',
        'text/*',
        'application/problem+json',
        'image/png',
        'image/*',
        '',
        ',',
        ';q=1',
        'application/json;q=abc',
        'application/json;q=-1',
        'application/json;q=1.5',
        '*/*; q=0.1, application/json',
        `application/json, ${'text/x-a, '.repeat(400)}`,
        '*',
        'application',
      ),
      mode: headerMode,
    })
    .map(({ value, mode }) => mutation(`Accept ${JSON.stringify(value.slice(0, 60))} (${mode})`, (t) => ({ headers: withHeader(t.headers, 'accept', value, mode) }))),
  fc
    .record({
      value: fc.constantFrom(
        'Bearer',
        'Bearer ',
        'Bearer  TOKEN',
        'bearer TOKEN',
        'BEARER TOKEN',
        'Bearer TOKENx',
        'Bearer TOKEN extra',
        `Bearer ${'A'.repeat(5000)}`,
        'Basic',
        'Basic !!!',
        `Basic ${b64('demo-app:')}`,
        `Basic ${b64(':::')}`,
        'MAC id="x", ts="1", nonce="n", mac="bQ=="',
        'MAC',
        'MAC id=',
        'MAC id="TOKEN", ts="0", nonce="", mac=""',
        'Digest username="x"',
        'Token abc',
        'Bearer\tTOKEN',
        'TOKEN',
        'Bearer TOKEN,Bearer TOKEN',
        'Negotiate YII=',
        'Bearer ../../etc',
        'Bearer %00',
      ),
      mode: fc.constantFrom<'replace' | 'add'>('replace', 'add'),
    })
    .map(({ value, mode }) =>
      mutation(`Authorization ${JSON.stringify(value.slice(0, 40))} (${mode})`, (t) => ({ headers: withHeader(t.headers, 'authorization', value.replace(/TOKEN/g, ctx.userToken), mode) })),
    ),
  fc
    .record({
      value: fc.constantFrom('PUT', 'PATCH', 'DELETE', 'put', 'patch', 'delete', 'GET', 'POST', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT', '', ' ', 'PUT, PATCH', 'PUT,DELETE', 'X', 'P\u00ffT'),
      twice: fc.boolean(),
      asPost: fc.boolean(),
    })
    .map(({ value, twice, asPost }) =>
      mutation(`X-HTTP-Method-Override ${JSON.stringify(value)}${twice ? ' twice' : ''}${asPost ? ' on POST' : ''}`, (t) => {
        let headers = withHeader(t.headers, 'x-http-method-override', value);
        if (twice) headers = withHeader(headers, 'x-http-method-override', 'DELETE', 'add');
        return { headers, method: asPost ? 'POST' : t.method };
      }),
    ),
  fc
    .record({ value: fc.constantFrom('*', '"1"', '"2"', '"999"', 'W/"1"', '"1", "2"', '"', '', ',', '1', '"1"x', '* , "1"', `"${'9'.repeat(3000)}"`, '"\u00ff"', '"-1"', '"1e3"'), mode: headerMode })
    .map(({ value, mode }) => mutation(`If-Match ${JSON.stringify(value.slice(0, 40))} (${mode})`, (t) => ({ headers: withHeader(t.headers, 'if-match', value, mode) }))),
  fc
    .record({ value: fc.constantFrom('fz-key-1', 'fz-key-2', '', ' ', 'a'.repeat(255), 'a'.repeat(256), 'key with space', '\u00ff\u00fe', 'tab\tkey', 'ключ', '"quoted"'), mode: headerMode })
    .map(({ value, mode }) => mutation(`Idempotency-Key ${JSON.stringify(value.slice(0, 40))} (${mode})`, (t) => ({ headers: withHeader(t.headers, 'idempotency-key', value, mode) }))),
  fc
    .constantFrom(
      ['cookie', '__Host-gatehouse_session=garbage; __Host-gatehouse_browser=garbage; __Host-gatehouse_browser=a.b.c'],
      ['cookie', '=;;;='],
      ['cookie', `a=${'b'.repeat(6000)}`],
      ['x-forwarded-proto', 'http'],
      ['x-forwarded-for', '1.2.3.4, ::1, garbage'],
      ['x-forwarded-host', 'evil.example'],
      ['forwarded', 'for=x;proto=http'],
      ['content-encoding', 'gzip'],
      ['content-encoding', 'br'],
      ['range', 'bytes=0-1'],
      ['origin', 'https://evil.example'],
      ['referer', 'javascript:alert(1)'],
      ['transfer-encoding', 'gzip'],
      ['expect', '100-continue'],
      ['expect', 'nonsense'],
      ['upgrade', 'websocket'],
      ['te', 'trailers'],
      ['host', 'evil.example'],
      ['host', ''],
      ['x-huge', 'h'.repeat(20_000)],
      ['content-md5', 'x'],
      ['content-disposition', 'attachment; filename="../../x.png"'],
      ['content-disposition', 'attachment; filename*=UTF-8\'\'%ff%fe.png'],
      ['content-disposition', 'garbage;;;'],
    )
    .map(([name, value]) => mutation(`header ${name}: ${JSON.stringify(value.slice(0, 40))}`, (t) => ({ headers: withHeader(t.headers, name, value, name === 'host' ? 'replace' : 'add') }))),
  fc.integer({ min: 50, max: 600 }).map((n) => mutation(`${n} extra headers`, (t) => ({ headers: [...t.headers, ...Array.from({ length: n }, (_, i): [string, string] => [`x-fz-${i}`, 'v'])] }))),
  fc
    .constantFrom('no-host', 'two-hosts', 'obs-fold', 'space-in-name', 'no-colon', 'nul-in-value', 'cr-in-value', 'empty-name', 'connection-upgrade')
    .map((kind) =>
      mutation(`malformed header (${kind})`, (t): Partial<Tpl> => {
        const raw = { raw: true };
        switch (kind) {
          case 'no-host':
            return { ...raw, noHost: true };
          case 'two-hosts':
            return { ...raw, headers: [...t.headers, ['Host', 'a.example'], ['Host', 'b.example']] };
          case 'obs-fold':
            return { ...raw, headers: [...t.headers, ['X-Folded', 'a\r\n b']] };
          case 'space-in-name':
            return { ...raw, headers: [...t.headers, ['Bad Name', 'x']] };
          case 'no-colon':
            return { ...raw, headers: [...t.headers, ['X-No-Colon\r\nX-Next', 'y']] };
          case 'nul-in-value':
            return { ...raw, headers: [...t.headers, ['X-Nul', 'a\0b']] };
          case 'cr-in-value':
            return { ...raw, headers: [...t.headers, ['X-Cr', 'a\rb']] };
          case 'connection-upgrade':
            return { ...raw, headers: [...t.headers, ['Connection', 'Upgrade'], ['Upgrade', 'websocket']] };
          default:
            return { ...raw, headers: [...t.headers, ['', 'x']] };
        }
      }),
    ),
  // Methods
  fc
    .constantFrom('get', 'post', 'Get', 'put', 'patch', 'delete', 'head', 'OPTIONS', 'TRACE', 'CONNECT', 'PROPFIND', 'QUERY', 'SEARCH', 'PURGE', 'LINK', 'MKCOL', 'M-SEARCH', 'FOO', 'PATCH', 'PUT', 'DELETE', 'HEAD', 'POST', 'GET', 'G ET', 'GET\t', 'GÉT', 'GET/', 'A'.repeat(100), '')
    .map((m) => mutation(`method ${JSON.stringify(m)}`, () => ({ method: m }))),
  fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/1.2', 'HTTP/9.9', 'HTTPS/1.1', 'http/1.1', 'HTTP/1.1 x', '').map((version) => mutation(`request line version ${JSON.stringify(version)}`, () => ({ version }))),
  // Paths
  fc
    .record({
      kind: fc.constantFrom('dotdot', 'dotdot-root', 'dot', 'double-slash', 'encoded-slash', 'encoded-dots', 'trailing-slash', 'long-segment', 'many-segments', 'nul-encoded', 'nul-raw', 'backslash', 'semicolon', 'utf8-raw', 'space', 'fragment', 'asterisk', 'absolute', 'no-slash', 'question-marks', 'tab', 'double-encoded'),
      at: fc.nat(),
      n: fc.constantFrom(300, 2_000, 10_000, 20_000, 70_000),
    })
    .map(({ kind, at, n }) =>
      mutation(`path trick ${kind}${kind.startsWith('long') || kind.startsWith('many') ? ` ${n}` : ''}`, (t): Partial<Tpl> => {
        const segs = t.path.split('/');
        const i = 1 + (at % Math.max(1, segs.length - 1));
        const target = () => (t.query ? `${t.path}?${t.query}` : t.path);
        switch (kind) {
          case 'dotdot':
            return { path: [...segs.slice(0, i), 'x', '..', ...segs.slice(i)].join('/') };
          case 'dotdot-root':
            return { path: `/..${'/..'.repeat(at % 4)}${t.path}` };
          case 'dot':
            return { path: [...segs.slice(0, i), '.', ...segs.slice(i)].join('/') };
          case 'double-slash':
            return { path: [...segs.slice(0, i), '', ...segs.slice(i)].join('/') };
          case 'encoded-slash':
            return { path: segs.slice(0, i).join('/') + '%2F' + segs.slice(i).join('/') };
          case 'encoded-dots':
            return { path: [...segs.slice(0, i), '%2e%2e', ...segs.slice(i)].join('/') };
          case 'trailing-slash':
            return { path: `${t.path}/` };
          case 'long-segment':
            return { path: `${t.path}/${'a'.repeat(n)}` };
          case 'many-segments':
            return { path: `${t.path}${'/a'.repeat(Math.floor(n / 2))}` };
          case 'nul-encoded':
            return { path: insertAt(t.path, 1 + (at % t.path.length), '%00') };
          case 'nul-raw':
            return { path: insertAt(t.path, 1 + (at % t.path.length), '\0'), raw: true };
          case 'backslash':
            return { path: t.path.replace(/\//g, (s, off: number) => (off > 0 && off % 2 === 0 ? '\\' : s)) };
          case 'semicolon':
            return { path: `${t.path};jsessionid=x` };
          case 'utf8-raw':
            return { path: insertAt(t.path, 1 + (at % t.path.length), Buffer.from('ü🦒', 'utf8').toString('latin1')) };
          case 'space':
            return { path: insertAt(t.path, 1 + (at % t.path.length), ' '), raw: true };
          case 'fragment':
            return { target: `${target()}#frag` };
          case 'asterisk':
            return { target: '*', raw: true };
          case 'absolute':
            return { target: `https://127.0.0.1${target()}` };
          case 'no-slash':
            return { target: target().slice(1), raw: true };
          case 'question-marks':
            return { target: `${t.path}??${t.query}&` };
          case 'tab':
            return { path: insertAt(t.path, 1 + (at % t.path.length), '\t'), raw: true };
          default:
            return { path: t.path.replace(/\//g, (s, off: number) => (off > 0 && off === t.path.lastIndexOf('/') ? '%252F' : s)) };
        }
      }),
    ),
  // Query
  fc
    .record({
      kind: fc.constantFrom('repeat', 'repeat-limit', 'unknown', 'empty-pairs', 'many', 'long-value', 'array-style', 'proto', 'plus', 'bare-names'),
      n: fc.integer({ min: 2, max: 800 }),
    })
    .map(({ kind, n }) =>
      mutation(`query ${kind}`, (t) => {
        const q = t.query;
        const extra =
          kind === 'repeat'
            ? q.split('&')[0] || 'order=asc'
            : kind === 'repeat-limit'
              ? 'limit=1&limit=2&offset=0&offset=0'
              : kind === 'unknown'
                ? 'colour=red&x=1'
                : kind === 'empty-pairs'
                  ? '&&=&=x&y='
                  : kind === 'many'
                    ? Array.from({ length: n }, (_, i) => `p${i}=${i}`).join('&')
                    : kind === 'long-value'
                      ? `name=${'v'.repeat(n * 20)}`
                      : kind === 'array-style'
                        ? 'limit[]=1&limit[]=2&sortby[a]=b'
                        : kind === 'proto'
                          ? '__proto__=x&constructor[prototype][polluted]=1&sortby=__proto__&hasOwnProperty=1'
                          : kind === 'plus'
                            ? 'name=a+b&city=%2B'
                            : 'limit&offset&sortby';
        return { query: [q, extra].filter(Boolean).join('&') };
      }),
    ),
  // OAuth-style parameter lists (forms and JSON objects)
  fc
    .record({ kind: fc.constantFrom('repeat-same', 'repeat-other', 'drop', 'empty', 'unknown', 'non-string', 'bad-name'), at: fc.nat(), value: fc.constantFrom<unknown>(1, 1.5, true, null, ['a'], { a: 1 }, 1e400 as number) })
    .map(({ kind, at, value }) =>
      mutation(`parameters ${kind}`, (t) =>
        editForm(
          t,
          (pairs) => {
            const i = pairs.length ? at % pairs.length : 0;
            switch (kind) {
              case 'repeat-same':
                return pairs.length ? [...pairs, pairs[i]] : [['grant_type', 'password'], ['grant_type', 'password']];
              case 'repeat-other':
                return pairs.length ? [...pairs, [pairs[i][0], 'other']] : [['token', 'a'], ['token', 'b']];
              case 'drop':
                return pairs.filter((_, j) => j !== i);
              case 'empty':
                return pairs.map((p, j) => (j === i ? [p[0], ''] : p));
              case 'unknown':
                return [...pairs, ['unknown_param', 'x'], ['', 'y']];
              case 'bad-name':
                return [...pairs, ['%zz', '1'], ['a%', '%']];
              default:
                return [...pairs, ['grant_type', '']];
            }
          },
          (obj) => {
            const keys = Object.keys(obj);
            const k = keys.length ? keys[at % keys.length] : 'grant_type';
            if (kind === 'drop') {
              const { [k]: _, ...rest } = obj;
              return rest;
            }
            if (kind === 'empty') return { ...obj, [k]: '' };
            if (kind === 'unknown') return { ...obj, unknown_param: 'x', '': 'y' };
            return { ...obj, [k]: value };
          },
        ),
      ),
    ),
  // Framing (raw only)
  fc
    .constantFrom<Framing | 'body-on-get'>('cl-short', 'cl-twice', 'cl-twice-different', 'cl-and-te', 'te-bad-chunk', 'cl-negative', 'cl-huge', 'cl-plus', 'te-twice', 'te-unknown', 'body-on-get')
    .map((kind) =>
      mutation(`framing ${kind}`, (t): Partial<Tpl> =>
        kind === 'body-on-get'
          ? { raw: true, method: 'GET', body: t.body && t.body.length ? t.body : Buffer.from('{"name":"framing"}'), headers: ensureJsonType(t.headers) }
          : { framing: kind, headers: ensureJsonType(t.headers) },
      ),
    ),
  fc.constantFrom('none', 'empty', 'spaces', 'bom', 'utf16', 'trailing-comma', 'trailing-garbage', 'proto', 'duplicate-keys', 'big-number', 'lone-surrogate', 'nan', 'comment', 'single-quotes', 'nul').map((kind) =>
    mutation(`JSON oddity ${kind}`, (t): Partial<Tpl> => {
      const headers = ensureJsonType(t.headers);
      const body: Record<string, Buffer | undefined> = {
        none: undefined,
        empty: Buffer.alloc(0),
        spaces: Buffer.from('   \n\t '),
        bom: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), t.body ?? Buffer.from('{"name":"bom"}')]),
        utf16: Buffer.from('{"name":"utf16"}', 'utf16le'),
        'trailing-comma': Buffer.from('{"name":"x",}'),
        'trailing-garbage': Buffer.from('{"name":"x"}garbage'),
        proto: Buffer.from('{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}},"name":"p","item":"p","quantity":1,"title":"p","species":"p"}'),
        'duplicate-keys': Buffer.from('{"name":"a","name":"b","quantity":1,"quantity":"x"}'),
        'big-number': Buffer.from('{"name":"n","founded":123456789012345678901234567890,"quantity":1e400}'),
        'lone-surrogate': Buffer.from('{"name":"\\ud800","title":"\\udfff"}'),
        nan: Buffer.from('{"name":NaN}'),
        comment: Buffer.from('{"name":"c"/* x */}'),
        'single-quotes': Buffer.from("{'name':'q'}"),
        nul: Buffer.from('{"name":"a\u0000b"}'),
      };
      return { body: body[kind], headers: kind === 'none' ? t.headers : headers };
    }),
  ),
);

// ---------------------------------------------------------------------------------------------
// The run

const stats = {
  sent: 0,
  byStatus: new Map<number, number>(),
  byOp: new Map<string, number>(),
  mutated: 0,
  raw: 0,
  /** Requests that got an HTTP response (every request must). */
  answered: 0,
};

interface Failure {
  seed: number;
  index: number;
  kinds: string[];
  status: number | null;
  op: string;
  /** Method and path as sent. */
  route: string;
  /** The mutations, without their numbers: what the request did unusually. */
  keys: string[];
  report: string;
}
/** A shrunk failure: its kinds, status and mutations explain every recorded failure that shares them. */
interface Cause {
  kinds: string[];
  status: number | null;
  op: string;
  route: string;
  keys: string[];
  text: string;
  explains: number;
}
const failures: Failure[] = [];
const causes: Cause[] = [];

const routeOf = (req: WireRequest) => `${req.method} ${targetPath(req.target)}`;
const mutationKeys = (t: Tpl) => [...new Set(t.mutations.map((m) => m.replace(/\d+/g, 'N')))].sort();
const signature = (f: { kinds: string[]; status: number | null; op: string; keys: string[] }) =>
  `${f.kinds.join('+')} ${f.status ?? '-'} ${f.keys.length ? f.keys.join(' & ') : `${f.op} (no mutation)`}`;
function explainedBy(c: Cause, f: Failure): boolean {
  if (!c.kinds.every((k) => f.kinds.includes(k))) return false;
  // An HTML page for a JSON client: one cause per method and path, whatever the status and mutations.
  if (c.kinds.length === 1 && c.kinds[0] === 'html-for-json-client') return c.route === f.route;
  return c.status === f.status && (c.keys.length ? c.keys.every((k) => f.keys.includes(k)) : c.op === f.op);
}

function bump<K>(m: Map<K, number>, k: K): void {
  m.set(k, (m.get(k) ?? 0) + 1);
}

/** Learns the ids, tokens and codes an answer reveals, so later requests use them. */
function harvest(req: WireRequest, res: WireResponse): void {
  const location = res.headers.get('location')?.[0];
  let body: any;
  try {
    body = res.body.length && /json/.test(res.headers.get('content-type')?.[0] ?? '') ? JSON.parse(res.body.toString('utf8')) : undefined;
  } catch {
    body = undefined;
  }
  if (location && (res.status === 201 || res.status === 202)) {
    const p = new URL(location, server.url).pathname.split('/');
    // /v1/<collection>/<id> or /v1/<collection>/<id>/attachments/<attachment_id> or /v1/jobs/<id>
    if (p.length === 4) {
      const parentField = body && Object.keys(body).find((k) => /_id$/.test(k));
      remember(pool(p[2]), { id: p[3], parent: parentField ? body[parentField] : undefined });
    } else if (p.length === 6 && p[4] === 'attachments') remember(pool('attachments'), { id: p[5], parent: p[3] });
  }
  if (res.status === 204) {
    // A deleted record (and its children or attachments) leaves the pools; its URL answers 410 now.
    const p = req.target.split('?')[0].split('/');
    // /v1/<collection>/<id>, /v1/<parent>/<id>/<child>/<child_id>, /v1/articles/<id>/attachments/<attachment_id>
    const gone = p.length === 4 ? p[3] : p.length === 6 ? p[5] : undefined;
    if (gone)
      for (const list of pools.records.values())
        for (let i = list.length - 1; i >= 0; i--) if (list[i].id === gone || list[i].parent === gone) list.splice(i, 1);
  }
  if (location && res.status === 302) {
    const code = /[?&]code=([^&#]+)/.exec(location)?.[1];
    if (code) remember(pools.codes, decodeURIComponent(code));
  }
  if (res.status === 200 && targetIsTokenEndpoint(req) && body) {
    if (typeof body.access_token === 'string') remember(pools.access, body.access_token);
    if (typeof body.refresh_token === 'string') remember(pools.refresh, body.refresh_token);
  }
}
function targetIsTokenEndpoint(req: WireRequest): boolean {
  return req.target.split('?')[0] === '/oauth/token';
}

/** Sends one request and returns the problems of its answer (none when it follows the policy). */
async function exercise(tpl: Tpl): Promise<{ req: WireRequest; res?: WireResponse; problems: Problem[] }> {
  const req = toWire(tpl);
  stats.sent++;
  bump(stats.byOp, tpl.op);
  if (tpl.mutations.length) stats.mutated++;
  if (req.raw || req.noHost || req.version !== undefined) stats.raw++;
  let res: WireResponse;
  try {
    res = await transport.send(req);
  } catch (e) {
    if (!(e instanceof NoResponseError)) throw e;
    return { req, problems: [{ kind: 'no-response', message: e.message }] };
  }
  stats.answered++;
  bump(stats.byStatus, res.status);
  harvest(req, res);
  return { req, res, problems: checkResponse(req, res, { htmlPath: isHtmlPath }) };
}

function report(tpl: Tpl, req: WireRequest, res: WireResponse | undefined, problems: Problem[]): string {
  return [
    problems.map((p) => `${p.kind}: ${p.message}`).join('\n'),
    `generated as [${tpl.op}] with mutations: ${tpl.mutations.join(', ') || 'none'}`,
    `request: ${describeRequest(req)}`,
    `response: ${res ? describeResponse(res) : '(none)'}`,
  ].join('\n');
}

/** Replays a failure from its seed and run index and lets fast-check shrink it. */
async function shrink(f: Failure, deadline: number): Promise<Cause> {
  const seen: { last?: { status: number | null; route: string; kinds: string[]; report: string } } = {};
  const out = await fc.check(
    fc.asyncProperty(requestArb, async (tpl) => {
      const { req, res, problems } = await exercise(tpl);
      const same = problems.filter((p) => f.kinds.includes(p.kind));
      if (same.length) {
        seen.last = { status: res?.status ?? null, route: routeOf(req), kinds: [...new Set(same.map((p) => p.kind))].sort(), report: report(tpl, req, res, same) };
        throw new Error(seen.last.report);
      }
    }),
    { seed: f.seed, path: String(f.index), interruptAfterTimeLimit: Math.max(1000, Math.min(SHRINK_TIME_MS, deadline - Date.now())) },
  );
  const last = seen.last;
  if (!out.failed || !last)
    return { kinds: f.kinds, status: f.status, op: f.op, route: f.route, keys: f.keys, explains: 0, text: `not reproduced on replay (seed ${f.seed}, path ${f.index}); as first seen:\n${f.report}` };
  const tpl = out.counterexample![0] as Tpl;
  const summary = (fc.defaultReportMessage(out) ?? '').replace(/\n\s*Hint:[\s\S]*$/, '').replace(/\nCounterexample:[\s\S]*?\nShrunk/, '\nShrunk');
  return { kinds: last.kinds, status: last.status, op: tpl.op, route: last.route, keys: mutationKeys(tpl), explains: 0, text: `${summary}\n${last.report}` };
}

let requestArb: fc.Arbitrary<Tpl>;
let operations: Op[];

function buildRequestArb(): fc.Arbitrary<Tpl> {
  operations = buildOperations();
  const base = fc.oneof(...operations.map((op) => ({ weight: /oauth/.test(op.label) ? 3 : 1, arbitrary: op.arb })));
  // Up to three mutations, each slot empty two times in three (about 30% of the requests stay
  // valid); a slot shrinks to empty on its own, so a shrunk failure keeps only the mutations it needs.
  const slot = fc.oneof({ withCrossShrink: true }, { weight: 2, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: mutations });
  const mutationList = fc.tuple(slot, slot, slot).map((ms) => ms.filter((m): m is Mutation => m !== null));
  // The mutations come first so that shrinking drops the ones a failure does not need before it
  // simplifies the request itself.
  return fc.tuple(mutationList, base).map(([ms, t]) => {
    const out = ms.reduce((acc, m) => m.apply(acc), t);
    return Object.assign(out, { [fc.toStringMethod]: () => describeTpl(out) });
  });
}

test(`fuzz: ≥ ${MIN_REQUESTS} generated and mutated requests keep the error policy (FUZZ_SEED=${SEED})`, { timeout: 300_000 }, async () => {
  const started = Date.now();
  requestArb = buildRequestArb();
  // Phase 1: the run is cut into chunks of CHUNK requests, each a seeded fast-check run of its own
  // (its seed derived from SEED and the chunk number) taken by whichever of the WORKERS is free.
  // Problems are recorded, not thrown, so that one bug neither hides the others nor stops the run
  // short of its volume.
  const chunks = Math.ceil(TOTAL / CHUNK);
  let nextChunk = 0;
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      for (let chunk = nextChunk++; chunk < chunks; chunk = nextChunk++) {
        const seed = (SEED ^ Math.imul(chunk + 1, 0x9e3779b1)) | 0;
        let index = 0;
        await fc.assert(
          fc.asyncProperty(requestArb, async (tpl) => {
            const runIndex = index++;
            const { req, res, problems } = await exercise(tpl);
            if (problems.length) {
              const kinds = [...new Set(problems.map((p) => p.kind))].sort();
              failures.push({ seed, index: runIndex, kinds, status: res?.status ?? null, op: tpl.op, route: routeOf(req), keys: mutationKeys(tpl), report: report(tpl, req, res, problems) });
            }
            return true;
          }),
          { seed, numRuns: CHUNK },
        );
      }
    }),
  );
  const fuzzMs = Date.now() - started;

  // Phase 2: a failure is replayed from its seed and run index and shrunk by fast-check to a
  // smallest request that still shows the same kind of problem; its mutations (or its operation,
  // when it needs none) are then the cause of every recorded failure that shares them. Repeated
  // on what is left unexplained, a few at a time, within a time budget.
  const deadline = Date.now() + SHRINK_BUDGET_MS;
  let unexplained = [...failures];
  while (unexplained.length && causes.length < MAX_SHRINKS && Date.now() < deadline - 1000) {
    // One failure of each of the largest groups (by kind and status), a few shrinking at once.
    const groups = new Map<string, Failure[]>();
    for (const f of unexplained) groups.set(`${f.kinds} ${f.status}`, [...(groups.get(`${f.kinds} ${f.status}`) ?? []), f]);
    const batch = [...groups.values()]
      .sort((a, b) => b.length - a.length)
      .map((g) => g[0])
      .slice(0, Math.min(4, MAX_SHRINKS - causes.length));
    const found = await Promise.all(batch.map((f) => shrink(f, deadline)));
    for (const [i, c] of found.entries()) {
      c.explains = unexplained.filter((f) => f === batch[i] || explainedBy(c, f)).length;
      unexplained = unexplained.filter((f) => f !== batch[i] && !explainedBy(c, f));
      const same = causes.find((o) => signature(o) === signature(c));
      if (same) same.explains += c.explains;
      else causes.push(c);
    }
  }

  const seconds = (Date.now() - started) / 1000;
  const statuses = [...stats.byStatus].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}:${n}`).join(' ');
  console.log(
    `http-fuzz: FUZZ_SEED=${SEED}: ${stats.sent} requests (${stats.mutated} mutated, ${stats.raw} raw) in ${seconds.toFixed(1)} s ` +
      `(fuzzing ${(fuzzMs / 1000).toFixed(1)} s; ${stats.answered} answered, ${transport.keptAlive} over keep-alive connections) over ${operations.length} operations; statuses ${statuses}; ` +
      `${failures.length} failing requests, ${causes.length} shrunk`,
  );
  for (const c of causes) console.log(`\nhttp-fuzz: FAILURE (FUZZ_SEED=${SEED}) ${signature(c)} — explains ${c.explains} failing request(s)\n${c.text}\n`);
  if (unexplained.length)
    console.log(`\nhttp-fuzz: ${unexplained.length} more failing request(s) not shrunk (budget), e.g.:\n${unexplained.slice(0, 3).map((f) => f.report).join('\n\n')}\n`);

  assert.ok(stats.sent >= MIN_REQUESTS, `only ${stats.sent} requests were sent`);
  // Every request answered, and most of them over keep-alive connections (the rest are raw: what
  // undici will not send, one connection each): an early answer must not leave its connection unusable.
  assert.equal(stats.answered, stats.sent, `${stats.sent - stats.answered} of ${stats.sent} requests got no HTTP response`);
  assert.ok(transport.keptAlive >= stats.sent * 0.75, `only ${transport.keptAlive} of ${stats.sent} requests went over keep-alive connections`);
  for (const op of operations) assert.ok((stats.byOp.get(op.label) ?? 0) > 0, `${op.label} was never exercised`);
  const documented = Object.entries<any>(openapi.paths).flatMap(([p, item]) => ['get', 'put', 'post', 'patch', 'delete'].filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${ctx.apiBase}${p}`));
  for (const label of [...documented, ...TABLE.map(([m, p]) => `${m} ${p}`)]) assert.ok(stats.byOp.has(label), `${label} is not among the fuzzed operations`);
  // Valid requests must really get through: a fuzzer that only ever sees 401/404 tests nothing.
  const answered = [...stats.byStatus].filter(([s]) => s < 400).reduce((n, [, c]) => n + c, 0);
  assert.ok(answered >= stats.sent / 10, `only ${answered} of ${stats.sent} requests succeeded: ${statuses}`);

  assert.equal(
    failures.length,
    0,
    `${failures.length} of ${stats.sent} requests broke the error policy (FUZZ_SEED=${SEED}); shrunk causes:\n` +
      causes.map((c) => `- ${signature(c)} (${c.explains}×)`).join('\n') +
      (unexplained.length ? `\n- ${unexplained.length} more not shrunk: ${[...new Set(unexplained.map(signature))].slice(0, 10).join(' | ')}` : '') +
      `\n(the shrunk requests are printed above)`,
  );
});

test('after the fuzzing the server is alive, healthy and serves an authenticated GET', async () => {
  assert.equal(server.child.exitCode, null, `the server exited:\n${server.output().slice(-3000)}`);
  assert.equal(server.child.signalCode, null);
  const health = await server.json('GET', '/health');
  assert.equal(health.status, 200, health.text);
  assert.equal(health.body.status, 'ok', health.text);
  const zoos = await server.json('GET', '/v1/zoos?limit=5', undefined, bearer(ctx.sentinelToken));
  assert.equal(zoos.status, 200, zoos.text);
  assert.ok(Array.isArray(zoos.body), zoos.text);
  const zoo = await server.json('POST', '/v1/zoos', { name: 'After the fuzz' }, bearer(ctx.sentinelToken));
  assert.equal(zoo.status, 201, zoo.text);
});
