import { forbidden, methodNotAllowed } from '../../platform/http/errors.js';
import type { Caller } from '../../contract/caller.js';
import { scopeForMethod, scopeName } from '../../contract/scope-name.js';

// docs/access.md#401-403-405 in one place: what a token may do on a collection.
// <collection>:read allows GET and HEAD; <collection>:write allows POST, PUT, PATCH and DELETE.

/** Whether the caller's scope covers `method` on the collection. */
function mayUse(caller: Caller, collection: string, method: string): boolean {
  return caller.scopes.has(scopeForMethod(collection, method));
}

/** The methods among `offered` that the caller's scope allows on the collection. */
export function permittedMethods(caller: Caller, collection: string, offered: readonly string[]): string[] {
  return offered.filter((m) => mayUse(caller, collection, m));
}

/**
 * 403 when the token has no scope at all on the collection; 405 + Allow (what this token may do
 * here) when its scope does not cover the method or the URL does not support it.
 */
export function decideAccess(caller: Caller, collection: string, method: string, offered: readonly string[]): void {
  requireAnyScope(caller, collection);
  const supported = offered.includes(method);
  if (supported && mayUse(caller, collection, method)) return;
  throw methodNotAllowed(permittedMethods(caller, collection, offered), supported ? `This token does not allow ${method} on ${collection}` : `${method} is not supported on this URL`, {
    method: supported ? `requires scope ${scopeForMethod(collection, method)}` : `allowed: ${offered.join(', ')}`,
  });
}

/** 403 unless the token holds some scope on the collection. */
export function requireAnyScope(caller: Caller, collection: string): void {
  const read = scopeName(collection, 'read');
  const write = scopeName(collection, 'write');
  if (!caller.scopes.has(read) && !caller.scopes.has(write)) throw forbidden(`This token has no scope on ${collection}`, { scope: `requires ${read} or ${write}` });
}
