// The one place that decides which scalar type a schema property has, for filters and sort
// fields: an explicit `type: T`, a nullable `type: [T, "null"]` (either order), or a type inferred
// from `enum`/`const` values. The config loader, the collection models, the query parser and the
// OpenAPI document all ask this module.

/** The types a filter or sort field can have. */
export type FieldType = 'string' | 'integer' | 'number' | 'boolean';
export type FieldValue = string | number | boolean;

export const FIELD_TYPES: readonly FieldType[] = ['string', 'integer', 'number', 'boolean'];

/** What a config error says can be filtered or sorted. */
export const FIELD_TYPES_TEXT =
  'string, integer, number and boolean properties (type: T, type: [T, "null"], or an enum/const whose values are all of one of these types)';

export interface ScalarField {
  type: FieldType;
  /** The value may also be null (`type: [T, "null"]`, or null among the enum values of an untyped property). */
  nullable: boolean;
  /** The allowed non-null values (`enum`, or `const` as its one value); null when any value of the type goes. */
  values: FieldValue[] | null;
}

/** Why a property has no scalar type; the message reads after the field's name ("status" <problem>). */
export class FieldTypeError extends Error {
  constructor(readonly problem: string) {
    super(problem);
    this.name = 'FieldTypeError';
  }
}

function isFieldType(t: unknown): t is FieldType {
  return typeof t === 'string' && (FIELD_TYPES as readonly string[]).includes(t);
}

/** The JSON type of one enum/const value ('integer' for whole numbers, like JSON Schema). */
function typeOfValue(v: unknown): FieldType | 'null' | 'array' | 'object' {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return 'object';
}

function declaredType(type: unknown): { type: FieldType; nullable: boolean } | null {
  if (type === undefined) return null;
  if (isFieldType(type)) return { type, nullable: false };
  if (Array.isArray(type) && type.length === 2 && type.includes('null')) {
    const other = type.find((t) => t !== 'null');
    if (isFieldType(other)) return { type: other, nullable: true };
  }
  const shown = JSON.stringify(type);
  throw new FieldTypeError(
    Array.isArray(type) ? `has type ${shown}: a list of types must be one type and "null"` : `has type ${shown}`,
  );
}

/** The scalar type of a schema property; throws FieldTypeError saying why it has none. */
export function scalarFieldType(property: unknown): ScalarField {
  if (property === null || typeof property !== 'object' || Array.isArray(property)) throw new FieldTypeError('is not a schema object');
  const p = property as Record<string, unknown>;
  const declared = declaredType(p.type);
  const keyword = 'const' in p ? 'const' : 'enum' in p ? 'enum' : null;
  if (keyword === 'enum' && (!Array.isArray(p.enum) || p.enum.length === 0)) throw new FieldTypeError('has an enum that is not a non-empty list');
  const listed: unknown[] | null = keyword === 'const' ? [p.const] : keyword === 'enum' ? (p.enum as unknown[]) : null;

  if (!listed) {
    if (declared) return { ...declared, values: null };
    throw new FieldTypeError('has no type (give it a type, an enum or a const)');
  }
  const kinds = new Set(listed.map(typeOfValue));
  const values = listed.filter((v) => v !== null) as FieldValue[];
  for (const k of ['array', 'object'] as const)
    if (kinds.has(k)) throw new FieldTypeError(`has ${k === 'array' ? 'an array' : 'an object'} among its ${keyword} values`);
  kinds.delete('null');
  const found = [...kinds] as FieldType[];

  if (declared) {
    // An explicit type wins; the listed values must be of it (integers are numbers too).
    const fits = (k: FieldType) => k === declared.type || (declared.type === 'number' && k === 'integer');
    const misfit = found.find((k) => !fits(k));
    if (misfit) throw new FieldTypeError(`has type ${JSON.stringify(p.type)} but ${misfit} values in its ${keyword}`);
    return { ...declared, values };
  }
  if (found.length === 0) throw new FieldTypeError(`has only null in its ${keyword}: its type cannot be inferred`);
  if (found.length === 2 && kinds.has('integer') && kinds.has('number')) return { type: 'number', nullable: listed.length > values.length, values };
  if (found.length > 1) throw new FieldTypeError(`mixes ${found.slice(0, -1).join(', ')} and ${found.at(-1)} values in its ${keyword}: give values of one type`);
  return { type: found[0], nullable: listed.length > values.length, values };
}
