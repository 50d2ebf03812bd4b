import type { Config } from '../platform/config/load.js';
import type { CollectionModel, CollectionRegistry } from '../contract/collections.js';
import { ADMIN_SCOPE, scopeLabel, scopeUniverse } from '../contract/scopes.js';
import { SERVER_FIELDS } from '../platform/config/record-fields.js';
import { RESOURCE_EVENT_TYPES } from '../contract/event-bus.js';
import { operatorsOf } from './query.js';
import { OPERATORS, type OperatorSpec } from './store/operators.js';
import { feedParameters, listParameters as fixedListParameters, viewParameters as fixedViewParameters, type ParameterLimits } from './parameters.js';
import { queryParameters } from '../platform/http/openapi.js';

// The OpenAPI 3.1 document of the resource API, derived from the same collection schemas that
// validate requests, so the description cannot drift from the behaviour.

type Obj = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const responseRef = (name: string) => ({ $ref: `#/components/responses/${name}` });
const json = (schema: unknown) => ({ 'application/json': { schema } });

function scopesOf(collections: CollectionRegistry): Record<string, string> {
  const describe = (scope: string) => {
    const [name, access] = scope.split(':');
    return access === 'read' ? `Read ${name} (GET, HEAD)` : `Create, change and delete ${name} (POST, PUT, PATCH, DELETE)`;
  };
  return { ...Object.fromEntries(scopeUniverse(collections).map((scope) => [scope, describe(scope)])), [ADMIN_SCOPE]: scopeLabel(collections, ADMIN_SCOPE) };
}

function recordSchema(m: CollectionModel): Obj {
  const props: Obj = { id: { type: 'string', readOnly: true, description: 'Server-made id (UUIDv7)' }, ...m.properties };
  if (m.parent) props[m.parent.field] = { type: 'string', description: `Id of the parent ${m.parent.collection} record` };
  Object.assign(props, {
    owner: { type: 'string', readOnly: true, description: 'The subject that created the record' },
    created_at: { type: 'string', format: 'date-time', readOnly: true },
    updated_at: { type: 'string', format: 'date-time', readOnly: true },
    link: ref('Links'),
  });
  const required = [...SERVER_FIELDS, ...(((m.schema.required as string[]) ?? []) as string[])];
  return { type: 'object', properties: props, required };
}

function inputSchema(m: CollectionModel, withParent: boolean): Obj {
  const { $schema: _s, ...schema } = m.schema as Obj;
  if (!withParent || !m.parent) return schema;
  return {
    ...schema,
    properties: { ...(schema.properties as Obj), [m.parent.field]: { type: 'string' } },
    required: [...((schema.required as string[]) ?? []), m.parent.field],
  };
}

/** A list's fixed parameters (parameters.ts), then one per filter and operator. */
function listParameters(m: CollectionModel, nested: boolean, limits: ParameterLimits): Obj[] {
  const params: Obj[] = queryParameters(fixedListParameters(m, limits));
  for (const f of m.filters) {
    if (nested && f === m.parent?.field) continue;
    // The parent field has no column: it is an id, a string.
    const type = m.columns.find((c) => c.field === f)?.type;
    const schema: Obj = { type: type?.type ?? 'string', ...(type?.values ? { enum: type.values } : {}) };
    for (const op of operatorsOf(m, f)) {
      const operator: OperatorSpec = OPERATORS[op];
      // A flag is true or false; a list or literal text is a string; a single value has the field's type.
      const opSchema = operator.arity === 'flag' ? { type: 'boolean' } : operator.arity === 'list' || operator.value === 'text' ? { type: 'string' } : schema;
      params.push({ name: op === 'eq' ? f : `${f}[${op}]`, in: 'query', schema: opSchema, description: `Only records whose ${f} ${operator.description}` });
    }
  }
  return params;
}

const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [String(c), responseRef(`E${c}`)]));
const security = (m: CollectionModel, access: 'read' | 'write') => [{ oauth2: [`${m.name}:${access}`] }, { bearer: [] }];

function collectionPaths(m: CollectionModel, paths: Obj, parent: CollectionModel | null, limits: ParameterLimits): void {
  const nested = parent !== null;
  const base = nested ? `/${parent.name}/{parent_id}/${m.name}` : `/${m.name}`;
  const parentParam = nested ? [{ name: 'parent_id', in: 'path', required: true, schema: { type: 'string' } }] : [];
  const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
  const tag = [m.name];
  const listHeaders = {
    'X-Total-Count': { schema: { type: 'integer' }, description: 'Records matching the filters' },
    Link: { schema: { type: 'string' }, description: 'RFC 8288 first/prev/next' },
  };
  paths[base] = {
    parameters: parentParam,
    get: {
      tags: tag,
      operationId: `list_${nested ? `${parent.name}_` : ''}${m.name}`,
      summary: nested ? `List the ${m.name} of one record of ${parent.name}` : `List ${m.name}`,
      security: security(m, 'read'),
      parameters: listParameters(m, nested, limits),
      responses: { '200': { description: 'The records', headers: listHeaders, content: json({ type: 'array', items: ref(m.name) }) }, ...errors(400, 401, 403, 404, 405, 429) },
    },
    post: {
      tags: tag,
      operationId: `create_${nested ? `${parent.name}_` : ''}${m.name}`,
      summary: `Create a record in ${m.name}, or many as a background job`,
      security: security(m, 'write'),
      parameters: [{ name: 'Idempotency-Key', in: 'header', schema: { type: 'string' } }],
      requestBody: {
        required: true,
        content: json({ oneOf: [inputSchema(m, !nested), { type: 'array', items: inputSchema(m, !nested) }] }),
      },
      responses: {
        '201': { description: 'Created', headers: { Location: { schema: { type: 'string' } }, ETag: { schema: { type: 'string' } } }, content: json(ref(m.name)) },
        '202': { description: 'An array was accepted as a job', headers: { Location: { schema: { type: 'string' } } }, content: json(ref('Job')) },
        '303': { description: 'Repeated Idempotency-Key: the record created the first time', headers: { Location: { schema: { type: 'string' } } } },
        ...errors(400, 401, 403, 404, 405, 413, 415, 429),
      },
    },
  };
  const one = nested ? `${base}/{id}` : `/${m.name}/{id}`;
  const ifMatch = { name: 'If-Match', in: 'header', schema: { type: 'string' } };
  const recordResponse = { description: 'The record', headers: { ETag: { schema: { type: 'string' } } }, content: json(ref(m.name)) };
  paths[one] = {
    parameters: [...parentParam, idParam],
    get: {
      tags: tag,
      operationId: `get_${nested ? `${parent.name}_` : ''}${m.name}`,
      summary: `Read one record of ${m.name}`,
      security: security(m, 'read'),
      description: 'Any query parameter but fields and expand is a 400 naming it.',
      parameters: queryParameters(fixedViewParameters(m, limits)),
      responses: { '200': recordResponse, ...errors(400, 401, 403, 404, 405, 410, 429) },
    },
    put: {
      tags: tag,
      operationId: `replace_${nested ? `${parent.name}_` : ''}${m.name}`,
      summary: `Replace a record of ${m.name} (its whole representation)`,
      security: security(m, 'write'),
      parameters: [ifMatch],
      requestBody: { required: true, content: json(inputSchema(m, !nested)) },
      responses: { '200': recordResponse, ...errors(400, 401, 403, 404, 405, 410, 412, 415, 429) },
    },
    patch: {
      tags: tag,
      operationId: `patch_${nested ? `${parent.name}_` : ''}${m.name}`,
      summary: `Change fields of a record of ${m.name} (JSON merge patch, RFC 7396)`,
      security: security(m, 'write'),
      parameters: [ifMatch],
      requestBody: { required: true, content: { 'application/merge-patch+json': { schema: { type: 'object' } }, 'application/json': { schema: { type: 'object' } } } },
      responses: { '200': recordResponse, ...errors(400, 401, 403, 404, 405, 410, 412, 415, 429) },
    },
    delete: {
      tags: tag,
      operationId: `delete_${nested ? `${parent.name}_` : ''}${m.name}`,
      summary: `Delete a record of ${m.name}`,
      security: security(m, 'write'),
      parameters: [ifMatch],
      responses: { '204': { description: 'Deleted' }, ...errors(400, 401, 403, 404, 405, 410, 412, 429) },
    },
  };
}

function attachmentPaths(m: CollectionModel, paths: Obj): void {
  if (!m.attachments) return;
  const base = `/${m.name}/{id}/attachments`;
  const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
  const file = Object.fromEntries(m.attachments.types.map((t) => [t, { schema: { type: 'string', contentMediaType: t } }]));
  paths[base] = {
    parameters: [idParam],
    get: {
      tags: [m.name],
      operationId: `list_${m.name}_attachments`,
      summary: `List the files attached to a record of ${m.name}`,
      security: security(m, 'read'),
      responses: { '200': { description: 'The attachments of the record', content: json({ type: 'array', items: ref('Attachment') }) }, ...errors(401, 403, 404, 405, 410) },
    },
    post: {
      tags: [m.name],
      operationId: `add_${m.name}_attachment`,
      summary: `Attach a file (at most ${m.attachments.maxBytes} bytes; ${m.attachments.types.join(', ')})`,
      security: security(m, 'write'),
      requestBody: {
        required: true,
        content: { 'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string', contentMediaType: 'application/octet-stream' } } } }, ...file },
      },
      responses: {
        '201': { description: 'Stored', headers: { Location: { schema: { type: 'string' } } }, content: json(ref('Attachment')) },
        '422': { description: 'Too large, undeclared type, or content that does not match its type', content: json(ref('Error')) },
        ...errors(401, 403, 404, 405, 410),
      },
    },
  };
  paths[`${base}/{attachment_id}`] = {
    parameters: [idParam, { name: 'attachment_id', in: 'path', required: true, schema: { type: 'string' } }],
    get: {
      tags: [m.name],
      operationId: `get_${m.name}_attachment`,
      summary: 'JSON metadata, or the file itself when Accept names its type',
      security: security(m, 'read'),
      responses: { '200': { description: 'Metadata or content', content: { ...json(ref('Attachment')), ...file } }, ...errors(401, 403, 404, 405, 415) },
    },
    delete: {
      tags: [m.name],
      operationId: `delete_${m.name}_attachment`,
      summary: 'Delete an attached file',
      security: security(m, 'write'),
      responses: { '204': { description: 'Deleted' }, ...errors(401, 403, 404, 405) },
    },
  };
  attachmentContentPath(m, paths);
}

/** `…/attachments/{attachment_id}/content`: the file itself, whatever Accept says (link.content). */
function attachmentContentPath(m: CollectionModel, paths: Obj): void {
  const file = Object.fromEntries(m.attachments!.types.map((t) => [t, { schema: { type: 'string', contentMediaType: t } }]));
  const header = (description: string) => ({ schema: { type: 'string' }, description });
  paths[`/${m.name}/{id}/attachments/{attachment_id}/content`] = {
    parameters: [
      { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
      { name: 'attachment_id', in: 'path', required: true, schema: { type: 'string' } },
    ],
    get: {
      tags: [m.name],
      operationId: `get_${m.name}_attachment_content`,
      summary: 'The file itself, in its own type, whatever Accept says',
      security: security(m, 'read'),
      responses: {
        '200': {
          description: 'The file',
          headers: { 'Content-Disposition': header('attachment; filename="…" (and filename*=UTF-8\'\'… for a non-ASCII name)'), ETag: header('"<sha256>"') },
          content: file,
        },
        ...errors(401, 403, 404, 405),
      },
    },
  };
}

/** The OpenAPI 3.1 document of the resource API; `more` adds operations served beside it (the admin API). */
export function buildOpenApi(config: Config, collections: CollectionRegistry, more: Obj = {}): Obj {
  const paths: Obj = {};
  const schemas: Obj = {
    Error: {
      type: 'object',
      required: ['error', 'detail'],
      properties: { error: { type: 'string' }, detail: { type: 'object', additionalProperties: { type: 'string' } } },
    },
    Link: {
      type: 'object',
      required: ['href', 'title', 'type'],
      properties: { href: { type: 'string', format: 'uri' }, title: { type: 'string' }, type: { type: 'string' } },
    },
    Links: { type: 'object', additionalProperties: ref('Link'), readOnly: true },
    Attachment: {
      type: 'object',
      properties: {
        id: { type: 'string' },
        filename: { type: 'string' },
        content_type: { type: 'string' },
        size: { type: 'integer' },
        sha256: { type: 'string' },
        created_at: { type: 'string', format: 'date-time' },
        link: ref('Links'),
      },
    },
    Job: {
      type: 'object',
      properties: {
        id: { type: 'string' },
        status: { type: 'string', enum: ['queued', 'running', 'done'] },
        total: { type: 'integer' },
        processed: { type: 'integer' },
        progress: { type: 'number' },
        succeeded: { type: 'integer' },
        failed: { type: 'integer' },
        results: { type: 'array', items: { type: 'object' } },
        link: ref('Links'),
      },
    },
  };
  for (const m of collections.values()) {
    schemas[m.name] = recordSchema(m);
    collectionPaths(m, paths, null, config.api);
    attachmentPaths(m, paths);
    if (m.parent) collectionPaths(m, paths, collections.get(m.parent.collection)!, config.api);
  }
  paths['/jobs/{id}'] = {
    parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
    get: { tags: ['jobs'], operationId: 'get_job', summary: 'Progress and results of a bulk create', responses: { '200': { description: 'The job', content: json(ref('Job')) }, ...errors(401, 403, 404) } },
  };
  // The feed (docs/events.md); the same URL streams with Accept: text/event-stream.
  const eventTypes = [...RESOURCE_EVENT_TYPES];
  paths['/events'] = {
    get: {
      tags: ['events'],
      operationId: 'list_events',
      summary: 'The events of the records this token could GET, oldest first',
      description:
        'JSON pages with `Link: next`; `wait` long-polls. With `Accept: text/event-stream` the same URL is a Server-Sent Events stream (id, event, data), resumed from `Last-Event-ID` or `after`, ending within a second of the token\'s expiry or revocation. 410 when `after` is older than the retention.',
      parameters: queryParameters(feedParameters(config.api, [...collections.keys()], eventTypes)),
      responses: { '200': { description: 'Events, oldest first', content: json({ type: 'array', items: ref('Event') }) }, ...errors(400, 401, 403, 410) },
    },
  };
  schemas.Event = {
    type: 'object',
    properties: {
      id: { type: 'string', description: 'An increasing integer as a decimal string' },
      type: { type: 'string', enum: eventTypes },
      time: { type: 'string', format: 'date-time' },
      collection: { type: 'string' },
      record_id: { type: ['string', 'null'], description: 'The record (null on collection.migrated)' },
      owner: { type: ['string', 'null'], description: "The record's owner (null on collection.migrated, which is every reader's)" },
      actor: { type: ['string', 'null'] },
      data: { type: ['object', 'null'], description: "The record as GET shows it (null on delete); an attachment's metadata; on collection.migrated, the migration applied" },
    },
  };
  const statusText: Record<number, string> = {
    400: 'Bad request', 401: 'Missing or invalid access token', 403: 'No scope on this collection, or another owner\'s record',
    404: 'Not found', 405: 'Method not allowed for this token (see Allow)', 410: 'Deleted record or retired version',
    412: 'If-Match does not match', 413: 'Body too large', 415: 'Unsupported media type', 429: 'Request quota exceeded',
  };
  const responses = Object.fromEntries(Object.entries(statusText).map(([c, d]) => [`E${c}`, { description: d, content: json(ref('Error')) }]));
  const auth = config.authUrl;
  const scopes = scopesOf(collections);
  return {
    openapi: '3.1.0',
    info: { title: 'gatehouse resource API', version: String(config.api.version), ...(config.api.license ? { license: config.api.license } : {}) },
    servers: [{ url: `${config.publicUrl}/v${config.api.version}` }],
    security: [{ bearer: [] }],
    tags: [
      ...[...collections.values()].map((m) => ({ name: m.name, ...(m.description ? { description: m.description } : {}) })),
      { name: 'jobs', description: 'Bulk creates run in the background' },
      { name: 'events', description: 'What changed, for the records this token could GET' },
    ],
    paths: { ...paths, ...more },
    components: {
      schemas,
      responses,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An access token from the authorization server' },
        oauth2: {
          type: 'oauth2',
          flows: {
            authorizationCode: { authorizationUrl: `${auth}/authorize`, tokenUrl: `${auth}/token`, refreshUrl: `${auth}/token`, scopes },
            implicit: { authorizationUrl: `${auth}/authorize`, scopes },
            password: { tokenUrl: `${auth}/token`, refreshUrl: `${auth}/token`, scopes },
            clientCredentials: { tokenUrl: `${auth}/token`, scopes },
          },
        },
      },
    },
  };
}
