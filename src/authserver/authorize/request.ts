import type { AppContext } from '../../contract/context.js';
import { InvalidRequest, OAuthError, RequestNotSupported, RequestUriNotSupported, UnauthorizedClient, UnsupportedResponseType, type OAuthErrorCode } from '../../platform/http/errors.js';
import { resolveRequestedScope } from '../scope-request.js';
import { findClient, grantEnabled, parRequired, pkceRequired, type Client } from '../model/clients.js';
import { isMetadataDocumentId, MetadataDocumentRefused, type FetchOrigin } from '../model/client-metadata-document.js';
import type { Params } from '../params.js';
import { isWellFormedPkceValue } from '../pkce.js';
import { issuerOf } from '../issuer.js';
import { RESPONSE_TYPES, type RedirectGrantType } from '../grants/registry.js';
import { readAuthorizationResources } from '../resource-request.js';
import { InvalidTarget } from '../../platform/http/errors.js';
import type { Resource } from '../../contract/resources.js';

// Reading an authorization request (RFC 6749 §4.1.1, §4.2.1) in two stages. Until the client and
// its redirect URI are known to be genuine nothing may be redirected (PageError: an error page);
// after that, every problem goes back to the client as RFC 6749 error parameters (RedirectError).
// The same checks read every authorization request, whatever carries its parameters (RequestSource):
// the query of /authorize, a request pushed to /par (RFC 9126) when it arrives, and that pushed
// request again when /authorize names it by its request_uri (pushed.ts).

/**
 * Where the parameters being checked come from: `query` — /authorize itself (GET, or the hidden
 * field of its forms); `push` — the body of a POST to /par, before it is stored; `pushed` — the
 * stored request that /authorize's request_uri names (`id`: its row; `query`: its parameters,
 * form-encoded).
 */
export type RequestSource = { kind: 'query' } | { kind: 'push' } | { kind: 'pushed'; id: string; query: string };

export type ResponseType = 'code' | 'token';

/** What stage 1 establishes: the client is genuine and its redirect URI registered. */
export interface VerifiedTarget {
  client: Client;
  redirectUri: string;
  redirectUriGiven: boolean;
  state: string | undefined;
  /** The query string as received, echoed in the forms. */
  raw: string;
  /** Where errors go before response_type is accepted: the fragment for `token`, else the query. */
  errorMode: ResponseType;
  /** The pushed request (RFC 9126) whose parameters these are, used up when the request is answered; null for the others. */
  pushed: Extract<RequestSource, { kind: 'pushed' }> | null;
}

export interface AuthorizationRequest extends VerifiedTarget {
  responseType: ResponseType;
  /** The grant the response type starts (the registry's RESPONSE_TYPES). */
  grant: RedirectGrantType;
  scope: string[];
  /** Whether the request named its scope (else it asks for what the client may have: write is not ticked for it). */
  scopeGiven: boolean;
  codeChallenge: string | null;
  /**
   * `prompt` (OpenID Connect Core §3.1.2.1, space-separated): `consent` asks again even when a
   * live grant covers the request; `none` shows no page at all (login_required / consent_required);
   * `login` asks the user to sign in again.
   */
  prompt: ReadonlySet<string>;
  /** OpenID Connect: echoed in the ID token. */
  nonce: string | null;
  /** OpenID Connect `max_age`: seconds since the sign-in after which the user signs in again. */
  maxAge: number | null;
  /** OpenID Connect `login_hint`: the user name the login page is filled with. */
  loginHint: string | null;
  /** OpenID Connect `id_token_hint`: an ID token naming the user the client expects. */
  idTokenHint: string | null;
  /** RFC 8707: the resources asked for (the code may be redeemed for any one of them); null: none named, the resource API. */
  resources: Resource[] | null;
}

const PROMPTS = new Set(['none', 'login', 'consent', 'select_account']);
/** The longest `nonce` or `login_hint` taken (a nonce is stored with the code and copied into the ID token). */
const MAX_TEXT_PARAMETER = 512;

/** Every parameter an authorization request is read for (readAuthorizationRequest): a pushed request stores these only. */
export const AUTHORIZATION_PARAMETERS: ReadonlySet<string> = new Set(['client_id', 'redirect_uri', 'state', 'response_type', 'scope', 'code_challenge', 'code_challenge_method', 'prompt', 'max_age', 'nonce', 'login_hint', 'id_token_hint', 'resource', 'request', 'request_uri']);
/** An ID token of ours is about 1 KB (RS256); a hint ten times that is not one. */
const MAX_ID_TOKEN_HINT = 10_000;
const GRANT_OF_RESPONSE_TYPE: ReadonlyMap<string, RedirectGrantType> = new Map(RESPONSE_TYPES);

/** A problem that must not be sent to the redirect URI (unknown client, unregistered URI). */
export class PageError extends Error {
  constructor(
    readonly status: number,
    readonly code: Extract<OAuthErrorCode, 'invalid_request' | 'invalid_client'>,
    readonly title: string,
    readonly description: string,
    readonly detail: Record<string, string>,
  ) {
    super(description);
  }

  /** The same problem as the JSON error body, for a caller that asked for JSON. */
  asOAuthError(): OAuthError {
    return new OAuthError(this.code, this.description, this.status, this.detail);
  }
}

/** A problem reported to the client at its (verified) redirect URI: one of the named OAuth errors. */
export class RedirectError extends Error {
  constructor(readonly error: OAuthError) {
    super(error.description);
  }

  get code(): OAuthErrorCode {
    return this.error.code;
  }

  get description(): string {
    return this.error.description;
  }
}

export interface ReadRequest {
  /** Stage 1 passed: the client and where errors may be sent. */
  partial: VerifiedTarget;
  /** Stage 2: throws RedirectError for anything else wrong. */
  complete: () => AuthorizationRequest;
}

/** Stage 1: who is asking and where the answer may go (PageError). Stage 2: everything else (RedirectError). */
export async function readAuthorizationRequest(ctx: AppContext, params: Params, raw: string, source: RequestSource = { kind: 'query' }, origin?: FetchOrigin): Promise<ReadRequest> {
  for (const name of ['client_id', 'redirect_uri'])
    if (params.repeated.has(name)) throw new PageError(400, 'invalid_request', 'Invalid request', `The ${name} parameter is repeated.`, { [name]: 'must not be repeated' });
  const clientId = params.get('client_id');
  if (!clientId) throw new PageError(400, 'invalid_request', 'Invalid request', 'The request does not name a client (client_id).', { client_id: 'is required' });
  const client = await findClient(ctx, clientId, false, origin).catch((e: unknown) => {
    if (e instanceof MetadataDocumentRefused) throw new PageError(400, 'invalid_client', 'Application not usable', e.description, { client_id: e.reason });
    throw e;
  });
  if (!client) throw new PageError(400, 'invalid_client', 'Unknown application', 'The application that sent you here is not registered.', { client_id: 'is unknown' });
  const given = params.get('redirect_uri');
  let redirectUri: string;
  if (given !== undefined) {
    if (!client.redirectUris.includes(given))
      throw new PageError(400, 'invalid_request', 'Invalid redirect address', 'The address this application wants to send you back to is not registered for it.', {
        redirect_uri: 'is not registered for this client',
      });
    redirectUri = given;
  } else if (client.redirectUris.length === 1 && !isMetadataDocumentId(client.id)) {
    // (A metadata document may change between two requests: its client always names the address.)
    redirectUri = client.redirectUris[0];
  } else {
    throw new PageError(400, 'invalid_request', 'Invalid request', 'The application must say where to send you back (redirect_uri).', {
      redirect_uri: client.redirectUris.length > 1 ? 'is required: the client has several' : client.redirectUris.length ? 'is required for a client of a metadata document' : 'the client has no redirect URI registered',
    });
  }
  const state = params.repeated.has('state') ? undefined : params.get('state');
  const errorMode: ResponseType = !params.repeated.has('response_type') && params.get('response_type') === 'token' ? 'token' : 'code';
  const partial: VerifiedTarget = { client, redirectUri, redirectUriGiven: given !== undefined, state, raw, errorMode, pushed: source.kind === 'pushed' ? source : null };

  // Every OAuth error of stage 2 (invalid_scope from resolveRequestedScope too) goes to the client.
  const complete = (): AuthorizationRequest => {
    try {
      return checkRest();
    } catch (e) {
      throw e instanceof OAuthError ? new RedirectError(e) : e;
    }
  };
  const checkRest = (): AuthorizationRequest => {
    for (const name of params.repeated) if (name !== 'resource') throw new InvalidRequest(`The ${name} parameter is repeated`);
    // RFC 9126 §5: a client that must push its requests may not send one by the browser.
    if (source.kind === 'query' && parRequired(ctx.config, client))
      throw new InvalidRequest('This client must push its authorization requests to the pushed authorization request endpoint (RFC 9126) and send the request_uri');
    // RFC 9126 §2.1: a pushed request names no other request.
    if (source.kind === 'push' && params.get('request_uri') !== undefined) throw new InvalidRequest('request_uri must not be pushed', { request_uri: 'must not be sent to this endpoint' });
    // OpenID Connect Core §6: request objects are not supported (discovery says so).
    if (params.get('request') !== undefined) throw new RequestNotSupported('Request objects (the request parameter) are not supported; send the parameters themselves');
    if (params.get('request_uri') !== undefined) throw new RequestUriNotSupported('request_uri is not supported; send the parameters themselves');
    const responseType = params.get('response_type');
    if (!responseType) throw new InvalidRequest('response_type is required');
    const grant = GRANT_OF_RESPONSE_TYPE.get(responseType);
    if (!grant) throw new UnsupportedResponseType(`Unsupported response_type: ${responseType}`);
    if (!grantEnabled(ctx.config, grant)) throw new UnsupportedResponseType(`response_type=${responseType} is turned off on this server (the ${grant} grant)`);
    if (!client.grantTypes.includes(grant)) throw new UnauthorizedClient(`The client is not registered for the ${grant} grant`);
    const scope = resolveRequestedScope(params.get('scope'), client, ctx.collections, { user: null, via: grant });
    const resources = readAuthorizationResources(ctx.config, params);
    // The implicit grant's token is issued here: for one resource (RFC 8707 §2, as at the token endpoint).
    if (responseType === 'token' && resources !== null && resources.length > 1)
      throw new InvalidTarget('One resource per token: the implicit grant takes a single resource parameter', { resource: 'one resource per token' });
    let codeChallenge: string | null = null;
    if (responseType === 'code') {
      const challenge = params.get('code_challenge');
      const method = params.get('code_challenge_method');
      if (challenge === undefined) {
        if (client.public) throw new InvalidRequest('PKCE is required for public clients: send code_challenge with code_challenge_method=S256');
        if (pkceRequired(ctx.config, client)) throw new InvalidRequest('PKCE is required for this client: send code_challenge with code_challenge_method=S256');
        if (method !== undefined) throw new InvalidRequest('code_challenge_method without code_challenge');
      } else {
        if (method !== 'S256') throw new InvalidRequest('code_challenge_method must be S256');
        if (!isWellFormedPkceValue(challenge)) throw new InvalidRequest('code_challenge is malformed');
        codeChallenge = challenge;
      }
    }
    const prompt = new Set((params.get('prompt') ?? '').split(' ').filter(Boolean));
    for (const value of prompt) if (!PROMPTS.has(value)) throw new InvalidRequest(`Unknown prompt value: ${value}`);
    if (prompt.has('none') && prompt.size > 1) throw new InvalidRequest('prompt=none cannot be combined with other values');
    const maxAgeText = params.get('max_age');
    if (maxAgeText !== undefined && !/^\d{1,10}$/.test(maxAgeText)) throw new InvalidRequest('max_age must be a number of seconds');
    const text = (name: string, max = MAX_TEXT_PARAMETER) => {
      const value = params.get(name);
      if (value !== undefined && value.length > max) throw new InvalidRequest(`${name} is longer than ${max} characters`);
      return value === undefined || value === '' ? null : value;
    };
    return {
      ...partial,
      responseType: responseType as ResponseType,
      grant,
      scope,
      scopeGiven: params.get('scope') !== undefined,
      codeChallenge,
      prompt,
      nonce: text('nonce'),
      maxAge: maxAgeText === undefined ? null : Number(maxAgeText),
      loginHint: text('login_hint'),
      idTokenHint: text('id_token_hint', MAX_ID_TOKEN_HINT),
      resources,
    };
  };
  return { partial, complete };
}

/**
 * An authorization response, success or error: the query for the code grant, the fragment for the
 * implicit grant. Every one names the issuer (RFC 9207 `iss`, the metadata's), so that a client
 * talking to several authorization servers can tell whose answer it got (mix-up attacks).
 */
export function redirectTo(ctx: AppContext, redirectUri: string, responseType: ResponseType | undefined, values: Record<string, string | number | undefined>): string {
  const url = new URL(redirectUri);
  const all: Record<string, string | number | undefined> = { ...values, iss: issuerOf(ctx.config) };
  const entries = Object.entries(all).filter((e): e is [string, string | number] => e[1] !== undefined);
  if (responseType === 'token') url.hash = new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)])).toString();
  else for (const [k, v] of entries) url.searchParams.append(k, String(v));
  return url.toString();
}

/**
 * The request to come back to once the user has signed in: what asked for that sign-in
 * (`prompt=login`, `max_age`) is met by it and taken out, so that the page that
 * follows does not ask again.
 */
export function afterSignIn(raw: string): string {
  const params = new URLSearchParams(raw);
  params.delete('max_age');
  // id_token_hint stays: the login step refuses a sign-in as anyone but the user it names.
  const prompt = (params.get('prompt') ?? '').split(' ').filter((p) => p && p !== 'login');
  if (prompt.length) params.set('prompt', prompt.join(' '));
  else params.delete('prompt');
  return params.toString();
}

/** An OAuth error answered at the client's redirect URI (RFC 6749 §4.1.2.1, §4.2.2.1). */
export function redirectError(ctx: AppContext, redirectUri: string, responseType: ResponseType, error: OAuthError, state: string | undefined): string {
  return redirectTo(ctx, redirectUri, responseType, { error: error.code, error_description: error.description, state });
}

/** The form-action source that lets a consent POST be redirected to the client. */
export function formTarget(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
}
