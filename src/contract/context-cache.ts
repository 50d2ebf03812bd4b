import type { AppContext } from './context.js';

// The one registry of per-context caches (token checks, clients, scope lists, revocation
// listeners): each lives as long as its context, so two servers in one process (tests) never
// share one, and nothing is kept in module-level state.

const registries = new WeakMap<AppContext, Map<string, unknown>>();

/** The value cached under `name` for this context, made by `make` the first time. */
export function contextCache<T>(ctx: AppContext, name: string, make: () => T): T {
  let registry = registries.get(ctx);
  if (!registry) registries.set(ctx, (registry = new Map()));
  let value = registry.get(name) as T | undefined;
  if (value === undefined) registry.set(name, (value = make()));
  return value;
}
