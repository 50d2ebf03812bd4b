import { OAuthError } from '../platform/http/errors.js';
import type { CollectionRegistry } from '../contract/collections.js';
import { ADMIN_SCOPE } from '../contract/scope-name.js';
import { scopeUniverse } from '../contract/scopes.js';

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

/** Every scope a token can carry: the collections' scopes, then `admin`. */
export function grantableUniverse(collections: CollectionRegistry): string[] {
  return [...scopeUniverse(collections), ADMIN_SCOPE];
}

/**
 * Who the tokens will stand for: the client itself (client_credentials), a user not known yet
 * (an authorization request before sign-in, the password grant before the password is checked),
 * or a known user. `admin` goes to admin users, and to clients registered with it.
 */
export type ScopeHolder = 'client' | 'user' | { admin: boolean };

/** What a client may ask for: its registered scope, or every collection scope (and `admin` for admin users). */
export function allowedScopes(clientScope: string | null, collections: CollectionRegistry, holder: ScopeHolder): string[] {
  const universe = grantableUniverse(collections);
  let allowed: string[];
  if (clientScope === null) allowed = holder === 'client' ? scopeUniverse(collections) : universe;
  else {
    const registered = new Set(clientScope.split(' ').filter(Boolean));
    allowed = universe.filter((s) => registered.has(s));
  }
  if (typeof holder === 'object' && !holder.admin) allowed = allowed.filter((s) => s !== ADMIN_SCOPE);
  return allowed;
}

/**
 * The scope a request gets: the requested one when every value is known and allowed, the
 * client's whole allowed scope when none is requested (without `admin` unless the client is
 * registered for it: operators ask for it by name). Anything else is invalid_scope.
 */
export function resolveRequestedScope(requested: string | undefined, clientScope: string | null, collections: CollectionRegistry, holder: ScopeHolder): string[] {
  const universe = grantableUniverse(collections);
  const allowed = allowedScopes(clientScope, collections, holder);
  if (requested === undefined) {
    const byDefault = clientScope === null ? allowed.filter((s) => s !== ADMIN_SCOPE) : allowed;
    if (byDefault.length === 0) throw new OAuthError('invalid_scope', 'The client has no scope registered', 400, { scope: 'no scope available' });
    return byDefault;
  }
  const parsed = parseScope(requested);
  if (parsed === null || parsed.length === 0)
    throw new OAuthError('invalid_scope', 'The scope parameter is malformed', 400, { scope: 'must be space-separated scope values' });
  const unknown = parsed.filter((s) => !universe.includes(s));
  if (unknown.length)
    throw new OAuthError('invalid_scope', `Unknown scope: ${unknown.join(' ')}`, 400, { scope: `unknown: ${unknown.join(' ')}` });
  const forbidden = parsed.filter((s) => !allowed.includes(s));
  if (forbidden.includes(ADMIN_SCOPE))
    throw new OAuthError('invalid_scope', 'The admin scope is granted only to admin users and to clients registered with it', 400, {
      scope: 'admin: not for this user or client',
    });
  if (forbidden.length)
    throw new OAuthError('invalid_scope', `Scope not allowed for this client: ${forbidden.join(' ')}`, 400, {
      scope: `not allowed for this client: ${forbidden.join(' ')}`,
    });
  // Canonical order (the deployment's), so equal scopes compare equal as strings.
  return universe.filter((s) => parsed.includes(s));
}

/** What a user may be granted of a requested scope (an authorization request read before sign-in). */
export function grantableTo(user: { admin: boolean }, scope: readonly string[]): string[] {
  return user.admin ? [...scope] : scope.filter((s) => s !== ADMIN_SCOPE);
}

/** Keeps the deployment's order so that a granted scope reads the same everywhere. */
export function canonicalScope(scopes: readonly string[], universe: readonly string[]): string[] {
  const set = new Set(scopes);
  return universe.filter((s) => set.has(s));
}
