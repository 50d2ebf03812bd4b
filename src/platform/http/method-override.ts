import type { IncomingMessage } from 'node:http';
import { ApiError } from './errors.js';

// docs/api.md#method-override: a client limited to GET and POST sends POST + X-HTTP-Method-Override. The method is
// rewritten before routing, so the overridden request is routed, checked and logged exactly as
// the intended method would be.

const OVERRIDABLE = new Set(['PUT', 'PATCH', 'DELETE']);
const overrideError = Symbol('gatehouse.methodOverrideError');
const overriddenFrom = Symbol('gatehouse.overriddenFrom');

type Marked = IncomingMessage & { [overrideError]?: ApiError; [overriddenFrom]?: string };

export function applyMethodOverride(req: IncomingMessage): void {
  const value = req.headers['x-http-method-override'];
  if (value === undefined) return;
  const marked = req as Marked;
  const wanted = (Array.isArray(value) ? value.join(',') : value).trim().toUpperCase();
  if (req.method !== 'POST') {
    marked[overrideError] = new ApiError(400, 'X-HTTP-Method-Override is only accepted on POST', {
      'x-http-method-override': 'only accepted on POST',
    });
  } else if (!OVERRIDABLE.has(wanted)) {
    marked[overrideError] = new ApiError(400, 'Unsupported X-HTTP-Method-Override', {
      'x-http-method-override': 'must be PUT, PATCH or DELETE',
    });
  } else {
    marked[overriddenFrom] = req.method;
    req.method = wanted;
  }
}

/** The error recorded by applyMethodOverride, thrown from the first hook so it gets the JSON error body. */
export function methodOverrideError(req: IncomingMessage): ApiError | undefined {
  return (req as Marked)[overrideError];
}

/** The method the client actually sent (POST when it was overridden): what a MAC signs. */
export function sentMethod(req: IncomingMessage): string {
  return (req as Marked)[overriddenFrom] ?? req.method ?? 'GET';
}
