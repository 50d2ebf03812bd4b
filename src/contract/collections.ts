import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { scopeName } from './scope-name.js';
import type { CollectionConfig } from '../platform/config/schema.js';
import type { ColumnKind } from '../platform/store/store.js';
import { SYSTEM_SORT_FIELDS, isSystemSortField } from '../platform/config/record-fields.js';
import { scalarFieldType, type FieldType, type ScalarField } from '../platform/config/field-types.js';

// A configured collection as the rest of the code sees it: its table, the columns that mirror
// its filter and sort fields, its parent and children, and its compiled validator.

export type Access = 'owner' | 'shared';

export interface FieldColumn {
  field: string;
  column: string;
  /** The field's type as the config declares or implies it (field-types.ts): its type, nullability and enum values. */
  type: ScalarField;
  kind: ColumnKind;
  /** `format: date-time` values are kept in the column as UTC ISO instants, so they compare in time order. */
  format: 'date' | 'date-time' | null;
}

export interface CollectionModel {
  name: string;
  title: string;
  /** What it holds, from the config (the OpenAPI document's tag description); null when not said. */
  description: string | null;
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
  /** String fields searched by `q=` (full-text), in the config's order; empty: no search. */
  search: string[];
  /** Compound indexes from the config: each an ordered list of filter/sort fields. */
  indexes: string[][];
  attachments: { maxBytes: number; types: string[] } | null;
  /** Declared changes to the stored records, in order: `renamedFrom` first, then `migrations:`. */
  migrations: MigrationStep[];
  validate: ValidateFunction;
}

export type ConvertTarget = 'string' | 'number' | 'integer' | 'boolean' | 'date-time';

/** One declared change to a collection's stored records (docs/configuration.md, Changing the schema). */
export type MigrationStep =
  | { rename: { from: string; to: string } }
  | { convert: { field: string; to: ConvertTarget; onError: 'fail' | 'null' | 'default' } }
  | { default: { field: string; value: unknown } }
  | { drop: string };

export type CollectionRegistry = ReadonlyMap<string, CollectionModel> & {
  /** Every scope of the deployment, in the deployment's order. */
  readonly scopes: readonly string[];
};


const KINDS: Record<FieldType, ColumnKind> = { string: 'text', integer: 'integer', number: 'real', boolean: 'boolean' };

function fieldColumn(field: string, property: Record<string, unknown> | undefined): FieldColumn {
  // The config loader has refused every filter/sort field without a scalar type.
  const type = scalarFieldType(property);
  const format = type.type === 'string' && (property?.format === 'date' || property?.format === 'date-time') ? property.format : null;
  return { field, column: `x_${field}`, type, kind: KINDS[type.type], format };
}

export function buildCollections(collections: Record<string, CollectionConfig>): CollectionRegistry {
  const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: false });
  addFormats.default(ajv);
  const registry = new Map<string, CollectionModel>();
  for (const [name, c] of Object.entries(collections)) {
    const parentConfig = c.parent ? collections[c.parent.collection] : undefined;
    const access: Access = parentConfig ? (parentConfig.access ?? 'owner') : (c.access ?? 'owner');
    // `renamedFrom` is a migration, not a rule of the schema: the validator and OpenAPI never see it.
    const renames: MigrationStep[] = [];
    const properties: Record<string, Record<string, unknown>> = {};
    for (const [field, p] of Object.entries(c.schema.properties as Record<string, Record<string, unknown>>)) {
      const { renamedFrom, ...rest } = p;
      if (typeof renamedFrom === 'string') renames.push({ rename: { from: renamedFrom, to: field } });
      properties[field] = renamedFrom === undefined ? p : rest;
    }
    const columnFields = [...new Set([...c.filters, ...c.sort])].filter(
      (f) => !isSystemSortField(f) && f !== c.parent?.field,
    );
    // The stored document is validated without the server-owned fields, which are rejected earlier.
    const declared = c.schema as Record<string, unknown>;
    const schema = { ...declared, properties, additionalProperties: declared.additionalProperties ?? false };
    registry.set(name, {
      name,
      title: c.title ?? name,
      description: c.description ?? null,
      table: `r_${name}`,
      access,
      schema,
      properties,
      parent: c.parent ? { collection: c.parent.collection, field: c.parent.field } : null,
      children: Object.entries(collections)
        .filter(([, o]) => o.parent?.collection === name)
        .map(([n]) => n),
      filters: [...new Set([...(c.parent ? [c.parent.field] : []), ...c.filters])],
      sort: [...new Set([...SYSTEM_SORT_FIELDS, ...c.sort])],
      columns: columnFields.map((field) => fieldColumn(field, properties[field])),
      search: [...new Set(c.search)],
      indexes: (c.indexes ?? []).map((fields) => [...fields]),
      attachments: c.attachments ? { maxBytes: c.attachments.maxBytes, types: c.attachments.types } : null,
      migrations: [...renames, ...(c.migrations ?? []).map((step): MigrationStep => ('convert' in step ? { convert: { ...step.convert, onError: step.convert.onError ?? 'fail' } } : (step as MigrationStep)))],
      validate: ajv.compile(schema),
    });
  }
  const scopes = Object.freeze([...registry.keys()].flatMap((name) => [scopeName(name, 'read'), scopeName(name, 'write')]));
  return Object.assign(registry, { scopes });
}
