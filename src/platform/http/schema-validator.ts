import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';
import { ApiError, badRequest, type Detail } from './errors.js';

// Route schemas as Fastify's validator, answering with the API's error body `{ error, detail }`
// (docs/api.md "Errors"), never Ajv's wording. Set with `setValidatorCompiler` where routes carry
// schemas (the admin API). A body's shape is checked here: a JSON object, its fields' JSON types,
// no unknown field, the required ones. The value rules a schema documents for the model
// (`checkedByModel`: patterns, lengths, enums) are left out of the compiled copy: the model checks
// them for every caller (CLI, console, API) and answers with its own sentences. Query parameters
// are coerced ("20" → 20), defaulted and checked whole, ranges included.

/**
 * Annotations a schema may carry for its answers; `schemaAnnotations` lists them so that the
 * OpenAPI document leaves them out:
 * - `problem`: on a property, the detail sentence of any failure of it; on an object, that of an
 *   unknown key;
 * - `errorSummary`: the `error` of that failure (query parameters);
 * - `checkedByModel`: the value rules of this subtree are the model's (documented, not compiled);
 * - `describedOnly`: on a part, the handler's own parser reads it; the schema only describes it.
 */
export const schemaAnnotations = ['problem', 'errorSummary', 'checkedByModel', 'describedOnly'] as const;

type Schema = Record<string, unknown>;

/** Keywords about a value (not its JSON type), dropped under `checkedByModel`. */
const VALUE_RULES = ['pattern', 'minLength', 'maxLength', 'enum', 'const', 'format', 'minimum', 'maximum', 'minItems', 'maxItems', 'uniqueItems'];

function newAjv(part: 'body' | 'query'): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, coerceTypes: part === 'query', useDefaults: part === 'query' });
  for (const keyword of schemaAnnotations) ajv.addKeyword({ keyword });
  return ajv;
}

/** The compiled copy: plain JSON (TypeBox's symbols dropped), without the model's value rules. */
function compiledCopy(schema: unknown, underModel = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => compiledCopy(s, underModel));
  if (schema === null || typeof schema !== 'object') return schema;
  const model = underModel || (schema as Schema).checkedByModel === true;
  const copy: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (model && VALUE_RULES.includes(key)) continue;
    // `properties` maps names to schemas; a property may be named like a keyword.
    copy[key] = key === 'properties' ? Object.fromEntries(Object.entries(value as Schema).map(([k, v]) => [k, compiledCopy(v, model)])) : compiledCopy(value, model);
  }
  return copy;
}

const isObject = (value: unknown): value is Schema => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The top-level field an error is about: the unknown or missing key, or the first step of its path. */
function fieldOf(err: ErrorObject): string {
  if (err.keyword === 'additionalProperties') return (err.params as { additionalProperty: string }).additionalProperty;
  if (err.keyword === 'required') return (err.params as { missingProperty: string }).missingProperty;
  return err.instancePath.split('/')[1]?.replace(/~1/g, '/').replace(/~0/g, '~') ?? '';
}

const TYPE_WORDS: Record<string, [string, string]> = {
  string: ['a string', 'strings'],
  boolean: ['a boolean', 'booleans'],
  integer: ['an integer', 'integers'],
  number: ['a number', 'numbers'],
  object: ['an object', 'objects'],
  null: ['null', 'nulls'],
};

/** "must be a string", "must be an array of strings", "must be a string or null": a field's JSON type. */
export function typeSentence(schema: Schema): string {
  if (typeof schema.problem === 'string') return schema.problem;
  const one = (t: string) => (t === 'array' ? `an array of ${TYPE_WORDS[String((schema.items as Schema | undefined)?.type)]?.[1] ?? 'values'}` : (TYPE_WORDS[t]?.[0] ?? t));
  return `must be ${([] as string[]).concat((schema.type as string | string[] | undefined) ?? []).map(one).join(' or ') || 'valid'}`;
}

/** A body: not an object, unknown or mistyped fields (in the body's order), else the missing ones. */
function bodyError(schema: Schema, errors: readonly ErrorObject[], data: unknown): ApiError {
  if (!isObject(data)) return badRequest('A JSON object body is required', { body: 'must be a JSON object' });
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const wrong = new Set(errors.filter((e) => e.keyword !== 'required').map(fieldOf));
  // Null prototype: a field named `constructor` or `__proto__` is named like any other.
  const detail: Detail = Object.create(null);
  if (wrong.size) {
    for (const key of Object.keys(data)) {
      if (!wrong.has(key)) continue;
      detail[key] = Object.hasOwn(properties, key) ? typeSentence(properties[key]) : (schema.problem as string | undefined) ?? `unknown field (allowed: ${Object.keys(properties).join(', ')})`;
    }
  } else {
    for (const e of errors) {
      const key = fieldOf(e);
      detail[key] = properties[key]?.type === 'boolean' ? 'is required (true or false)' : 'is required';
    }
  }
  return badRequest('Invalid request body', detail);
}

/** Query or path parameters: unknown ones (all named), else the first wrong one. */
function parameterError(schema: Schema, errors: readonly ErrorObject[], data: unknown): ApiError {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const unknown = errors.filter((e) => e.keyword === 'additionalProperties').map(fieldOf);
  if (unknown.length) {
    const problem = (schema.problem as string | undefined) ?? `unknown (allowed: ${Object.keys(properties).join(', ')})`;
    const keys = isObject(data) ? Object.keys(data).filter((k) => unknown.includes(k)) : unknown;
    return badRequest((schema.errorSummary as string | undefined) ?? 'Unknown query parameter', Object.fromEntries(keys.map((k) => [k, problem])));
  }
  // The first in the schema's order, as a parser reading one parameter after the other would answer.
  const order = Object.keys(properties);
  const rank = (e: ErrorObject) => (order.includes(fieldOf(e)) ? order.indexOf(fieldOf(e)) : order.length);
  const key = fieldOf(errors.reduce((first, e) => (rank(e) < rank(first) ? e : first)));
  const property = properties[key] ?? {};
  return badRequest((property.errorSummary as string | undefined) ?? `Invalid ${key}`, { [key]: typeSentence(property) });
}

/**
 * A `validatorCompiler` for routes with schemas (one per plugin that sets it; its Ajv instances
 * live as long as that app): an invalid request part answers 400 with the error body (Fastify
 * sends the returned error to the error handler as it is). Compiling happens at registration.
 */
export function schemaValidator(): FastifySchemaCompiler<FastifySchema> {
  const ajv = { body: newAjv('body'), query: newAjv('query') };
  return ({ schema, httpPart }) => {
    if ((schema as Schema).describedOnly === true) return () => true;
    const part = httpPart === 'body' ? 'body' : 'query';
    const validate: ValidateFunction = ajv[part].compile(compiledCopy(schema) as Schema);
    const toError = part === 'body' ? bodyError : parameterError;
    return (data: unknown) => {
      const valid = validate(data);
      const errors = [...(valid ? [] : (validate.errors ?? [])), ...(part === 'query' ? notFinite(data) : [])];
      return errors.length ? { error: toError(schema as Schema, errors, data) } : true;
    };
  };
}

/**
 * Ajv coerces "Infinity" to a number and then skips its range checks (they apply to finite
 * numbers only): a coerced parameter that is not finite is as wrong as one that is not a number.
 */
function notFinite(data: unknown): ErrorObject[] {
  if (!isObject(data)) return [];
  return Object.entries(data)
    .filter(([, v]) => typeof v === 'number' && !Number.isFinite(v))
    .map(([k]) => ({ keyword: 'type', instancePath: `/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, schemaPath: '', params: { type: 'number' } }));
}
