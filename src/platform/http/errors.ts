// Every error the API answers with is one of these: a status, a summary, and per-field detail.
// Handlers throw them; the error plugin (error-handler.ts) is the only place that writes the body.

export type Detail = Record<string, string>;

/** A 429's Retry-After: whole seconds, at least 1. */
const retryAfter = (seconds: number): string => String(Math.max(1, Math.ceil(seconds)));

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly detail: Detail = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  body(): Record<string, unknown> {
    return { error: this.message, detail: this.detail };
  }
}

/**
 * An error of the authorization server: RFC 6749 §5.2 fields plus `detail` (docs/oauth.md). Thrown
 * as one of the named classes below; built from its parts only where the code is data (PageError).
 */
export class OAuthError extends ApiError {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    status = 400,
    detail: Detail = {},
    headers: Record<string, string> = {},
  ) {
    super(status, description, detail, headers);
    this.name = 'OAuthError';
  }

  override body(): Record<string, unknown> {
    return { error: this.code, error_description: this.description, detail: this.detail };
  }
}

// The OAuth error catalogue: one class per error code the authorization server answers with
// (RFC 6749 §4.1.2.1, §5.2; docs/oauth.md). Each fixes its code, status and headers; a handler
// names the error and says what is wrong, never the wire shape.

/** Every `error` value the authorization server sends, in a body or at a redirect URI. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'login_required'
  | 'consent_required'
  | 'interaction_required'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'temporarily_unavailable'
  | 'too_many_requests'
  | 'invalid_dpop_proof'
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token'
  | 'invalid_target'
  | 'invalid_client_metadata'
  | 'invalid_redirect_uri';

/** RFC 6749 §5.2: a missing, repeated or malformed parameter. */
export class InvalidRequest extends OAuthError {
  constructor(description: string, detail: Detail = {}) {
    super('invalid_request', description, 400, detail);
  }
}

const BASIC_CHALLENGE = 'Basic realm="gatehouse", charset="UTF-8"';

/** RFC 6749 §5.2: client authentication failed; 401 with the Basic challenge. */
export class InvalidClient extends OAuthError {
  constructor(description: string, detail: Detail = { client: 'authentication failed' }) {
    super('invalid_client', description, 401, detail, { 'www-authenticate': BASIC_CHALLENGE });
  }
}

/** RFC 6749 §5.2: the code, refresh token or resource owner credentials are not good. */
export class InvalidGrant extends OAuthError {
  constructor(description: string, detail: Detail = {}) {
    super('invalid_grant', description, 400, detail);
  }
}

/** RFC 6749 §5.2: this client may not use this grant. */
export class UnauthorizedClient extends OAuthError {
  constructor(description: string, detail: Detail = {}) {
    super('unauthorized_client', description, 400, detail);
  }
}

/** RFC 6749 §5.2: a grant type this server does not offer. */
export class UnsupportedGrantType extends OAuthError {
  constructor(description: string, detail: Detail = {}) {
    super('unsupported_grant_type', description, 400, detail);
  }
}

/** RFC 6749 §5.2: a scope unknown, malformed, or beyond what the client or grant holds. */
export class InvalidScope extends OAuthError {
  constructor(description: string, detail: Detail = {}) {
    super('invalid_scope', description, 400, detail);
  }
}

/** RFC 8628 §3.5: the user has not decided yet; poll again after the interval. */
export class AuthorizationPending extends OAuthError {
  constructor(description: string, detail: Detail = {}) {
    super('authorization_pending', description, 400, detail);
  }
}

/** RFC 8628 §3.5: polled faster than the interval; the interval grows by 5 seconds. */
export class SlowDown extends OAuthError {
  constructor(description: string, detail: Detail = {}) {
    super('slow_down', description, 400, detail);
  }
}

/** RFC 8628 §3.5: the device code has expired; start again. */
export class ExpiredToken extends OAuthError {
  constructor(description: string, detail: Detail = {}) {
    super('expired_token', description, 400, detail);
  }
}

/** RFC 8707 §2: a `resource` that is not one of the deployment's, not absolute, has a fragment, or more than a token can be for. */
export class InvalidTarget extends OAuthError {
  constructor(description: string, detail: Detail = {}) {
    super('invalid_target', description, 400, detail);
  }
}

/** 429 of a throttled sign-in, with Retry-After (in whole seconds, at least 1). */
export class TooManyRequests extends OAuthError {
  constructor(retryAfterSeconds: number, description: string, detail: Detail = {}) {
    super('too_many_requests', description, 429, detail, { 'retry-after': retryAfter(retryAfterSeconds) });
  }
}

/** RFC 6749 §5.2 / §4.1.2.1: the service cannot answer now (maintenance), with Retry-After. */
export class TemporarilyUnavailable extends OAuthError {
  constructor(retryAfterSeconds: number, description: string, detail: Detail = {}) {
    super('temporarily_unavailable', description, 503, detail, { 'retry-after': String(retryAfterSeconds) });
  }
}

/** RFC 7591 §3.2.2: a value of the client metadata is invalid (dynamic client registration). */
export class InvalidClientMetadata extends OAuthError {
  constructor(description: string, detail: Detail = {}) {
    super('invalid_client_metadata', description, 400, detail);
  }
}

/** RFC 7591 §3.2.2: a redirect URI of the client metadata is invalid. */
export class InvalidRedirectUri extends OAuthError {
  constructor(description: string, detail: Detail = {}) {
    super('invalid_redirect_uri', description, 400, detail);
  }
}

// Answered only at a client's redirect URI (authserver/authorize): their status is never sent.

/** RFC 6749 §4.1.2.1: a response_type this server does not offer (or turned off). */
export class UnsupportedResponseType extends OAuthError {
  constructor(description: string) {
    super('unsupported_response_type', description);
  }
}

/** RFC 6749 §4.1.2.1: the user said no. */
export class AccessDenied extends OAuthError {
  constructor(description: string) {
    super('access_denied', description);
  }
}

/** OpenID Connect Core §3.1.2.6: prompt=none without a signed-in user. */
export class LoginRequired extends OAuthError {
  constructor(description: string) {
    super('login_required', description);
  }
}

/** OpenID Connect Core §3.1.2.6: prompt=none and no grant covers the request. */
export class ConsentRequired extends OAuthError {
  constructor(description: string) {
    super('consent_required', description);
  }
}

/** OpenID Connect Core §3.1.2.6: a request object (`request`) was sent; gatehouse takes none. */
export class RequestNotSupported extends OAuthError {
  constructor(description: string) {
    super('request_not_supported', description);
  }
}

/** OpenID Connect Core §3.1.2.6: a request object by reference (`request_uri`) was sent. */
export class RequestUriNotSupported extends OAuthError {
  constructor(description: string) {
    super('request_uri_not_supported', description);
  }
}

/** RFC 6750 §3: the challenge's error_description is printable ASCII without quotes or backslashes. */
const challenge = (scheme: 'Bearer' | 'DPoP', error: string, description: string) =>
  `${scheme} error="${error}", error_description="${description.replace(/["\\]/g, "'").replace(/[^\x20-\x7E]/g, '')}"`;
const bearerChallenge = (error: string, description: string) => challenge('Bearer', error, description);

/** RFC 6750 §3.1: the access token presented (userinfo) is missing, unknown, expired or revoked; a DPoP-bound one is challenged with DPoP (RFC 9449 §7.1). */
export class InvalidToken extends OAuthError {
  constructor(description: string, detail: Detail = {}, scheme: 'Bearer' | 'DPoP' = 'Bearer') {
    super('invalid_token', description, 401, detail, { 'www-authenticate': challenge(scheme, 'invalid_token', description) });
  }
}

/** RFC 9449 §5, §7.1: a DPoP proof missing, malformed or not for this request — 400 at the token endpoint, 401 with a DPoP challenge at a resource. */
export class InvalidDpopProof extends OAuthError {
  constructor(description: string, detail: Detail = {}, status: 400 | 401 = 400) {
    super('invalid_dpop_proof', description, status, detail, status === 401 ? { 'www-authenticate': challenge('DPoP', 'invalid_dpop_proof', description) } : {});
  }
}

/** RFC 6750 §3.1: no access token at all (the challenge then names no error). */
export class TokenMissing extends OAuthError {
  constructor(description: string, detail: Detail = {}) {
    super('invalid_request', description, 401, detail, { 'www-authenticate': 'Bearer' });
  }
}

/** RFC 6750 §3.1: the access token lacks the scope this endpoint needs (userinfo: `openid`). */
export class InsufficientScope extends OAuthError {
  constructor(description: string, detail: Detail = {}) {
    super('insufficient_scope', description, 403, detail, { 'www-authenticate': bearerChallenge('insufficient_scope', description) });
  }
}

export const badRequest = (message: string, detail: Detail = {}) => new ApiError(400, message, detail);
export const unauthorized = (message: string, challenge: string, detail: Detail = {}) =>
  new ApiError(401, message, detail, { 'www-authenticate': challenge });
export const forbidden = (message: string, detail: Detail = {}) => new ApiError(403, message, detail);
export const notFound = (message = 'Not found', detail: Detail = {}) => new ApiError(404, message, detail);
export const methodNotAllowed = (allow: readonly string[], message = 'Method not allowed', detail: Detail = {}) =>
  new ApiError(405, message, detail, { allow: allow.join(', ') });
export const gone = (message = 'Gone', detail: Detail = {}) => new ApiError(410, message, detail);
export const preconditionFailed = (detail: Detail = {}) =>
  new ApiError(412, 'The record has changed since it was read (If-Match does not match)', detail);
export const payloadTooLarge = (message = 'Request body too large', detail: Detail = {}) => new ApiError(413, message, detail);
export const unsupportedMediaType = (message: string, detail: Detail = {}) => new ApiError(415, message, detail);
export const unprocessable = (message: string, detail: Detail = {}) => new ApiError(422, message, detail);
export const tooManyRequests = (retryAfterSeconds: number, message = 'Too many requests', detail: Detail = {}) =>
  new ApiError(429, message, detail, { 'retry-after': retryAfter(retryAfterSeconds) });
export const serviceUnavailable = (retryAfterSeconds: number, message: string, detail: Detail = {}) =>
  new ApiError(503, message, detail, { 'retry-after': String(retryAfterSeconds) });
