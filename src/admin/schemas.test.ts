import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { CLIENT_ID, GRANT_TYPES, MIN_CLIENT_SECRET_LENGTH, TOKEN_TYPES, describeClient, type Client } from '../authserver/model/clients.js';
import { MIN_PASSWORD_LENGTH, USERNAME, describeUser } from '../authserver/model/users.js';
import { describeWebhook } from '../webhooks/webhooks.js';
import * as S from './schemas.js';

// The admin API's schemas say what the model does: its rules come from the model's constants, and
// what the model's describe functions return is what the answers' schemas document.

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
const conforms = (schema: object, value: unknown) => {
  const validate = ajv.compile(schema);
  assert.ok(validate(value), JSON.stringify(validate.errors));
};

const client: Client = {
  id: 'shop',
  name: 'The Shop',
  public: false,
  secretHash: 'x',
  redirectUris: ['https://shop.example/cb'],
  grantTypes: ['authorization_code', 'refresh_token'],
  scope: null,
  tokenType: 'bearer',
  origins: [],
  uri: null,
  idTokenSignedResponseAlg: 'RS256',
  postLogoutRedirectUris: [],
  verified: false,
  introspect: false,
  requirePkce: true,
  requirePar: false,
  createdAt: Date.UTC(2026, 0, 1),
};

test("the bodies' rules are the model's constants", () => {
  assert.equal(S.NewClient.properties.client_id.pattern, CLIENT_ID.source);
  assert.deepEqual(S.NewClient.properties.grant_types.items.enum, [...GRANT_TYPES]);
  assert.deepEqual(S.ClientChanges.properties.token_type.enum, [...TOKEN_TYPES]);
  assert.equal(S.NewClient.properties.client_secret.minLength, MIN_CLIENT_SECRET_LENGTH);
  assert.equal(S.NewUser.properties.username.pattern, USERNAME.source);
  assert.equal(S.NewUser.properties.password.minLength, MIN_PASSWORD_LENGTH);
  assert.equal(S.UserChanges.properties.password.minLength, MIN_PASSWORD_LENGTH);
});

test('what the model describes is what the answers document', () => {
  conforms(S.Client, describeClient(client));
  conforms(S.Client, { ...describeClient({ ...client, public: true, scope: 'zoos:read', uri: 'https://shop.example' }), client_secret: 's' });
  conforms(S.User, describeUser({ id: 'u1', username: 'alice', admin: false, createdAt: Date.now(), email: null, emailVerified: false, name: null, updatedAt: null }));
  conforms(S.User, describeUser({ id: 'u2', username: 'bob', admin: true, createdAt: Date.now(), email: 'bob@example.org', emailVerified: true, name: 'Bob', updatedAt: Date.now() }));
  conforms(S.Webhook, describeWebhook({ id: 'w1', url: 'https://hooks.example/in', events: [], collections: ['zoos'], createdAt: Date.now(), updatedAt: Date.now() }));
});
