import { Type, type Static } from '@sinclair/typebox';

// The one JSON Schema of gatehouse.yaml. Defaults live here too, so the loader fills them in.
// `problem` (not a JSON Schema keyword) is what a config error says when a `pattern` does not match.

const HTTPS_URL = 'must be an absolute https:// URL';

const Tls = Type.Object(
  { cert: Type.String({ minLength: 1 }), key: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
);

const Server = Type.Object(
  {
    host: Type.String({ default: '127.0.0.1', minLength: 1 }),
    port: Type.Integer({ default: 8443, minimum: 0, maximum: 65535 }),
    publicUrl: Type.Optional(Type.Union([Type.String({ pattern: '^https://', problem: HTTPS_URL }), Type.Null()])),
    tls: Type.Optional(Type.Union([Tls, Type.Null()])),
    trustProxy: Type.Boolean({ default: false }),
    bodyLimit: Type.Integer({ default: 1048576, minimum: 1024 }),
  },
  { additionalProperties: false, default: {} },
);

const Storage = Type.Object(
  {
    database: Type.String({ default: 'sqlite:./data/gatehouse.db', minLength: 1 }),
    redis: Type.Union([Type.String({ minLength: 1 }), Type.Null()], { default: null }),
  },
  { additionalProperties: false, default: {} },
);

/** Prometheus metrics on a separate plain-HTTP listener; off while port is null. */
const Metrics = Type.Object(
  {
    host: Type.String({ default: '127.0.0.1', minLength: 1 }),
    port: Type.Union([Type.Integer({ minimum: 1, maximum: 65535 }), Type.Null()], { default: null }),
  },
  { additionalProperties: false, default: {} },
);

/**
 * Every grant gatehouse implements (docs/oauth.md#token-endpoint-post-auth_urltoken), the one list of their names: the client rules
 * (authserver/model/client.ts) and `auth.grants` both use it.
 */
export const GRANT_TYPES = ['authorization_code', 'implicit', 'password', 'client_credentials', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'] as const;

const Seconds = (def: number) => Type.Integer({ default: def, minimum: 1 });

const Auth = Type.Object(
  {
    path: Type.String({ default: '/oauth', pattern: '^/[A-Za-z0-9._~/-]*[A-Za-z0-9._~-]$', problem: 'must be a URL path that starts with / and does not end with /' }),
    url: Type.Union([Type.String({ pattern: '^https://', problem: HTTPS_URL }), Type.Null()], { default: null }),
    codeTtl: Seconds(600),
    /** How long a device code and its user code wait for the user (RFC 8628 `expires_in`). */
    deviceCodeTtl: Seconds(600),
    accessTokenTtl: Seconds(3600),
    /** How long an ID token (OpenID Connect) is valid; a retired signing key stays in the JWKS this long. */
    idTokenTtl: Seconds(3600),
    refreshTokenTtl: Seconds(1209600),
    maxGrantTtl: Seconds(7776000),
    sessionTtl: Seconds(43200),
    loginThrottle: Type.Object(
      { max: Type.Integer({ default: 5, minimum: 1 }), window: Seconds(900) },
      { additionalProperties: false, default: {} },
    ),
    demo: Type.Boolean({ default: false }),
    /** The grants this deployment offers (default: all); a client cannot use, or be registered for, another. */
    grants: Type.Array(Type.Union(GRANT_TYPES.map((g) => Type.Literal(g))), { default: [...GRANT_TYPES], minItems: 1 }),
    /** Which clients must send a PKCE challenge with an authorization code request: public ones (and those registered --require-pkce), or all. */
    requirePkce: Type.Union([Type.Literal('public'), Type.Literal('all')], { default: 'public' }),
    /** Who must sign in with a second factor (TOTP or passkey): whoever set one up, admins too, or every user. */
    mfa: Type.Union([Type.Literal('optional'), Type.Literal('admins'), Type.Literal('all')], { default: 'optional' }),
    /** Who may make an account (docs/users.md): operators only, whoever holds an invitation, or anyone at {auth_url}/signup. */
    signup: Type.Union([Type.Literal('closed'), Type.Literal('invite'), Type.Literal('open')], { default: 'closed' }),
    /** Dynamic client registration (RFC 7591) at {auth_url}/register: not offered, with an initial access token, or open to anyone. */
    registration: Type.Union([Type.Literal('closed'), Type.Literal('token'), Type.Literal('open')], { default: 'closed' }),
    /** An account whose e-mail address is not verified cannot sign in (sign-up mails the link). */
    requireVerifiedEmail: Type.Boolean({ default: true }),
    /** A client_id that is an https URL names its client ID metadata document, fetched and used as the client (docs/oauth.md). */
    clientMetadataDocuments: Type.Boolean({ default: true }),
    /** Let those documents be fetched from loopback and private addresses (tests; a client on the same network). */
    allowPrivateMetadataHosts: Type.Boolean({ default: false }),
    /** RFC 9126: every client's authorization requests must be pushed to {auth_url}/par first (else only those registered --require-par). */
    requirePushedAuthorizationRequests: Type.Boolean({ default: false }),
    /** Access tokens as opaque strings, or as RFC 9068 JWTs signed with the ID token keys (docs/oauth.md#jwt-access-tokens). */
    accessTokenFormat: Type.Union([Type.Literal('opaque'), Type.Literal('jwt')], { default: 'opaque' }),
  },
  { additionalProperties: false, default: {} },
);

export const RATE_LIMIT_DEFAULTS = { max: 1000, window: 60 };
const RateLimit = Type.Object(
  { max: Type.Integer({ default: RATE_LIMIT_DEFAULTS.max, minimum: 1 }), window: Seconds(RATE_LIMIT_DEFAULTS.window) },
  { additionalProperties: false },
);

const Api = Type.Object(
  {
    version: Type.Integer({ default: 1, minimum: 1 }),
    retiredVersions: Type.Array(Type.Integer({ minimum: 0 }), { default: [0] }),
    defaultLimit: Type.Integer({ default: 20, minimum: 1 }),
    maxLimit: Type.Integer({ default: 100, minimum: 1 }),
    // null switches the quota off. (Ajv fills no defaults inside a union: the loader completes a partial object.)
    rateLimit: Type.Union([RateLimit, Type.Null()], { default: RATE_LIMIT_DEFAULTS }),
    maxBulkItems: Type.Integer({ default: 1000, minimum: 1 }),
    /** At most this many children per record with `expand=<child collection>`. */
    expandLimit: Type.Integer({ default: 10, minimum: 1, maximum: 100 }),
    /** The license of the API's data, for the OpenAPI document's `info.license`. */
    license: Type.Optional(
      Type.Object({ name: Type.String({ minLength: 1 }), identifier: Type.Optional(Type.String({ minLength: 1 })), url: Type.Optional(Type.String({ minLength: 1 })) }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false, default: {} },
);

const FieldName = Type.String({ pattern: '^[a-z][a-z0-9_]*$', problem: 'must be a field name: lower case letters, digits and _, starting with a letter' });

/** What `convert` may turn a field's stored values into. */
export const CONVERT_TARGETS = ['string', 'number', 'integer', 'boolean', 'date-time'] as const;

/** One declared change to a collection's stored records: exactly one of its keys. */
const MigrationStep = Type.Union(
  [
    Type.Object({ rename: Type.Object({ from: FieldName, to: FieldName }, { additionalProperties: false }) }, { additionalProperties: false }),
    Type.Object(
      {
        convert: Type.Object(
          {
            field: FieldName,
            to: Type.Union(CONVERT_TARGETS.map((t) => Type.Literal(t))),
            /** What a value that does not convert becomes: the migration fails (the default), null, or the field's schema default. */
            onError: Type.Optional(Type.Union([Type.Literal('fail'), Type.Literal('null'), Type.Literal('default')])),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
    Type.Object({ default: Type.Object({ field: FieldName, value: Type.Unknown() }, { additionalProperties: false, required: ['field', 'value'] }) }, { additionalProperties: false }),
    Type.Object({ drop: FieldName }, { additionalProperties: false }),
  ],
  { problem: 'must be one of {rename: {from, to}}, {convert: {field, to, onError}}, {default: {field, value}} or {drop: field}' },
);

const Collection = Type.Object(
  {
    access: Type.Optional(Type.Union([Type.Literal('owner'), Type.Literal('shared')])),
    title: Type.Optional(Type.String()),
    /** What the collection holds, in a sentence or two: the OpenAPI document's description of its tag. */
    description: Type.Optional(Type.String()),
    schema: Type.Object(
      {
        type: Type.Literal('object'),
        properties: Type.Record(Type.String(), Type.Object({}, { additionalProperties: true })),
      },
      { additionalProperties: true },
    ),
    parent: Type.Optional(
      Type.Object(
        { collection: Type.String(), field: Type.String({ pattern: '^[a-z][a-z0-9_]*$', problem: 'must be lower case letters, digits and _, starting with a letter' }) },
        { additionalProperties: false },
      ),
    ),
    filters: Type.Array(Type.String(), { default: [] }),
    sort: Type.Array(Type.String(), { default: [] }),
    /** String fields searched by `q=` (full-text). */
    search: Type.Array(Type.String(), { default: [] }),
    /** Compound indexes: each an ordered list of two or more filter/sort fields (a query filtering on them all is served by one index). */
    indexes: Type.Array(Type.Array(Type.String(), { minItems: 2, maxItems: 8 }), { default: [] }),
    /** Declared changes to the stored records (docs/configuration.md, Changing the schema), applied by `gatehouse migrate`. */
    migrations: Type.Array(MigrationStep, { default: [] }),
    attachments: Type.Optional(
      Type.Object(
        {
          maxBytes: Type.Integer({ minimum: 1, default: 10485760 }),
          types: Type.Array(Type.String({ pattern: '^[a-z]+/[a-z0-9.+-]+$', problem: 'must be a media type in lower case, such as image/png' }), { minItems: 1 }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** docs/events.md#configuration: how long the outbox keeps events, and where webhooks may deliver. */
const Events = Type.Object(
  {
    /** Seconds an event is kept (the feed's and streams' resume window). */
    retention: Type.Integer({ default: 604800, minimum: 60 }),
    webhooks: Type.Object(
      {
        /** Deliver to loopback and private addresses too (a receiver on the same host or network). Off: SSRF. */
        allowPrivateNetworks: Type.Boolean({ default: false }),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false, default: {} },
);

/** docs/users.md#mail: where mail goes. No SMTP server: into `<data dir>/mail/*.eml`, the link logged. */
const Email = Type.Object(
  {
    /** smtp:// or smtps:// URL (user and password in it); GATEHOUSE_SMTP_URL wins over it. */
    smtp: Type.Union([Type.String({ pattern: '^smtps?://', problem: 'must be an smtp:// or smtps:// URL' }), Type.Null()], { default: null }),
    from: Type.String({ default: 'gatehouse <no-reply@localhost>', minLength: 3 }),
  },
  { additionalProperties: false, default: {} },
);

export const ConfigSchema = Type.Object(
  {
    server: Server,
    storage: Storage,
    auth: Auth,
    api: Api,
    metrics: Metrics,
    events: Events,
    email: Email,
    collections: Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_]*$' }), Collection, { minProperties: 1 }),
  },
  { additionalProperties: false },
);

export type RawConfig = Static<typeof ConfigSchema>;
export type CollectionConfig = Static<typeof Collection>;
