import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import type { CollectionModel } from '../contract/collections.js';

// The resource API's fixed query parameters (docs/api.md "Query language", docs/events.md), as
// schemas: `openapi.ts` describes them from here. The requests are read by their own parsers
// (`query.ts`, `events.ts`), whose answers name each parameter; these schemas are never
// compiled on the resource API's routes, so they add nothing to a request.

/** The limits the parameters depend on (`api.*` of the config). */
export interface ParameterLimits {
  defaultLimit: number;
  maxLimit: number;
  expandLimit: number;
}

/** The longest long poll of the event feed, in seconds. */
export const MAX_WAIT_S = 30;

const optional = (properties: Record<string, TSchema>) => Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, Type.Optional(v)]));

/** `fields` and `expand`: the same on a list and on one record. */
export function viewParameters(m: CollectionModel, limits: ParameterLimits): TObject {
  const related = [...(m.parent ? ['parent'] : []), ...m.children];
  return Type.Object(
    optional({
      fields: Type.String({ description: 'Comma-separated fields to return (id and link always come)' }),
      ...(related.length
        ? {
            expand: Type.String({
              enum: related,
              description: `Carry related records: parent (the parent record), or a child collection (at most ${limits.expandLimit} per record); needs that collection's read scope`,
            }),
          }
        : {}),
    }),
  );
}

/** The names of a list's fixed parameters: every other query key is a filter (query.ts); query.test.ts holds them equal to listParameters'. */
export const LIST_PARAMETER_NAMES: readonly string[] = ['limit', 'offset', 'page', 'per_page', 'sortby', 'order', 'after', 'before', 'count', 'q', 'fields', 'expand'];

/** A list's paging, sorting, counting, view and search parameters (its filters are the collection's own). */
export function listParameters(m: CollectionModel, limits: ParameterLimits): TObject {
  return Type.Object({
    ...optional({
      limit: Type.Integer({ minimum: 1, maximum: limits.maxLimit, default: limits.defaultLimit, description: 'How many records to return' }),
      offset: Type.Integer({ minimum: 0, description: 'Skip this many records (offset paging)' }),
      page: Type.Integer({ minimum: 1 }),
      per_page: Type.Integer({ minimum: 1, maximum: limits.maxLimit }),
      after: Type.String({ description: 'Keyset paging: the opaque cursor of a Link: next (the page after that position)' }),
      before: Type.String({ description: 'Keyset paging: the opaque cursor of a Link: prev (the page before that position, in the same order)' }),
      sortby: Type.String({ description: `Comma-separated sort keys, of: ${m.sort.join(', ')} (ties by id)` }),
      order: Type.String({ description: 'asc or desc: one for all keys, or one per key (comma-separated)' }),
      count: Type.String({ enum: ['exact', 'none'], description: 'none leaves out X-Total-Count (and its cost)' }),
    }),
    ...viewParameters(m, limits).properties,
    ...(m.search.length
      ? optional({ q: Type.String({ description: `Full-text search over ${m.search.join(', ')}: records with every word, by relevance unless sortby is given` }) })
      : {}),
  });
}

/**
 * The event feed's parameters (`GET /v1/events`, `GET /admin/v1/events`). `describedOnly`: the
 * feed's parser reads them (with `Last-Event-ID`), so a route schema built from this never validates.
 */
export function feedParameters(limits: Pick<ParameterLimits, 'defaultLimit' | 'maxLimit'>, collections: readonly string[], types: readonly string[]): TObject {
  return Type.Object(
    optional({
      after: Type.String({ pattern: '^[0-9]+$', description: 'Only events with a larger id' }),
      collections: Type.String({ description: `Comma list of collections (${collections.join(', ')})` }),
      types: Type.String({ description: `Comma list of types (${types.join(', ')})` }),
      limit: Type.Integer({ minimum: 1, maximum: limits.maxLimit, default: limits.defaultLimit }),
      wait: Type.Integer({ minimum: 0, maximum: MAX_WAIT_S, default: 0, description: 'Seconds to wait for an event when there is none newer yet' }),
    }),
    { describedOnly: true },
  );
}
