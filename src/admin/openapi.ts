import type { Config } from '../platform/config/load.js';
import { ADMIN_API } from './api.js';
import { GRANT_TYPES } from '../authserver/model/clients.js';

// The admin API's operations for the OpenAPI document (GET /v1/openapi.json): paths under
// {base_url}/admin/v1, each with its own server (the document's default server is the resource API).

type Obj = Record<string, unknown>;

const json = (schema: Obj) => ({ 'application/json': { schema } });
const error = (description: string) => ({ description, content: json({ $ref: '#/components/schemas/Error' }) });
const errors = (...codes: number[]) =>
  Object.fromEntries(
    codes.map((c) => [
      String(c),
      error(
        ({ 400: 'Bad request (detail names each field)', 401: 'Missing or invalid access token', 403: 'The token has no admin scope', 404: 'Not found', 409: 'Already exists' } as Record<number, string>)[c],
      ),
    ]),
  );

const Client: Obj = {
  type: 'object',
  properties: {
    client_id: { type: 'string' },
    name: { type: 'string' },
    type: { type: 'string', enum: ['public', 'confidential'] },
    redirect_uris: { type: 'array', items: { type: 'string' } },
    grant_types: { type: 'array', items: { type: 'string', enum: [...GRANT_TYPES] } },
    scope: { type: ['string', 'null'], description: 'Space-separated; null: every collection scope' },
    token_type: { type: 'string', enum: ['bearer', 'mac'] },
    origins: { type: 'array', items: { type: 'string' }, description: 'Browser origins allowed to call with its tokens (CORS): its redirect URIs\' origins and the ones registered' },
    uri: { type: ['string', 'null'], description: 'Its home page, shown on the consent and account pages' },
    verified: { type: 'boolean', description: 'The operator vouches for it (no "not verified" note on the consent page)' },
    introspect: { type: 'boolean', description: 'A resource server: it may introspect every client\'s tokens (any client may introspect its own)' },
    require_pkce: { type: 'boolean', description: 'Its authorization code requests must carry a PKCE challenge (S256); public clients always must' },
    created_at: { type: 'string', format: 'date-time' },
    client_secret: { type: 'string', description: 'Only in the answer to a create or a secret rotation' },
  },
};
const NewClient: Obj = {
  type: 'object',
  required: ['client_id', 'grant_types'],
  properties: {
    client_id: { type: 'string' },
    name: { type: 'string' },
    public: { type: 'boolean' },
    client_secret: { type: 'string', minLength: 32 },
    redirect_uris: { type: 'array', items: { type: 'string' } },
    grant_types: { type: 'array', items: { type: 'string', enum: [...GRANT_TYPES] }, description: 'Only grants the deployment offers (auth.grants)' },
    scope: { type: ['string', 'null'] },
    token_type: { type: 'string', enum: ['bearer', 'mac'] },
    origins: { type: 'array', items: { type: 'string' }, description: 'Browser origins beyond the redirect URIs\' (scheme://host[:port])' },
    uri: { type: ['string', 'null'] },
    verified: { type: 'boolean' },
    introspect: { type: 'boolean', description: 'Confidential clients only' },
    require_pkce: { type: 'boolean' },
  },
};
const Webhook: Obj = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    url: { type: 'string', format: 'uri' },
    events: { type: 'array', items: { type: 'string' }, description: 'Event types delivered ([]: all)' },
    collections: { type: 'array', items: { type: 'string' }, description: 'Collections delivered ([]: all)' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    secret: { type: 'string', description: 'whsec_…: only in the answer to a create' },
  },
};
const NewWebhook: Obj = {
  type: 'object',
  required: ['url'],
  properties: { url: { type: 'string', description: 'https; no private address unless events.webhooks.allowPrivateNetworks' }, events: { type: 'array', items: { type: 'string' } }, collections: { type: 'array', items: { type: 'string' } } },
};
const Attempt: Obj = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    event_id: { type: 'string' },
    attempt: { type: 'integer' },
    time: { type: 'string', format: 'date-time' },
    status_code: { type: ['integer', 'null'] },
    duration_ms: { type: 'integer' },
    error: { type: ['string', 'null'] },
    outcome: { type: 'string', enum: ['succeeded', 'failed'] },
  },
};
const AdminEvent: Obj = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    type: { type: 'string' },
    time: { type: 'string', format: 'date-time' },
    collection: { type: ['string', 'null'] },
    record_id: { type: ['string', 'null'] },
    owner: { type: ['string', 'null'] },
    actor: { type: ['string', 'null'] },
    data: { type: ['object', 'null'] },
  },
};
const User: Obj = {
  type: 'object',
  properties: { id: { type: 'string' }, username: { type: 'string' }, subject: { type: 'string' }, admin: { type: 'boolean' }, created_at: { type: 'string', format: 'date-time' } },
};
const Grant: Obj = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    subject: { type: 'string' },
    client_id: { type: 'string' },
    scope: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    expires_at: { type: 'string', format: 'date-time' },
    last_used_at: { type: ['string', 'null'], format: 'date-time' },
  },
};
const Maintenance: Obj = { type: 'object', properties: { enabled: { type: 'boolean' }, since: { type: ['string', 'null'], format: 'date-time' } } };

export function adminOpenApiPaths(config: Config): Obj {
  const servers = [{ url: config.publicUrl }];
  const security = [{ oauth2: ['admin'] }, { bearer: [] }];
  const op = (id: string, summary: string, responses: Obj, extra: Obj = {}) => ({ tags: ['admin'], operationId: `admin_${id}`, summary, security, ...extra, responses });
  const body = (schema: Obj) => ({ requestBody: { required: true, content: json(schema) } });
  const ok = (schema: Obj, description = 'OK') => ({ description, content: json(schema) });
  const list = (schema: Obj) => ok({ type: 'array', items: schema });
  const created = (schema: Obj) => ({ description: 'Created (Location: its URL)', content: json(schema) });
  const noContent = { description: 'Done' };
  const path = (p: string) => `${ADMIN_API}${p}`;
  const param = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });
  return {
    [path('/clients')]: {
      servers,
      get: op('list_clients', 'List the clients (never their secrets)', { '200': list(Client), ...errors(401, 403) }),
      post: op('create_client', 'Register a client; the secret is shown this once', { '201': created(Client), ...errors(400, 401, 403, 409) }, body(NewClient)),
    },
    [path('/clients/{id}')]: {
      servers,
      parameters: [param('id')],
      get: op('get_client', 'One client', { '200': ok(Client), ...errors(401, 403, 404) }),
      patch: op('update_client', 'Change name, redirect URIs, grants, scope or token type (the registration rules apply)', { '200': ok(Client), ...errors(400, 401, 403, 404) }, body(NewClient)),
      delete: op('delete_client', 'Remove a client: its grants and tokens end', { '204': noContent, ...errors(401, 403, 404) }),
    },
    [path('/clients/{id}/secret')]: {
      servers,
      parameters: [param('id')],
      post: op('rotate_client_secret', 'A new secret, shown this once; the old one stops working', { '200': ok(Client), ...errors(400, 401, 403, 404) }),
    },
    [path('/users')]: {
      servers,
      get: op('list_users', 'List the users', { '200': list(User), ...errors(401, 403) }),
      post: op('create_user', 'Add a user', { '201': created(User), ...errors(400, 401, 403, 409) }, body({ type: 'object', required: ['username', 'password'], properties: { username: { type: 'string' }, password: { type: 'string', minLength: 8 }, admin: { type: 'boolean' } } })),
    },
    [path('/users/{user}')]: {
      servers,
      parameters: [{ ...param('user'), description: 'The user id or username' }],
      get: op('get_user', 'One user', { '200': ok(User), ...errors(401, 403, 404) }),
      patch: op('update_user', 'Change the password (ends the sign-in sessions) or the admin flag', { '200': ok(User), ...errors(400, 401, 403, 404) }, body({ type: 'object', properties: { password: { type: 'string', minLength: 8 }, admin: { type: 'boolean' } } })),
      delete: op('delete_user', 'Remove a user: their grants and tokens end; their records stay', { '204': noContent, ...errors(401, 403, 404) }),
    },
    [path('/grants')]: {
      servers,
      get: op('list_grants', 'The live grants, newest first', { '200': list(Grant), ...errors(400, 401, 403) }, {
        parameters: [
          { name: 'user', in: 'query', schema: { type: 'string' }, description: 'A username' },
          { name: 'client', in: 'query', schema: { type: 'string' }, description: 'A client id' },
        ],
      }),
    },
    [path('/grants/{id}')]: {
      servers,
      parameters: [param('id')],
      delete: op('revoke_grant', 'Revoke a grant and its tokens (every instance within a second)', { '204': noContent, ...errors(401, 403, 404) }),
    },
    [path('/webhooks')]: {
      servers,
      get: op('list_webhooks', 'List the webhooks (never a secret)', { '200': list(Webhook), ...errors(401, 403) }),
      post: op('create_webhook', 'Add a webhook; its signing secret is in this answer only', { '201': created(Webhook), ...errors(400, 401, 403) }, body(NewWebhook)),
    },
    [path('/webhooks/{id}')]: {
      servers,
      parameters: [param('id')],
      get: op('get_webhook', 'One webhook', { '200': ok(Webhook), ...errors(401, 403, 404) }),
      patch: op('update_webhook', 'Change its url, events or collections', { '200': ok(Webhook), ...errors(400, 401, 403, 404) }, body({ ...NewWebhook, required: [] })),
      delete: op('delete_webhook', 'Remove a webhook and its pending deliveries', { '204': noContent, ...errors(401, 403, 404) }),
    },
    [path('/webhooks/{id}/deliveries')]: {
      servers,
      parameters: [param('id')],
      get: op('list_webhook_deliveries', 'Every delivery attempt, newest first (X-Pending-Deliveries: deliveries still waiting)', { '200': list(Attempt), ...errors(400, 401, 403, 404) }, {
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1 } },
          { name: 'before', in: 'query', schema: { type: 'integer' }, description: 'Only attempts with a smaller id (Link: next)' },
        ],
      }),
    },
    [path('/events')]: {
      servers,
      get: op('list_all_events', 'Every event, the admin side\'s included; Accept: text/event-stream streams them (docs/events.md)', { '200': list(AdminEvent), ...errors(400, 401, 403) }, {
        parameters: [
          { name: 'after', in: 'query', schema: { type: 'string', pattern: '^[0-9]+$' } },
          { name: 'collections', in: 'query', schema: { type: 'string' } },
          { name: 'types', in: 'query', schema: { type: 'string' } },
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1 } },
          { name: 'wait', in: 'query', schema: { type: 'integer', minimum: 0, maximum: 30 } },
        ],
      }),
    },
    [path('/maintenance')]: {
      servers,
      get: op('get_maintenance', 'Whether maintenance mode is on', { '200': ok(Maintenance), ...errors(401, 403) }),
      put: op('set_maintenance', 'Switch maintenance mode (503 on /v1 and /oauth on every instance within a second)', { '200': ok(Maintenance), ...errors(400, 401, 403) }, body({ type: 'object', required: ['enabled'], properties: { enabled: { type: 'boolean' } } })),
    },
  };
}
