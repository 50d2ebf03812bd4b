// The one place scope names are made (DESIGN.md "scopes"): `<collection>:read` allows GET and
// HEAD, `<collection>:write` allows POST, PUT, PATCH and DELETE.

export type ScopeAccess = 'read' | 'write';

export function scopeName(collection: string, access: ScopeAccess): string {
  return `${collection}:${access}`;
}

/** The scope a method needs on a collection. */
export function scopeForMethod(collection: string, method: string): string {
  return scopeName(collection, method === 'GET' || method === 'HEAD' ? 'read' : 'write');
}
