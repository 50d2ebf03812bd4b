import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { CLIENT_ID, GRANT_TYPES, ID_TOKEN_ALGS, MIN_CLIENT_SECRET_LENGTH, TOKEN_TYPES } from '../authserver/model/clients.js';
import { MAX_EMAIL_LENGTH, MAX_NAME_LENGTH, MIN_PASSWORD_LENGTH, USERNAME } from '../authserver/model/users.js';
import { EVENT_TYPES } from '../contract/event-bus.js';
import { MAX_REGISTRATION_TOKEN_TTL_S, MAX_REGISTRATION_TOKEN_USES, REGISTRATION_TOKEN_TTL_S } from '../authserver/model/registration.js';

// The shapes of the admin API ({base_url}/admin/v1, docs/admin.md): its bodies, parameters and
// answers, once. Fastify validates requests from them (platform/http/schema-validator.ts) and the
// OpenAPI document is generated from them (platform/http/openapi.ts). The value rules come from
// the model's exported constants; marked `checkedByModel`, they are documented here and checked
// by the model, which answers every caller (CLI, console, API) with the same sentences.

/** The model checks these values (its rules and sentences); the schema shows them. */
const byModel = { checkedByModel: true } as const;

const Text = (description?: string) => Type.String(description ? { description } : {});
const Flag = (description?: string) => Type.Boolean(description ? { description } : {});
const Strings = (description?: string) => Type.Array(Type.String(), description ? { description } : {});
/** A string or null (one JSON type list, so a wrong value is "must be a string or null"). */
const TextOrNull = (description?: string) => Type.Unsafe<string | null>({ type: ['string', 'null'], ...(description ? { description } : {}) });
const Time = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });
const TimeOrNull = () => Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'date-time' });

const ClientId = Type.String({ pattern: CLIENT_ID.source, description: '1-128 letters, digits or . _ ~ -', ...byModel });
const GrantTypes = (description: string) => Type.Array(Type.String({ enum: [...GRANT_TYPES] }), { minItems: 1, description, ...byModel });
const TokenTypeField = Type.String({ enum: [...TOKEN_TYPES], ...byModel });
const ClientName = Type.String({ minLength: 1, maxLength: 100, ...byModel });
const IdTokenAlg = Type.String({ enum: [...ID_TOKEN_ALGS], description: 'OpenID Connect: how its ID tokens are signed (default RS256)', ...byModel });
const PostLogoutUris = Strings('OpenID Connect: where RP-initiated logout may send the browser back (exact absolute URIs)');

// Body fields: their order is the one the "unknown field (allowed: …)" sentence lists.
export const NewClient = Type.Object(
  {
    client_id: ClientId,
    name: Type.Optional(ClientName),
    redirect_uris: Type.Optional(Strings('Exact absolute URIs; plain http only for loopback')),
    grant_types: Type.Optional(GrantTypes('At least one; only grants the deployment offers (auth.grants)')),
    scope: Type.Optional(TextOrNull('Space-separated; null or absent: every collection scope (admin only when named)')),
    token_type: Type.Optional(TokenTypeField),
    public: Type.Optional(Flag('A public client (no secret; PKCE required)')),
    client_secret: Type.Optional(Type.String({ minLength: MIN_CLIENT_SECRET_LENGTH, description: 'Absent: a strong one is generated (confidential clients)', ...byModel })),
    origins: Type.Optional(Strings("Browser origins beyond the redirect URIs' (scheme://host[:port])")),
    uri: Type.Optional(TextOrNull('Its home page, shown on the consent and account pages')),
    verified: Type.Optional(Flag('The operator vouches for it (no "not verified" note on the consent page)')),
    introspect: Type.Optional(Flag("A resource server: it may introspect every client's tokens (confidential clients only)")),
    require_pkce: Type.Optional(Flag('Its authorization code requests must carry a PKCE challenge (S256)')),
    require_pushed_authorization_requests: Type.Optional(Flag('RFC 9126: its authorization requests must be pushed to {auth_url}/par first')),
    dpop_bound_access_tokens: Type.Optional(Flag('Its token requests must carry a DPoP proof: its tokens are always bound to a key (RFC 9449)')),
    post_logout_redirect_uris: Type.Optional(PostLogoutUris),
    id_token_signed_response_alg: Type.Optional(IdTokenAlg),
  },
  { additionalProperties: false },
);
export type NewClient = Static<typeof NewClient>;

export const ClientChanges = Type.Object(
  {
    name: Type.Optional(ClientName),
    redirect_uris: Type.Optional(Strings()),
    grant_types: Type.Optional(GrantTypes('At least one; a grant turned off since it was registered may stay')),
    scope: Type.Optional(TextOrNull()),
    token_type: Type.Optional(TokenTypeField),
    origins: Type.Optional(Strings()),
    uri: Type.Optional(TextOrNull()),
    verified: Type.Optional(Flag()),
    introspect: Type.Optional(Flag()),
    require_pkce: Type.Optional(Flag()),
    require_pushed_authorization_requests: Type.Optional(Flag()),
    dpop_bound_access_tokens: Type.Optional(Flag()),
    post_logout_redirect_uris: Type.Optional(PostLogoutUris),
    id_token_signed_response_alg: Type.Optional(IdTokenAlg),
  },
  { additionalProperties: false },
);
export type ClientChanges = Static<typeof ClientChanges>;

export const SecretRotation = Type.Object(
  { client_secret: Type.Optional(Type.String({ minLength: MIN_CLIENT_SECRET_LENGTH, description: 'Absent: a strong one is generated', ...byModel })) },
  { additionalProperties: false },
);
export type SecretRotation = Static<typeof SecretRotation>;

const Password = Type.String({ minLength: MIN_PASSWORD_LENGTH, ...byModel });
const profileFields = {
  email: Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'], maxLength: MAX_EMAIL_LENGTH, description: 'Their e-mail address (OpenID Connect `email`); null clears it', ...byModel })),
  email_verified: Type.Optional(Flag('The address is verified (a changed address is unverified unless this says so)')),
  name: Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'], maxLength: MAX_NAME_LENGTH, description: 'Their full name (OpenID Connect `name`); null clears it', ...byModel })),
};
export const NewUser = Type.Object(
  {
    username: Type.String({ pattern: USERNAME.source, description: '1-128 letters, digits or . _ @ + -', ...byModel }),
    password: Password,
    admin: Type.Optional(Flag('May be granted the admin scope')),
    ...profileFields,
  },
  { additionalProperties: false },
);
export type NewUser = Static<typeof NewUser>;

export const UserChanges = Type.Object(
  { password: Type.Optional(Type.String({ ...Password, description: 'Ends the sign-in sessions' })), admin: Type.Optional(Flag()), ...profileFields },
  { additionalProperties: false },
);
export type UserChanges = Static<typeof UserChanges>;

export const NewInvitation = Type.Object(
  { email: Type.String({ maxLength: MAX_EMAIL_LENGTH, description: 'The address to invite: a link to the sign-up page is mailed to it (valid 7 days, once)', ...byModel }) },
  { additionalProperties: false },
);
export type NewInvitation = Static<typeof NewInvitation>;

export const NewRegistrationToken = Type.Object(
  {
    ttl: Type.Optional(Type.Integer({ minimum: 60, maximum: MAX_REGISTRATION_TOKEN_TTL_S, description: `Seconds it stays valid (default ${REGISTRATION_TOKEN_TTL_S})`, ...byModel })),
    uses: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_REGISTRATION_TOKEN_USES, description: 'How many clients it may register (default 1)', ...byModel })),
  },
  { additionalProperties: false },
);
export type NewRegistrationToken = Static<typeof NewRegistrationToken>;

/** A POST that takes no fields (absent, or `{}`). */
export const NoFields = Type.Object({}, { additionalProperties: false });

const webhookFields = {
  url: Type.Optional(Type.String({ format: 'uri', description: 'https; no private address unless events.webhooks.allowPrivateNetworks (required to add one)', ...byModel })),
  events: Type.Optional(Type.Array(Type.String({ enum: [...EVENT_TYPES] }), { description: 'Event types delivered ([]: all)', ...byModel })),
  collections: Type.Optional(Strings('Collections delivered ([]: all)')),
};
export const WebhookFields = Type.Object(webhookFields, { additionalProperties: false });
export type WebhookFields = Static<typeof WebhookFields>;

export const MaintenanceSwitch = Type.Object({ enabled: Flag() }, { additionalProperties: false });
export type MaintenanceSwitch = Static<typeof MaintenanceSwitch>;

// Path and query parameters.
export const IdParam = Type.Object({ id: Text() });
export const UserParam = Type.Object({ user: Text('The user id or username') });

export const GrantFilter = Type.Object(
  {
    user: Type.Optional(Type.String({ description: 'A username', problem: 'must be given once', errorSummary: 'Repeated query parameter' })),
    client: Type.Optional(Type.String({ description: 'A client id', problem: 'must be given once', errorSummary: 'Repeated query parameter' })),
  },
  { additionalProperties: false, problem: 'unknown (filters: user, client)', errorSummary: 'Unknown query parameter' },
);
export type GrantFilter = Static<typeof GrantFilter>;

export const DeliveryPage = (api: { defaultLimit: number; maxLimit: number }) =>
  Type.Object({
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: api.maxLimit, default: api.defaultLimit, problem: `must be an integer from 1 to ${api.maxLimit}`, errorSummary: 'Invalid limit' })),
    before: Type.Optional(Type.Integer({ description: 'Only attempts with a smaller id (Link: next)', problem: 'must be an attempt id', errorSummary: 'Invalid before' })),
  });
export type DeliveryPage = Static<ReturnType<typeof DeliveryPage>>;

// Answers.
export const Client = Type.Object({
  client_id: Text(),
  name: Text(),
  type: Type.String({ enum: ['public', 'confidential'] }),
  redirect_uris: Strings(),
  grant_types: Type.Array(Type.String({ enum: [...GRANT_TYPES] })),
  scope: TextOrNull('Space-separated; null: every collection scope'),
  token_type: Type.String({ enum: [...TOKEN_TYPES] }),
  origins: Strings("Browser origins allowed to call with its tokens (CORS): its redirect URIs' origins and the ones registered"),
  uri: TextOrNull('Its home page, shown on the consent and account pages'),
  verified: Flag('The operator vouches for it (no "not verified" note on the consent page)'),
  introspect: Flag("A resource server: it may introspect every client's tokens (any client may introspect its own)"),
  require_pkce: Flag('Its authorization code requests must carry a PKCE challenge (S256); public clients always must'),
  require_pushed_authorization_requests: Flag('RFC 9126: its authorization requests must be pushed to {auth_url}/par first (always, with auth.requirePushedAuthorizationRequests)'),
  dpop_bound_access_tokens: Flag('Its token requests must carry a DPoP proof (RFC 9449)'),
  id_token_signed_response_alg: Type.String({ enum: [...ID_TOKEN_ALGS], description: 'How its ID tokens are signed (OpenID Connect)' }),
  post_logout_redirect_uris: Strings('Where RP-initiated logout may send the browser back'),
  created_at: Time(),
  client_secret: Type.Optional(Text('Only in the answer to a create or a secret rotation')),
});

export const User = Type.Object({
  id: Text(),
  username: Text(),
  subject: Text(),
  admin: Flag(),
  email: TextOrNull('Their e-mail address'),
  email_verified: Flag('Whether the address is verified'),
  name: TextOrNull('Their full name'),
  created_at: Time(),
});

export const FactorsReset = Type.Composite([User, Type.Object({ factors_removed: Type.Integer({ description: 'How many second factors were removed' }) })]);

export const Invitation = Type.Object({
  id: Text('The link\'s public part; revoke it with DELETE /admin/v1/invitations/{id}'),
  email: Text('The address invited'),
  created_by: TextOrNull('Who invited: an admin\'s subject (null: the command line)'),
  created_at: Time(),
  expires_at: Time(),
});

/** An initial access token of dynamic client registration (auth.registration: token), never the token itself. */
export const RegistrationToken = Type.Object({
  id: Text('Its public part; revoke it with DELETE /admin/v1/registration-tokens/{id}'),
  created_by: TextOrNull("Who made it: an admin's subject (null: the command line)"),
  created_at: Time(),
  expires_at: Time(),
  uses_left: Type.Integer({ description: 'How many clients it may still register' }),
});
export const NewRegistrationTokenAnswer = Type.Composite([
  RegistrationToken,
  Type.Object({ token: Text('The initial access token, shown this once: the client sends it as Authorization: Bearer <token> to {auth_url}/register') }),
]);

/** A mail of the outbox as operators see it (never its parts: they held a link's secret). */
export const Mail = Type.Object({
  id: Text(),
  kind: Text('What it is: verify, signup-taken, invite, reset, password-reset, email-change, email-change-notice, email-changed'),
  recipient: Text(),
  subject: Text(),
  status: Type.String({ enum: ['pending', 'sent', 'failed'], description: 'pending: waiting for its first or next attempt; failed: given up 24 h after it was queued' }),
  attempts: Type.Integer(),
  created_at: Time(),
  next_at: TimeOrNull(),
  sent_at: TimeOrNull(),
  last_error: TextOrNull('What the last failed attempt was told'),
});

export const MailQuery = (api: { defaultLimit: number; maxLimit: number }) =>
  Type.Object(
    {
      status: Type.Optional(Type.String({ enum: ['pending', 'sent', 'failed'], problem: 'must be pending, sent or failed', errorSummary: 'Invalid status' })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: api.maxLimit, default: api.defaultLimit, problem: `must be an integer from 1 to ${api.maxLimit}`, errorSummary: 'Invalid limit' })),
      before: Type.Optional(Type.String({ minLength: 1, description: 'Only mails older than this id (the last id of the previous page)', problem: 'must be a mail id', errorSummary: 'Invalid before' })),
    },
    { additionalProperties: false, problem: 'unknown (parameters: status, limit, before)', errorSummary: 'Unknown query parameter' },
  );
export type MailQuery = Static<ReturnType<typeof MailQuery>>;

export const VerificationSent = Type.Object({ status: Type.String({ enum: ['sent'], description: 'A new verification link was mailed; earlier links stop working' }) });

export const Grant = Type.Object({
  id: Text(),
  subject: Text(),
  client_id: Text(),
  scope: Text(),
  created_at: Time(),
  expires_at: Time(),
  last_used_at: TimeOrNull(),
});

export const Webhook = Type.Object({
  id: Text(),
  url: Type.String({ format: 'uri' }),
  events: Strings('Event types delivered ([]: all)'),
  collections: Strings('Collections delivered ([]: all)'),
  created_at: Time(),
  updated_at: Time(),
  secret: Type.Optional(Text('whsec_…: only in the answer to a create')),
});

export const DeliveryAttempt = Type.Object({
  id: Text(),
  event_id: Text(),
  attempt: Type.Integer(),
  time: Time(),
  status_code: Type.Unsafe<number | null>({ type: ['integer', 'null'] }),
  duration_ms: Type.Integer(),
  error: TextOrNull(),
  outcome: Type.String({ enum: ['succeeded', 'failed'] }),
});

export const AdminEvent = Type.Object({
  id: Text('An increasing integer as a decimal string'),
  type: Type.String({ enum: [...EVENT_TYPES] }),
  time: Time(),
  collection: TextOrNull(),
  record_id: TextOrNull(),
  owner: TextOrNull(),
  actor: TextOrNull(),
  data: Type.Unsafe<object | null>({ type: ['object', 'null'] }),
});

export const Maintenance = Type.Object({ enabled: Flag(), since: TimeOrNull() });

/** The error body (docs/api.md "Errors"); the document shows it as its `Error` component. */
export const ErrorBody = Type.Object({ error: Text(), detail: Type.Record(Type.String(), Type.String()) });

const ERRORS: Record<number, string> = {
  400: 'Bad request (detail names each field)',
  401: 'Missing or invalid access token',
  403: 'The token has no admin scope',
  404: 'Not found',
  409: 'Already exists',
  429: 'The address has had its 5 mails this hour',
};

type Answer = { description: string; content?: { 'application/json': { schema: TSchema } } };

/**
 * An operation's answers: its successes (`[description, schema]`, or a description alone for no
 * body) and its error statuses, all with the error body.
 */
export function answers(ok: Record<number, [string, TSchema?]>, ...errors: number[]): Record<number, Answer> {
  const json = (schema: TSchema) => ({ 'application/json': { schema } });
  return {
    ...Object.fromEntries(Object.entries(ok).map(([code, [description, schema]]) => [code, { description, ...(schema ? { content: json(schema) } : {}) }])),
    ...Object.fromEntries(errors.map((code) => [code, { description: ERRORS[code], content: json(ErrorBody) }])),
  };
}
