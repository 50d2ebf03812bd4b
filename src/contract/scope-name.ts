// The one place scope names are made (docs/access.md#scopes): `<collection>:read` allows GET and
// HEAD, `<collection>:write` allows POST, PUT, PATCH and DELETE.

export type ScopeAccess = 'read' | 'write';

/** The operators' scope: the admin API (`/admin/v1`). Granted only to admin users, or to clients registered with it. */
export const ADMIN_SCOPE = 'admin';

export function scopeName(collection: string, access: ScopeAccess): string {
  return `${collection}:${access}`;
}

/** The scope a method needs on a collection. */
export function scopeForMethod(collection: string, method: string): string {
  return scopeName(collection, method === 'GET' || method === 'HEAD' ? 'read' : 'write');
}
