import type { CollectionModel, CollectionRegistry } from '../../contract/collections.js';
import type { Caller } from '../../contract/caller.js';
import { scopeName } from '../../contract/scope-name.js';
import { OPERATORS } from '../store/operators.js';
import { operatorsOf, type ListLimits } from '../query.js';

// The MCP tools of a deployment, generated from its collections (docs/mcp.md): per collection,
// list_/get_ under <collection>:read and create_/update_/delete_ under <collection>:write. Their
// input schemas come from the collection's JSON Schema and the query language (query.ts,
// store/operators.ts); their descriptions from the config. Made once per collection registry;
// a caller sees the tools its scopes allow (toolsFor).

export type Verb = 'list' | 'get' | 'create' | 'update' | 'delete';
const READS: readonly Verb[] = ['list', 'get'];
const WRITES: readonly Verb[] = ['create', 'update', 'delete'];

type Schema = Record<string, unknown>;

export interface Tool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, Schema>; required?: string[]; additionalProperties?: boolean };
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
}

/** A tool's name: which collection and what it does. */
export interface ToolTarget {
  verb: Verb;
  model: CollectionModel;
}

export interface Catalogue {
  /** Every tool, by name. */
  tools: ReadonlyMap<string, Tool & ToolTarget>;
  /** The scope a tool needs. */
  scopeOf(tool: ToolTarget): string;
}

const catalogues = new WeakMap<CollectionRegistry, Catalogue>();

/** The tools of the deployment (made once per collection registry: a config reload makes a new one). */
export function catalogueOf(collections: CollectionRegistry, limits: ListLimits): Catalogue {
  let catalogue = catalogues.get(collections);
  if (!catalogue) {
    const tools = new Map<string, Tool & ToolTarget>();
    for (const model of collections.values()) for (const verb of [...READS, ...WRITES]) tools.set(`${verb}_${model.name}`, { ...toolOf(verb, model, limits), verb, model });
    catalogue = { tools, scopeOf: (t) => scopeName(t.model.name, READS.includes(t.verb) ? 'read' : 'write') };
    catalogues.set(collections, catalogue);
  }
  return catalogue;
}

/** The tools this caller's scopes allow, in the catalogue's order (collections as configured). */
export function toolsFor(catalogue: Catalogue, caller: Caller): Tool[] {
  const out: Tool[] = [];
  for (const t of catalogue.tools.values()) if (caller.scopes.has(catalogue.scopeOf(t))) out.push(publicPart(t));
  return out;
}

function publicPart(t: Tool & ToolTarget): Tool {
  return { name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations };
}

const ID = { type: 'string', description: 'The record id' };

/** A field's schema as the tool takes it: the JSON Schema of the config, description included. */
function fieldSchemas(model: CollectionModel): Record<string, Schema> {
  const props: Record<string, Schema> = { ...model.properties };
  if (model.parent) props[model.parent.field] = { type: 'string', description: `Id of the parent ${model.parent.collection} record` };
  return props;
}

/** An update's fields: an optional one also takes null, which removes it (a merge patch, RFC 7396). */
function removable(fields: Record<string, Schema>, required: string[]): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  for (const [field, schema] of Object.entries(fields)) {
    const description = typeof schema.description === 'string' ? { description: schema.description } : {};
    out[field] = required.includes(field) ? schema : { ...description, anyOf: [schema, { type: 'null' }] };
  }
  return out;
}

/** The JSON Schema of one filter value of `field` (the value types the query language takes for it). */
function valueSchema(model: CollectionModel, field: string): Schema {
  if (field === model.parent?.field) return { type: 'string' };
  const declared = model.properties[field] ?? {};
  const column = model.columns.find((c) => c.field === field);
  const type = column?.type.type ?? 'string';
  const out: Schema = { type };
  if (column?.type.values) out.enum = column.type.values.filter((v) => v !== null);
  if (typeof declared.format === 'string') out.format = declared.format;
  return out;
}

/** A filter argument: a value (equality), or an object of operators (`{"gte": 1900, "lt": 2000}`) as the query language has them. */
function filterSchema(model: CollectionModel, field: string): Schema {
  const value = valueSchema(model, field);
  const ops: Record<string, Schema> = {};
  for (const op of operatorsOf(model, field)) {
    const spec = OPERATORS[op];
    const schema: Schema =
      spec.arity === 'flag' ? { type: 'boolean' } : spec.arity === 'list' ? { type: 'array', items: value, minItems: 1 } : spec.value === 'text' ? { type: 'string', minLength: 1 } : value;
    ops[op] = { ...schema, description: spec.description };
  }
  const declared = model.properties[field]?.description;
  return {
    description: `${typeof declared === 'string' ? `${declared}. ` : ''}Only records whose ${field} equals this value, or matches every operator of an object (${Object.keys(ops).join(', ')}).`,
    anyOf: [value, { type: 'object', properties: ops, additionalProperties: false, minProperties: 1 }],
  };
}

function toolOf(verb: Verb, model: CollectionModel, limits: ListLimits): Tool {
  const what = model.description ? ` (${model.name}: ${model.description.replace(/\.$/, '')})` : '';
  const mine = model.access === 'owner' ? ' Only the records the user owns are visible.' : '';
  const fields = fieldSchemas(model);
  const required = [...((model.schema.required as string[] | undefined) ?? []), ...(model.parent ? [model.parent.field] : [])];
  const annotations = (readOnly: boolean, destructive: boolean, idempotent: boolean) => ({ readOnlyHint: readOnly, destructiveHint: destructive, idempotentHint: idempotent, openWorldHint: false });
  switch (verb) {
    case 'list': {
      const properties: Record<string, Schema> = {};
      for (const f of model.filters) properties[f] = filterSchema(model, f);
      if (model.search.length) properties.q = { type: 'string', description: `Full-text search in ${model.search.join(', ')}` };
      properties.sortby = { type: 'string', description: `Comma-separated sort fields, among ${model.sort.join(', ')} (default id)` };
      properties.order = { type: 'string', enum: ['asc', 'desc'], description: 'Sort order (default asc)' };
      properties.limit = { type: 'integer', minimum: 1, maximum: limits.maxLimit, description: `Records per page (default ${limits.defaultLimit})` };
      properties.after = { type: 'string', description: 'The `next` cursor of the previous page' };
      return {
        name: `list_${model.name}`,
        title: `List ${model.title}`,
        description: `Lists ${model.name} records${what}, filtered, searched and sorted; answers { records, next, total }: pass next as after for the next page.${mine}`,
        inputSchema: { type: 'object', properties, additionalProperties: false },
        annotations: annotations(true, false, true),
      };
    }
    case 'get':
      return {
        name: `get_${model.name}`,
        title: `Get a ${model.name} record`,
        description: `Reads one ${model.name} record by id${what}.${mine}`,
        inputSchema: { type: 'object', properties: { id: ID }, required: ['id'], additionalProperties: false },
        annotations: annotations(true, false, true),
      };
    case 'create':
      return {
        name: `create_${model.name}`,
        title: `Create a ${model.name} record`,
        description: `Creates a ${model.name} record${what}; the user owns it. Answers the record with its id.`,
        inputSchema: { type: 'object', properties: fields, ...(required.length ? { required } : {}), additionalProperties: false },
        annotations: annotations(false, false, false),
      };
    case 'update':
      return {
        name: `update_${model.name}`,
        title: `Update a ${model.name} record`,
        description: `Changes the given fields of a ${model.name} record${what} (the others stay; null removes an optional field). Answers the record.`,
        inputSchema: { type: 'object', properties: { id: ID, ...removable(fields, required) }, required: ['id'], additionalProperties: false },
        annotations: annotations(false, false, true),
      };
    case 'delete':
      return {
        name: `delete_${model.name}`,
        title: `Delete a ${model.name} record`,
        description: `Deletes a ${model.name} record${what}${model.children.length ? ` and its ${model.children.join(', ')}` : ''}.`,
        inputSchema: { type: 'object', properties: { id: ID }, required: ['id'], additionalProperties: false },
        annotations: annotations(false, true, true),
      };
  }
}
