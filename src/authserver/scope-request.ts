import { InvalidScope } from '../platform/http/errors.js';
import type { CollectionRegistry } from '../contract/collections.js';
import { ADMIN_SCOPE } from '../contract/scope-name.js';
import { scopeUniverse } from '../contract/scopes.js';
import { IDENTITY_SCOPES, OPENID_SCOPE, isIdentityScope } from './oidc/claims.js';

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

/** Every scope a token can carry: OpenID Connect's identity scopes, the collections' scopes, then `admin`. */
export function grantableUniverse(collections: CollectionRegistry): string[] {
  return [...IDENTITY_SCOPES, ...scopeUniverse(collections), ADMIN_SCOPE];
}

/** What the scope rules read of a client: its registered scope (null: every collection scope) and its type. */
export interface ScopeClient {
  scope: string | null;
  public: boolean;
}

/**
 * Who the tokens will stand for, and by which grant: the client itself (client_credentials), or a
 * user — not known yet (an authorization request before sign-in, the password grant before the
 * password is checked) or known.
 */
export type ScopeHolder =
  | { client: true }
  | { user: { admin: boolean } | null; via: 'authorization_code' | 'implicit' | 'password' | 'refresh_token' | 'urn:ietf:params:oauth:grant-type:device_code' };

export const CLIENT_ITSELF: ScopeHolder = { client: true };

function registered(client: ScopeClient): Set<string> | null {
  return client.scope === null ? null : new Set(client.scope.split(' ').filter(Boolean));
}

/**
 * The `admin` rule (docs/oauth.md#scopes), decided here and nowhere else: a client registered
 * with `admin` may have it for itself (client_credentials, automation); for a user, only a
 * confidential client whose registration names it, on behalf of an admin user, and never by the
 * implicit grant (a token in a URL fragment). An unknown user passes until known.
 */
export function adminGrantable(client: ScopeClient, holder: ScopeHolder): boolean {
  const names = registered(client)?.has(ADMIN_SCOPE) ?? false;
  if ('client' in holder) return names;
  return names && !client.public && holder.via !== 'implicit' && (holder.user === null || holder.user.admin);
}

/** What a client may ask for: its registered scope (or every collection scope), and `admin` where adminGrantable says so. */
export function allowedScopes(client: ScopeClient, collections: CollectionRegistry, holder: ScopeHolder): string[] {
  const names = registered(client);
  const collectionScopes = scopeUniverse(collections).filter((s) => names === null || names.has(s));
  return adminGrantable(client, holder) ? [...collectionScopes, ADMIN_SCOPE] : collectionScopes;
}

/**
 * A scope as this holder may be granted it: `admin` dropped where the rule refuses it; nothing
 * left is invalid_scope. Every grant path passes what it is about to grant through here.
 */
export function withAdminRule(scope: readonly string[], client: ScopeClient, holder: ScopeHolder): string[] {
  if (!scope.includes(ADMIN_SCOPE) || adminGrantable(client, holder)) return [...scope];
  const kept = scope.filter((s) => s !== ADMIN_SCOPE);
  if (kept.length === 0)
    throw new InvalidScope('The admin scope is only for a confidential client registered with it, on behalf of an admin user', {
      scope: 'admin: not for this user or client',
    });
  return kept;
}

/**
 * The scope a request gets: the requested one when every value is known and registered for the
 * client (`admin` dropped where the rule refuses it), or the client's allowed scope when none is
 * requested — `admin` by default only to the client itself: a user's `admin` is asked for by name.
 * Anything else is invalid_scope.
 */
export function resolveRequestedScope(requested: string | undefined, client: ScopeClient, collections: CollectionRegistry, holder: ScopeHolder): string[] {
  const universe = grantableUniverse(collections);
  if (requested === undefined) {
    const allowed = allowedScopes(client, collections, holder);
    const byDefault = 'client' in holder ? allowed : allowed.filter((s) => s !== ADMIN_SCOPE);
    if (byDefault.length === 0) throw new InvalidScope('The client has no scope registered', { scope: 'no scope available' });
    return byDefault;
  }
  let parsed = parseScope(requested);
  if (parsed === null || parsed.length === 0)
    throw new InvalidScope('The scope parameter is malformed', { scope: 'must be space-separated scope values' });
  const unknown = parsed.filter((s) => !universe.includes(s));
  // An OpenID Connect request's unknown values (offline_access, address, phone, …) are ignored
  // (Core §3.1.2.1); a plain OAuth request's are an error (RFC 6749 §5.2).
  if (unknown.length && parsed.includes(OPENID_SCOPE) && !('client' in holder)) parsed = parsed.filter((s) => universe.includes(s));
  else if (unknown.length)
    throw new InvalidScope(`Unknown scope: ${unknown.join(' ')}`, { scope: `unknown: ${unknown.join(' ')}` });
  const identity = parsed.filter(isIdentityScope);
  if ('client' in holder && identity.length)
    throw new InvalidScope(`${identity.join(' ')}: identity scopes are about a user, not for a client acting for itself`, { scope: `not for client_credentials: ${identity.join(' ')}` });
  const names = registered(client);
  const forbidden = parsed.filter((s) => s !== ADMIN_SCOPE && names !== null && !names.has(s));
  if (forbidden.length)
    throw new InvalidScope(`Scope not allowed for this client: ${forbidden.join(' ')}`, {
      scope: `not allowed for this client: ${forbidden.join(' ')}`,
    });
  // Canonical order (the deployment's), so equal scopes compare equal as strings.
  return withAdminRule(
    universe.filter((s) => parsed.includes(s)),
    client,
    holder,
  );
}

/** Keeps the deployment's order so that a granted scope reads the same everywhere. */
export function canonicalScope(scopes: readonly string[], universe: readonly string[]): string[] {
  const set = new Set(scopes);
  return universe.filter((s) => set.has(s));
}
