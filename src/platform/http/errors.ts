// Every error the API answers with is one of these: a status, a summary, and per-field detail.
// Handlers throw them; the error plugin (error-handler.ts) is the only place that writes the body.

export type Detail = Record<string, string>;

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

/** An error of the authorization endpoints: RFC 6749 §5.2 fields plus SPEC's `detail`. */
export class OAuthError extends ApiError {
  constructor(
    readonly code: string,
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
  new ApiError(429, message, detail, { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
export const serviceUnavailable = (retryAfterSeconds: number, message: string, detail: Detail = {}) =>
  new ApiError(503, message, detail, { 'retry-after': String(retryAfterSeconds) });
