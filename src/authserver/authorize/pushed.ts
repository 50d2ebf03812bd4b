import type { FetchOrigin } from '../model/client-metadata-document.js';
import type { AppContext } from '../../contract/context.js';
import { randomSecret, sha256 } from '../../platform/crypto/secrets.js';
import { write, type WriteTx } from '../../platform/store/write-path.js';
import type { Client } from '../model/clients.js';
import { parseUrlEncoded, type Params } from '../params.js';
import { findPushedRequest, insertPushedRequest, openPushedRequest, rewritePushedParams, usePushedRequest, type PushedRequestRow } from '../store/pushed-requests.js';
import { PageError, afterSignIn, readAuthorizationRequest, type AuthorizationRequest, type ReadRequest, type RequestSource, type VerifiedTarget } from './request.js';

// Pushed authorization requests (RFC 9126, docs/oauth.md#pushed-authorization-requests): the
// parameter source of /authorize that is not its query. A client pushes its request to /par
// (endpoints/par.ts, checked by request.ts as every request is) and gets a request_uri for 60 s;
// /authorize?client_id&request_uri reads the stored parameters and ignores the rest of the query.
// The request_uri is what the login and consent forms carry (their hidden `request` field), so
// each step reads the pushed request again; it is used up when the request is answered — a code,
// tokens, a denial or an error sent to the client — and never answers twice.

export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';
/** Seconds a pushed request waits for the browser (RFC 9126 §2.2 `expires_in`). */
export const PUSHED_REQUEST_TTL = 60;
/** Once /authorize has shown it: the time the user has to sign in (a second factor, perhaps set up) and decide. */
export const PUSHED_INTERACTION_TTL = 1800;

const pairsOf = (params: Params): [string, string][] => [...params.multi].flatMap(([name, values]) => values.map((v): [string, string] => [name, v]));
const formOf = (pairs: [string, string][]) => new URLSearchParams(pairs).toString();

/** Stores a checked request of `client` and names it (RFC 9126 §2.2). */
export async function pushAuthorizationRequest(ctx: AppContext, client: Client, params: Params): Promise<{ request_uri: string; expires_in: number }> {
  const random = randomSecret(32);
  const now = Date.now();
  await write(ctx.store, (tx) =>
    insertPushedRequest(tx, {
      id: sha256(random),
      client_id: client.id,
      params: JSON.stringify(pairsOf(params)),
      created_at: now,
      expires_at: now + PUSHED_REQUEST_TTL * 1000,
      opened_at: null,
      used_at: null,
    }),
  );
  return { request_uri: `${REQUEST_URI_PREFIX}${random}`, expires_in: PUSHED_REQUEST_TTL };
}

const notUsable = (detail: string) =>
  new PageError(400, 'invalid_request', 'This request has expired', 'The application’s sign-in request has expired or was already used. Go back to the application and start again.', {
    request_uri: detail,
  });

const live = (row: PushedRequestRow | null, now: number): row is PushedRequestRow => row !== null && row.used_at === null && Number(row.expires_at) > now;

/**
 * The parameters of an /authorize request: its query, or — when the query names a pushed request
 * (request_uri `urn:ietf:params:oauth:request_uri:…`) — that request's, the query's other
 * parameters ignored but client_id, which must name the client that pushed it. An unknown,
 * expired, used or another client's request_uri is a PageError: no redirect URI is established.
 */
export async function requestParameters(ctx: AppContext, query: Params): Promise<{ params: Params; source: RequestSource }> {
  const requestUri = query.values.get('request_uri');
  // Another request_uri (a request object by reference, OpenID Connect) is refused by request.ts.
  if (requestUri === undefined || !requestUri.startsWith(REQUEST_URI_PREFIX)) return { params: query, source: { kind: 'query' } };
  if (query.repeated.has('request_uri') || query.repeated.has('client_id')) throw notUsable('request_uri and client_id must not be repeated');
  const clientId = query.get('client_id');
  if (clientId === undefined) throw new PageError(400, 'invalid_request', 'Invalid request', 'The request does not name a client (client_id).', { client_id: 'is required' });
  const id = sha256(requestUri.slice(REQUEST_URI_PREFIX.length));
  const now = Date.now();
  let row = await findPushedRequest(ctx.store, id);
  if (!live(row, now)) throw notUsable('is unknown, expired or used');
  if (row.client_id !== clientId) throw notUsable('was not pushed by this client');
  if (row.opened_at === null && !(await write(ctx.store, (tx) => openPushedRequest(tx, id, now, now + PUSHED_INTERACTION_TTL * 1000)))) {
    // Opened a moment ago by another request, or expired just now: as it is now.
    row = await findPushedRequest(ctx.store, id);
    if (!live(row, now)) throw notUsable('is unknown, expired or used');
  }
  const form = formOf(JSON.parse(row.params) as [string, string][]);
  return { params: parseUrlEncoded(form), source: { kind: 'pushed', id, query: form } };
}

/** An /authorize request from its query (GET, or a form's hidden field), whichever source carries its parameters. */
export async function readAuthorizeRequest(ctx: AppContext, query: Params, raw: string, origin?: FetchOrigin): Promise<ReadRequest> {
  const { params, source } = await requestParameters(ctx, query);
  return readAuthorizationRequest(ctx, params, raw, source, origin);
}

/** Uses up the pushed request this request came from (none: nothing to do); a PageError when another answer used it first. */
export async function usePushed(tx: WriteTx, req: VerifiedTarget, now = Date.now()): Promise<void> {
  if (req.pushed && !(await usePushedRequest(tx, req.pushed.id, now))) throw notUsable('was used already');
}

/**
 * What a sign-in has met (`prompt=login`, `max_age`: afterSignIn) is taken out of the request the
 * browser comes back with: the query for a request sent as one, the stored parameters of a pushed one.
 * Answers the query to come back with.
 */
export async function metBySignIn(ctx: AppContext, req: AuthorizationRequest): Promise<string> {
  if (!req.pushed) return afterSignIn(req.raw);
  const rest = afterSignIn(req.pushed.query);
  if (rest !== req.pushed.query) {
    const id = req.pushed.id;
    const pairs = [...new URLSearchParams(rest)];
    if (!(await write(ctx.store, (tx) => rewritePushedParams(tx, id, JSON.stringify(pairs), Date.now())))) throw notUsable('was used already');
  }
  return req.raw;
}
