import { OAuthError } from '../platform/http/errors.js';

// The scope parameter of OAuth requests (RFC 6749 §3.3): a space-separated list; order and repeats
// carry no meaning. What may be granted comes from the client's registered scope and the deployment's.

/** RFC 6749 §3.3 scope-token characters: %x21 / %x23-5B / %x5D-7E. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** Splits a scope parameter; null when it is malformed (empty tokens, bad characters). */
export function parseScope(value: string): string[] | null {
  if (value === '') return [];
  const tokens = value.split(' ');
  if (tokens.some((t) => !SCOPE_TOKEN.test(t))) return null;
  return [...new Set(tokens)];
}

export function formatScope(scopes: readonly string[]): string {
  return scopes.join(' ');
}

/** What a client may ask for: its registered scope, or every scope of the deployment. */
export function allowedScopes(clientScope: string | null, universe: readonly string[]): string[] {
  if (clientScope === null) return [...universe];
  const registered = new Set(clientScope.split(' ').filter(Boolean));
  return universe.filter((s) => registered.has(s));
}

/**
 * The scope a request gets: the requested one when every value is known and allowed for the
 * client, the client's whole allowed scope when none is requested. Anything else is invalid_scope.
 */
export function resolveRequestedScope(requested: string | undefined, allowed: readonly string[], universe: readonly string[]): string[] {
  if (requested === undefined) {
    if (allowed.length === 0) throw new OAuthError('invalid_scope', 'The client has no scope registered', 400, { scope: 'no scope available' });
    return [...allowed];
  }
  const parsed = parseScope(requested);
  if (parsed === null || parsed.length === 0)
    throw new OAuthError('invalid_scope', 'The scope parameter is malformed', 400, { scope: 'must be space-separated scope values' });
  const unknown = parsed.filter((s) => !universe.includes(s));
  if (unknown.length)
    throw new OAuthError('invalid_scope', `Unknown scope: ${unknown.join(' ')}`, 400, { scope: `unknown: ${unknown.join(' ')}` });
  const forbidden = parsed.filter((s) => !allowed.includes(s));
  if (forbidden.length)
    throw new OAuthError('invalid_scope', `Scope not allowed for this client: ${forbidden.join(' ')}`, 400, {
      scope: `not allowed for this client: ${forbidden.join(' ')}`,
    });
  // Canonical order (the deployment's), so equal scopes compare equal as strings.
  return universe.filter((s) => parsed.includes(s));
}

/** Keeps the deployment's order so that a granted scope reads the same everywhere. */
export function canonicalScope(scopes: readonly string[], universe: readonly string[]): string[] {
  const set = new Set(scopes);
  return universe.filter((s) => set.has(s));
}
