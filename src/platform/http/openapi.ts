import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import { schemaAnnotations } from './schema-validator.js';

// OpenAPI 3.1 pieces generated from route schemas, so that the document is the validator's own
// description (docs/decisions.md "The admin OpenAPI from its route schemas"). `collectOperations`
// records the routes registered with a schema; `pathItems` turns them into the paths of a
// document; `documented` and `queryParameters` serve any TypeBox schema (the resource API's fixed
// query parameters, api/parameters.ts).

type Obj = Record<string, unknown>;

/** What an operation's route schema may say besides its parts (the same keys as @fastify/swagger's). */
export interface OperationSchema extends FastifySchema {
  operationId: string;
  summary: string;
  description?: string;
}

export interface Operation {
  method: string;
  /** The route's path below the plugin's prefix (`/admin/v1/clients/:id`). */
  path: string;
  schema: OperationSchema;
  /** A request without a body counts as `{}` (its requestBody is optional). */
  bodyOptional: boolean;
}

/**
 * A route hook that makes an absent body `{}` before validation (a JSON `null` stays invalid);
 * the document marks such a body optional.
 */
export async function absentBodyIsEmpty(request: { body: unknown }): Promise<void> {
  if (request.body === undefined) request.body = {};
}

/** Records every route registered from now on in `app` with an operation schema (HEAD and the 405 catch-alls have none). */
export function collectOperations(app: FastifyInstance): readonly Operation[] {
  const operations: Operation[] = [];
  // Fastify sets `routePath` (the path without the plugins' prefix) on the options it hands to onRoute.
  app.addHook('onRoute', (route: RouteOptions & { routePath?: string }) => {
    const schema = route.schema as OperationSchema | undefined;
    if (!schema?.operationId || typeof route.method !== 'string' || route.method === 'HEAD') return;
    const hooks = ([] as unknown[]).concat(route.preValidation ?? []);
    operations.push({ method: route.method.toLowerCase(), path: route.routePath ?? route.url, schema, bodyOptional: hooks.includes(absentBodyIsEmpty) });
  });
  return operations;
}

/** A schema as the document shows it: plain JSON, without the validator's annotations. */
export function documented(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(documented);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Obj = {};
  for (const [key, value] of Object.entries(schema))
    if (!(schemaAnnotations as readonly string[]).includes(key))
      out[key] = key === 'properties' ? Object.fromEntries(Object.entries(value as Obj).map(([k, v]) => [k, documented(v)])) : documented(value);
  return out;
}

/** An object schema's properties as OpenAPI parameters (`in: query` or `path`), each with its description. */
export function queryParameters(schema: Obj | undefined, where: 'query' | 'path' = 'query'): Obj[] {
  const properties = (schema?.properties ?? {}) as Record<string, Obj>;
  const required = (schema?.required ?? []) as string[];
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = documented(property) as Obj;
    return { name, in: where, ...(where === 'path' || required.includes(name) ? { required: true } : {}), schema: rest, ...(description ? { description } : {}) };
  });
}

/** `/a/:id` → `/a/{id}`. */
const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/**
 * The path items of these operations. `common` is added to each operation (tags, security);
 * `pathItem` to each path (its servers); `refs` names schemas shown as a `$ref` (the error body).
 */
export function pathItems(operations: readonly Operation[], common: Obj, pathItem: Obj = {}, refs: Map<unknown, string> = new Map()): Obj {
  const shown = (schema: unknown) => (refs.has(schema) ? { $ref: refs.get(schema) } : documented(schema));
  const paths: Record<string, Obj> = {};
  for (const { method, path, schema, bodyOptional } of operations) {
    const { operationId, summary, description, params, querystring, body, response } = schema;
    const parameters = [...queryParameters(params as Obj | undefined, 'path'), ...queryParameters(querystring as Obj | undefined)];
    const responses = Object.fromEntries(
      Object.entries((response ?? {}) as Record<string, Obj>).map(([code, r]) => {
        const content = r.content as Record<string, { schema: unknown }> | undefined;
        return [code, { description: r.description, ...(content ? { content: Object.fromEntries(Object.entries(content).map(([type, c]) => [type, { schema: shown(c.schema) }])) } : {}) }];
      }),
    );
    (paths[openApiPath(path)] ??= { ...pathItem })[method] = {
      ...common,
      operationId,
      summary,
      ...(description ? { description } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(body ? { requestBody: { required: !bodyOptional, content: { 'application/json': { schema: shown(body) } } } } : {}),
      responses,
    };
  }
  return paths;
}
