import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { CollectionConfig } from '../config/schema.js';
import type { ColumnKind } from '../store/dialect.js';

// A configured collection as the rest of the code sees it: its table, the columns that mirror
// its filter and sort fields, its parent and children, and its compiled validator.

export type Access = 'owner' | 'shared';

export interface FieldColumn {
  field: string;
  column: string;
  kind: ColumnKind;
}

export interface CollectionModel {
  name: string;
  title: string;
  table: string;
  access: Access;
  schema: Record<string, unknown>;
  properties: Record<string, Record<string, unknown>>;
  parent: { collection: string; field: string } | null;
  children: string[];
  /** Fields that take `<field>=<value>` filters (the parent field included). */
  filters: string[];
  /** Fields accepted by `sortby` (system fields included). */
  sort: string[];
  /** User fields mirrored into x_<field> columns for indexed filtering and sorting. */
  columns: FieldColumn[];
  attachments: { maxBytes: number; types: string[] } | null;
  validate: ValidateFunction;
}

export type CollectionRegistry = ReadonlyMap<string, CollectionModel>;

const SYSTEM_SORT = ['id', 'created_at', 'updated_at'];

function kindOf(property: Record<string, unknown> | undefined): ColumnKind {
  switch (property?.type) {
    case 'integer':
      return 'integer';
    case 'number':
      return 'real';
    case 'boolean':
      return 'boolean';
    default:
      return 'text';
  }
}

export function buildCollections(collections: Record<string, CollectionConfig>): CollectionRegistry {
  const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: false });
  addFormats.default(ajv);
  const registry = new Map<string, CollectionModel>();
  for (const [name, c] of Object.entries(collections)) {
    const parentConfig = c.parent ? collections[c.parent.collection] : undefined;
    const access: Access = parentConfig ? (parentConfig.access ?? 'owner') : (c.access ?? 'owner');
    const properties = c.schema.properties as Record<string, Record<string, unknown>>;
    const columnFields = [...new Set([...c.filters, ...c.sort])].filter(
      (f) => !SYSTEM_SORT.includes(f) && f !== c.parent?.field,
    );
    // The stored document is validated without the server-owned fields, which are rejected earlier.
    const declared = c.schema as Record<string, unknown>;
    const schema = { ...declared, additionalProperties: declared.additionalProperties ?? false };
    registry.set(name, {
      name,
      title: c.title ?? name,
      table: `r_${name}`,
      access,
      schema,
      properties,
      parent: c.parent ? { collection: c.parent.collection, field: c.parent.field } : null,
      children: Object.entries(collections)
        .filter(([, o]) => o.parent?.collection === name)
        .map(([n]) => n),
      filters: [...new Set([...(c.parent ? [c.parent.field] : []), ...c.filters])],
      sort: [...new Set([...SYSTEM_SORT, ...c.sort])],
      columns: columnFields.map((field) => ({ field, column: `x_${field}`, kind: kindOf(properties[field]) })),
      attachments: c.attachments ? { maxBytes: c.attachments.maxBytes, types: c.attachments.types } : null,
      validate: ajv.compile(schema),
    });
  }
  return registry;
}
