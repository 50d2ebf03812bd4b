import type { CollectionRegistry } from './collections.js';

// Scopes of a deployment: `<collection>:read` and `<collection>:write` for every collection, as
// both servers see them. Reading a scope parameter is the authorization server's (authserver/scope-request.ts).

export { scopeName, scopeForMethod, ADMIN_SCOPE, type ScopeAccess } from './scope-name.js';
import { ADMIN_SCOPE } from './scope-name.js';

/** What a scope allows, in words (consent page, API reference). */
export function scopeLabel(collections: CollectionRegistry, scope: string): string {
  if (scope === ADMIN_SCOPE) return 'Administer this gatehouse: clients, users, grants and maintenance';
  const [collection, access] = scope.split(':');
  const model = collections.get(collection);
  const what = `${model?.access === 'shared' ? '' : 'your '}${model?.title ?? collection}`;
  return access === 'read' ? `Read ${what}` : `Create, change and delete ${what}`;
}

/** Every scope of the deployment, in the deployment's order (the registry is built once, so is this list). */
export function scopeUniverse(collections: CollectionRegistry): string[] {
  return collections.scopes as string[];
}
