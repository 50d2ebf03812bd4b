import type { ErrorObject } from 'ajv';
import { badRequest, type Detail } from '../platform/http/errors.js';
import type { CollectionModel } from '../contract/collections.js';
import { SERVER_FIELDS } from '../platform/config/record-fields.js';

// Request bodies against a collection's JSON Schema, with the server-owned fields kept out.


export type Document = Record<string, unknown>;

export function requireObject(body: unknown): Document {
  if (body === undefined || body === null) throw badRequest('A JSON object body is required', { body: 'is required' });
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('The body must be a JSON object', { body: 'must be a JSON object' });
  return body as Document;
}

function describe(model: CollectionModel, err: ErrorObject): [string, string] {
  const path = err.instancePath.split('/').slice(1).join('.');
  switch (err.keyword) {
    case 'required': {
      const field = (err.params as { missingProperty: string }).missingProperty;
      return [path ? `${path}.${field}` : field, 'is required'];
    }
    case 'additionalProperties': {
      const field = (err.params as { additionalProperty: string }).additionalProperty;
      return [path ? `${path}.${field}` : field, `is not a field of ${model.name}`];
    }
    case 'enum':
      return [path, `must be one of ${(err.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`];
    default:
      return [path || 'body', err.message ?? 'is invalid'];
  }
}

/** The top-level field an error is about ('' for a rule of the whole document). */
function fieldOf(err: ErrorObject): string {
  const first = err.instancePath.split('/')[1];
  if (first !== undefined) return first.replace(/~1/g, '/').replace(/~0/g, '~');
  if (err.keyword === 'required') return (err.params as { missingProperty: string }).missingProperty;
  if (err.keyword === 'additionalProperties') return (err.params as { additionalProperty: string }).additionalProperty;
  return '';
}

/**
 * Validates the user fields of a record (server-owned fields already removed). `known` holds
 * problems found earlier in the same body, so one 400 names every bad field. With `touched` (a
 * merge patch's fields), only those fields, the required ones and the rules of the whole document
 * are checked: a record stored under an earlier schema can still be edited (docs/api.md, PATCH).
 */
export function validateDocument(model: CollectionModel, doc: Document, known: Detail = {}, touched?: ReadonlySet<string>): void {
  const valid = model.validate(doc);
  const errors = valid ? [] : (model.validate.errors ?? []).filter((e) => !touched || e.keyword === 'required' || fieldOf(e) === '' || touched.has(fieldOf(e)));
  if (errors.length === 0 && Object.keys(known).length === 0) return;
  const detail: Detail = { ...known };
  for (const err of errors) {
    const [field, message] = describe(model, err);
    detail[field] ??= message;
  }
  const onlyServerFields = errors.length === 0 && Object.keys(known).every((k) => (SERVER_FIELDS as readonly string[]).includes(k));
  throw badRequest(onlyServerFields ? 'Server-owned fields cannot be set' : `Invalid ${model.name} record`, detail);
}

/**
 * Splits a body into the user document and the server-owned values it mentioned. On create any
 * server-owned field is refused; on update, a field equal to its current value is accepted and
 * ignored (a client may PUT back what it read), any other value is refused. `link` is derived and
 * always ignored on update.
 */
export function splitServerFields(
  model: CollectionModel,
  body: Document,
  current: Record<string, unknown> | null,
  parentFieldFixed: boolean,
): { doc: Document; detail: Detail } {
  const doc: Document = {};
  const detail: Detail = {};
  const owned = new Set<string>(SERVER_FIELDS);
  const parentField = model.parent?.field;
  for (const [key, value] of Object.entries(body)) {
    const isParent = key === parentField;
    if (!owned.has(key) && !(isParent && parentFieldFixed)) {
      if (!isParent) doc[key] = value;
      continue;
    }
    if (current === null) {
      detail[key] = isParent ? 'is set by the URL' : 'is set by the server';
    } else if (key !== 'link' && JSON.stringify(value) !== JSON.stringify(current[key])) {
      detail[key] = isParent ? 'is set by the URL and cannot be changed here' : 'is set by the server and cannot be changed';
    }
  }
  return { doc, detail };
}

/** The parent reference given in a flat-route body (`zoo_id` on POST /v1/animals). */
export function parentReference(model: CollectionModel, body: Document, required: boolean): string | null {
  const field = model.parent?.field;
  if (!field) return null;
  const value = body[field];
  if (value === undefined) {
    if (required) throw badRequest(`Invalid ${model.name} record`, { [field]: 'is required' });
    return null;
  }
  if (typeof value !== 'string' || value === '') throw badRequest(`Invalid ${model.name} record`, { [field]: 'must be the id of a record' });
  return value;
}
