import type { AppContext } from '../../contract/context.js';
import { contextCache } from '../../contract/context-cache.js';
import { InvalidClient, TooManyRequests } from '../../platform/http/errors.js';
import { PUBLIC_CLIENT_REQUESTS, PUBLIC_CLIENT_WINDOW_MINUTES, publicClientAttempt } from '../login-throttle.js';
import { fetchBounded, OutboundFetchFailed } from '../../platform/http/outbound.js';
import { canonicalScope, grantableUniverse, parseScope } from '../scope-request.js';
import { ADMIN_SCOPE } from '../../contract/scopes.js';
import type { Client, GrantType } from './client.js';

// Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document; docs/oauth.md,
// "Client ID metadata documents"): a client_id that is an https URL names a JSON document that
// describes the client. It is fetched under the SSRF rule of platform/http/outbound.ts (at most
// 5 KB, 5 s, no redirect), checked, and made into the same `Client` every endpoint uses — a public
// client, PKCE required, authorization_code (and refresh_token), never verified, never admin. It is
// not stored in the clients table: the document is the registration, and it may change. Each
// instance keeps what it fetched in its own cache (its Cache-Control, at most 24 h; a failure 30 s),
// and concurrent lookups of one URL share one fetch.

export const MAX_CLIENT_ID_URL_LENGTH = 512;
export const MAX_DOCUMENT_BYTES = 5 * 1024;
export const FETCH_TIMEOUT_MS = 5000;
/** The longest a document is kept, whatever its Cache-Control says. */
export const MAX_CACHE_SECONDS = 24 * 3600;
/** A document without a Cache-Control max-age is kept this long. */
export const DEFAULT_CACHE_SECONDS = 300;
/** A failed fetch is remembered this long, so that no one can make gatehouse fetch in a loop. */
export const FAILURE_CACHE_SECONDS = 30;
const CACHE_MAX_ENTRIES = 1000;
/** At most this many documents fetched at once per instance; past it a lookup is refused (and not remembered). */
export const MAX_FETCHES_IN_FLIGHT = 50;
/** The grants such a client may have: it is a public client redirecting a user. */
const DOCUMENT_GRANTS: readonly GrantType[] = ['authorization_code', 'refresh_token'];

/** Who asked, in an HTTP request: the fetches a caller can cause are counted per IP, and the whole reason of a refusal goes to its log. */
export interface FetchOrigin {
  ip: string;
  log: { warn(fields: object, message: string): void };
}

/** Why a client ID metadata document could not be used; at the token endpoint an `invalid_client`. */
export class MetadataDocumentRefused extends InvalidClient {
  constructor(
    readonly host: string,
    readonly reason: string,
  ) {
    super(`The application's metadata document at ${host} could not be used: ${reason}`, { client_id: reason });
  }
}

/** Whether a client_id is meant as a metadata document's URL (a registered client id never has a colon). */
export function isMetadataDocumentId(clientId: string): boolean {
  return /^https?:/i.test(clientId);
}

/** The host a metadata document client comes from, shown to users ("from claude.ai"); null for a registered client. */
export function metadataDocumentHost(clientId: string): string | null {
  if (!isMetadataDocumentId(clientId)) return null;
  try {
    return new URL(clientId).host;
  } catch {
    return null;
  }
}

/** Why a client_id URL is not one a document may be fetched from (the draft's rules), or null. */
export function clientIdUrlProblem(clientId: string): string | null {
  if (clientId.length > MAX_CLIENT_ID_URL_LENGTH) return `the client_id URL is longer than ${MAX_CLIENT_ID_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return 'the client_id is not a valid URL';
  }
  if (url.protocol !== 'https:') return 'the client_id URL must use https';
  if (url.username || url.password || /^https:\/\/[^/?#]*@/i.test(clientId)) return 'the client_id URL must not carry a user name or password';
  if (clientId.includes('#')) return 'the client_id URL must not have a fragment';
  const path = clientId.replace(/^https:\/\/[^/?#]*/i, '').replace(/[?#].*$/s, '');
  if (path === '' || path === '/') return 'the client_id URL must have a path (e.g. https://app.example/client.json)';
  if (path.split('/').some((segment) => /^(\.|%2e){1,2}$/i.test(segment))) return 'the client_id URL must not have . or .. path segments';
  // The document's client_id is compared with the URL as a string: only the URL's one spelling is taken.
  if (url.href !== clientId) return `the client_id URL is not in its normal form (${url.href})`;
  return null;
}

interface Entry {
  client: Client | null;
  refused: MetadataDocumentRefused | null;
  expiresAt: number;
}

class DocumentCache {
  readonly entries = new Map<string, Entry>();
  readonly inFlight = new Map<string, Promise<Entry>>();

  get(url: string, now: number): Entry | undefined {
    const entry = this.entries.get(url);
    if (entry && entry.expiresAt > now) return entry;
    if (entry) this.entries.delete(url);
    return undefined;
  }

  set(url: string, entry: Entry): void {
    this.entries.delete(url);
    if (entry.expiresAt <= Date.now()) return;
    if (this.entries.size >= CACHE_MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(url, entry);
  }
}

/**
 * The client a metadata document describes, fetched (or remembered) for this instance. Throws
 * MetadataDocumentRefused naming the host and the reason when the URL or the document cannot be used.
 */
/**
 * The client a metadata document describes. `origin`: the HTTP request that asked (a FastifyRequest
 * will do), whose fetches are counted per IP and whose log gets a refusal's whole reason; none
 * (the CLI, a stored grant's client) counts nothing.
 */
export async function metadataDocumentClient(ctx: AppContext, clientId: string, origin?: FetchOrigin): Promise<Client> {
  const problem = clientIdUrlProblem(clientId);
  if (problem) throw new MetadataDocumentRefused(metadataDocumentHost(clientId) ?? 'that address', problem);
  const cache = contextCache(ctx, 'client-metadata-documents', () => new DocumentCache());
  let entry = cache.get(clientId, Date.now());
  if (!entry) {
    let pending = cache.inFlight.get(clientId);
    if (!pending) {
      // A fresh URL each time would make gatehouse fetch without bound: fetches are counted per IP.
      const attempt = origin ? await publicClientAttempt(ctx, 'metadata', origin.ip) : null;
      if (attempt && 'retryAfter' in attempt)
        throw new TooManyRequests(attempt.retryAfter, `Too many client metadata documents to fetch for this address (at most ${PUBLIC_CLIENT_REQUESTS} in ${PUBLIC_CLIENT_WINDOW_MINUTES} minutes); retry later`, { client_id: 'too many documents fetched' });
      pending = cache.inFlight.get(clientId); // another lookup started it meanwhile
      if (pending) await attempt?.giveBack();
    }
    if (!pending) {
      if (cache.inFlight.size >= MAX_FETCHES_IN_FLIGHT) throw new MetadataDocumentRefused(new URL(clientId).host, 'too many documents are being fetched at once; try again in a moment');
      pending = fetchEntry(ctx, clientId, origin).finally(() => cache.inFlight.delete(clientId));
      cache.inFlight.set(clientId, pending);
      pending.then((e) => cache.set(clientId, e), () => undefined);
    }
    entry = await pending;
  }
  if (entry.refused) throw entry.refused;
  return entry.client!;
}

async function fetchEntry(ctx: AppContext, clientId: string, origin: FetchOrigin | undefined): Promise<Entry> {
  const url = new URL(clientId);
  const started = Date.now();
  try {
    const res = await fetchBounded(url, {
      allowPrivate: ctx.config.auth.allowPrivateMetadataHosts,
      maxBytes: MAX_DOCUMENT_BYTES,
      timeoutMs: FETCH_TIMEOUT_MS,
      accept: 'application/json',
      userAgent: 'gatehouse',
    });
    if (res.status >= 300 && res.status < 400) throw new OutboundFetchFailed(`it answered HTTP ${res.status} (a redirect is not followed)`);
    if (res.status !== 200) throw new OutboundFetchFailed(`it answered HTTP ${res.status}`);
    const type = String(res.headers['content-type'] ?? '');
    if (!/^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(type)) throw new OutboundFetchFailed(`it is not JSON (Content-Type: ${type.slice(0, 100) || 'none'})`);
    let document: unknown;
    try {
      document = JSON.parse(res.body.toString('utf8'));
    } catch {
      throw new OutboundFetchFailed('it is not valid JSON');
    }
    const client = clientFromDocument(ctx, clientId, document, started);
    return { client, refused: null, expiresAt: started + cacheSeconds(res.headers['cache-control']) * 1000 };
  } catch (e) {
    if (!(e instanceof OutboundFetchFailed)) throw e;
    // The caller sees the reason without addresses or errors of the network; the log has it whole.
    origin?.log.warn({ client_id: clientId, reason: e.detail }, 'client metadata document refused');
    return { client: null, refused: new MetadataDocumentRefused(url.host, e.message), expiresAt: Date.now() + FAILURE_CACHE_SECONDS * 1000 };
  }
}

/** How long a fetched document may be used: its Cache-Control (no-store / no-cache: not kept), at most 24 h. */
export function cacheSeconds(header: string | string[] | undefined): number {
  const value = (Array.isArray(header) ? header.join(',') : (header ?? '')).toLowerCase();
  const directives = value.split(',').map((d) => d.trim());
  if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return 0;
  const maxAge = directives.map((d) => /^max-age\s*=\s*"?(\d+)"?$/.exec(d)).find((m) => m);
  const seconds = maxAge ? Number(maxAge[1]) : DEFAULT_CACHE_SECONDS;
  return Math.min(seconds, MAX_CACHE_SECONDS);
}

/** A redirect URI of such a client: https, or plain http on the loopback interface (RFC 8252). */
function documentRedirectUriProblem(uri: unknown): string | null {
  if (typeof uri !== 'string') return 'redirect_uris must be strings';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `redirect_uris: ${uri.slice(0, 200)} is not an absolute URI`;
  }
  if (uri.includes('#')) return `redirect_uris: ${uri} must not contain a fragment`;
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) return null;
  return `redirect_uris: ${uri} must be https (or http on 127.0.0.1, [::1] or localhost)`;
}

/** The document as a client, or OutboundFetchFailed saying what in it is wrong. */
export function clientFromDocument(ctx: AppContext, clientId: string, document: unknown, fetchedAt: number): Client {
  const refuse = (reason: string): never => {
    throw new OutboundFetchFailed(reason);
  };
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return refuse('it is not a JSON object');
  const doc = document as Record<string, unknown>;
  const field = (name: string) => (Object.prototype.hasOwnProperty.call(doc, name) ? doc[name] : undefined);
  if (field('client_id') === undefined) return refuse('it has no client_id');
  if (field('client_id') !== clientId) return refuse(`its client_id (${String(field('client_id')).slice(0, 200)}) is not the URL it was fetched from`);
  const method = field('token_endpoint_auth_method');
  if (method !== undefined && method !== 'none')
    return refuse(`token_endpoint_auth_method is ${String(method).slice(0, 50)}: such a client is public and authenticates with none`);
  if (field('client_secret') !== undefined || field('client_secret_expires_at') !== undefined) return refuse('it must not carry a client_secret');
  const redirectUris = field('redirect_uris');
  if (!Array.isArray(redirectUris) || redirectUris.length === 0) return refuse('redirect_uris must list at least one redirect URI');
  for (const uri of redirectUris) {
    const problem = documentRedirectUriProblem(uri);
    if (problem) return refuse(problem);
  }
  const grantTypes = field('grant_types') ?? ['authorization_code'];
  if (!Array.isArray(grantTypes) || grantTypes.length === 0 || grantTypes.some((g) => !(DOCUMENT_GRANTS as readonly unknown[]).includes(g)))
    return refuse(`grant_types may list only ${DOCUMENT_GRANTS.join(' and ')}`);
  if (!grantTypes.includes('authorization_code')) return refuse('grant_types must include authorization_code');
  const responseTypes = field('response_types');
  if (responseTypes !== undefined && (!Array.isArray(responseTypes) || responseTypes.some((r) => r !== 'code'))) return refuse('response_types may list only code');
  const name = field('client_name');
  if (name !== undefined && (typeof name !== 'string' || name.trim() === '' || name.length > 100)) return refuse('client_name must be 1-100 characters');
  const host = new URL(clientId).host;
  // A home page is shown only when it is on the document's own host: the host is what is known.
  const clientUri = field('client_uri');
  const uri = typeof clientUri === 'string' && /^https:\/\//i.test(clientUri) && URL.canParse(clientUri) && new URL(clientUri).host === host ? clientUri : null;
  let scope: string | null = null;
  const scopeText = field('scope');
  if (scopeText !== undefined) {
    const parsed = typeof scopeText === 'string' ? parseScope(scopeText.trim().replace(/\s+/g, ' ')) : null;
    if (!parsed) return refuse('scope must list scope values separated by spaces');
    // Scopes of other servers are passed over; admin is never a document client's.
    const universe = grantableUniverse(ctx.collections).filter((s) => s !== ADMIN_SCOPE);
    const known = canonicalScope(parsed, universe);
    if (known.length === 0) return refuse('scope names no scope of this server');
    scope = known.join(' ');
  }
  return {
    id: clientId,
    name: typeof name === 'string' ? name.trim() : host,
    public: true,
    secretHash: null,
    redirectUris: [...new Set(redirectUris as string[])],
    grantTypes: [...new Set(grantTypes as GrantType[])],
    scope,
    tokenType: 'bearer',
    createdAt: fetchedAt,
    origins: [],
    uri,
    verified: false,
    introspect: false,
    requirePkce: true,
    idTokenSignedResponseAlg: 'RS256',
    postLogoutRedirectUris: [],
    // auth.requirePushedAuthorizationRequests still applies to it; a document cannot ask for more.
    requirePar: false,
    dpopBound: false,
  };
}

/** For a `.catch` where a client's name is only shown (the account page, the export, logout): a document that cannot be used now is no client. */
export function nullIfRefused(e: unknown): null {
  if (e instanceof MetadataDocumentRefused) return null;
  throw e;
}
