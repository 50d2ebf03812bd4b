// The Kysely types of gatehouse's own tables. Times are epoch milliseconds (integers) unless
// the column is a record timestamp (RFC 3339 text). Booleans are 0/1 integers on both engines.
import type { Generated } from 'kysely';

export interface SettingsTable {
  key: string;
  value: string;
  updated_at: number;
}

/** Server secrets (HMAC keys for CSRF tokens and mac_key derivation); rotated with `gatehouse keys rotate`. */
export interface SigningKeysTable {
  id: string;
  secret: string;
  created_at: number;
  retired_at: number | null;
}

export interface UsersTable {
  id: string;
  username: string;
  password_hash: string;
  /** 1: may be granted the `admin` scope. */
  admin: number;
  created_at: number;
  /** OpenID Connect claims (`email`, `email_verified`, `name`); updated_at: when the profile last changed. */
  email: string | null;
  email_verified: number;
  name: string | null;
  updated_at: number | null;
  /** 1: made by sign-up and not yet verified (cannot sign in while auth.requireVerifiedEmail). */
  verification_pending: Generated<number>;
}

export interface ClientsTable {
  id: string;
  name: string;
  secret_hash: string | null;
  public: number;
  redirect_uris: string; // JSON array
  grant_types: string; // JSON array
  scope: string | null; // null: every scope of the deployment
  token_type: string; // bearer | mac
  created_at: number;
  origins: string; // JSON array: the origins given with --origin (not those of the redirect URIs)
  uri: string | null; // the client's home page, shown on the consent and account pages
  verified: number; // 1: the operator vouches for it (no "not verified" note on the consent page)
  introspect: number; // 1: a resource server, which may introspect every client's tokens
  require_pkce: number; // 1: its authorization requests must carry a PKCE challenge, even when confidential
  id_token_signed_response_alg: string; // RS256 | ES256
  post_logout_redirect_uris: string; // JSON array: where RP-initiated logout may send the browser back
  require_par: number; // 1: its authorization requests must come through {auth_url}/par (RFC 9126)
  dpop_bound: number; // 1: its token requests must carry a DPoP proof (RFC 9449)
}

/** Every web origin of every client (its redirect URIs' and its --origin ones): who may call from a browser (CORS). */
export interface ClientOriginsTable {
  origin: string;
  client_id: string;
}

/** One authorization a subject gave a client: the scope and validity chosen, the root of its tokens. */
export interface GrantsTable {
  id: string;
  client_id: string;
  subject: string;
  scope: string;
  expires_at: number;
  revoked_at: number | null;
  revoked_reason: string | null;
  created_at: number;
}

export interface AuthorizationCodesTable {
  hash: string;
  client_id: string;
  subject: string;
  redirect_uri: string;
  redirect_uri_given: number;
  scope: string;
  requested_scope: string;
  grant_expires_at: number;
  code_challenge: string | null;
  code_challenge_method: string | null;
  expires_at: number;
  used_at: number | null;
  grant_id: string | null;
  created_at: number;
  /** OpenID Connect: the request's nonce, and when and in which session the user signed in. */
  nonce: string | null;
  auth_time: number | null;
  sid: string | null;
  /** How the user signed in (JSON array of RFC 8176 values): the ID token's `amr`. */
  amr: string | null;
  /** RFC 8707: the resources asked for at /authorize (paths under publicUrl, space-separated); null: none asked, the resource API. */
  resources: string | null;
}

export interface AccessTokensTable {
  /** The token's selector (see accessTokenKey); for tokens issued before selectors, their hash. */
  id: string;
  hash: string;
  grant_id: string | null;
  client_id: string;
  subject: string;
  scope: string;
  token_type: string;
  key_id: string | null;
  expires_at: number;
  revoked_at: number | null;
  created_at: number;
  /** DPoP (RFC 9449): the SHA-256 JWK thumbprint of the key the token is bound to; null: a bearer token. */
  jkt: string | null;
  /** RFC 8707: the resource the token is for, as its path under publicUrl (`/v1`, `/mcp`); null (tokens from before): the resource API. */
  audience: string | null;
}

export interface RefreshTokensTable {
  hash: string;
  grant_id: string;
  client_id: string;
  scope: string;
  expires_at: number;
  used_at: number | null;
  created_at: number;
  /** OpenID Connect: the sign-in the grant came from, carried into the ID token of a refresh. */
  auth_time: number | null;
  sid: string | null;
  amr: string | null;
  /** DPoP: a public client's refresh token is bound to the key of its proof (RFC 9449 §5). */
  jkt: string | null;
  /** RFC 8707: the resources (paths under publicUrl, space-separated) its access tokens may be for; null: the resource API. */
  resources: string | null;
}

export interface SessionsTable {
  hash: string;
  user_id: string;
  expires_at: number;
  /** When the user signed in (an ID token's auth_time). */
  created_at: number;
  /** The session's public id: an ID token's `sid` (null for sessions from before OpenID Connect). */
  sid: string | null;
  /** How the user signed in: a JSON array of RFC 8176 values (`pwd`, `otp`, `hwk`, `user`); null: a password, before second factors. */
  amr: string | null;
}

/** The asymmetric keys that sign ID tokens (RS256, ES256); a retired one stays listed until its last ID token expired. */
export interface IdTokenKeysTable {
  /** The JWK `kid`. */
  id: string;
  alg: string;
  /** The private key as a JWK, sealed (platform/crypto/sealed.ts). */
  private_key: string;
  public_jwk: string;
  created_at: number;
  retired_at: number | null;
}

export interface CountersTable {
  key: string;
  count: number;
  window_start: number;
}

export interface NoncesTable {
  key: string;
  expires_at: number;
}

export interface JobsTable {
  id: string;
  subject: string;
  client_id: string;
  collection: string;
  parent_id: string | null;
  status: string; // queued | running | done
  total: number;
  processed: number;
  items: string; // JSON array of the submitted bodies
  results: string; // JSON array: { index, id } | { index, error, detail }
  lease_until: number;
  created_at: number;
  updated_at: number;
}

export interface IdempotencyKeysTable {
  subject: string;
  key: string;
  collection: string;
  body_hash: string;
  record_id: string;
  created_at: number;
}

/** An MCP session that follows records or holds a stream (docs/mcp.md#following-changes). */
export interface McpSessionsTable {
  /** The random part of its session id (the id itself is signed, not stored). */
  id: string;
  subject: string;
  client_id: string;
  /** How many rows of mcp_subscriptions it has: raised by a conditional update, so the limit holds under races. */
  subscriptions: number;
  /** Its current GET stream's random name: a stream elsewhere with another name was replaced. */
  stream: string | null;
  expires_at: number;
}

export interface McpSubscriptionsTable {
  session_id: string;
  collection: string;
  record_id: string;
  /** The URI as the client subscribed with it: what its notifications name. */
  uri: string;
  created_at: number;
}

export interface TombstonesTable {
  collection: string;
  id: string;
  deleted_at: number;
}

/** An attachment's bytes in order (seq 0, 1, …); attachments.data is then empty. */
export interface AttachmentChunksTable {
  attachment_id: string;
  seq: number;
  data: Uint8Array;
}

export interface AttachmentsTable {
  id: string;
  collection: string;
  record_id: string;
  filename: string;
  content_type: string;
  size: number;
  sha256: string;
  data: Uint8Array;
  created_at: string;
}


export interface Database {
  settings: SettingsTable;
  signing_keys: SigningKeysTable;
  id_token_keys: IdTokenKeysTable;
  users: UsersTable;
  clients: ClientsTable;
  client_origins: ClientOriginsTable;
  grants: GrantsTable;
  authorization_codes: AuthorizationCodesTable;
  access_tokens: AccessTokensTable;
  refresh_tokens: RefreshTokensTable;
  sessions: SessionsTable;
  counters: CountersTable;
  nonces: NoncesTable;
  jobs: JobsTable;
  idempotency_keys: IdempotencyKeysTable;
  tombstones: TombstonesTable;
  attachments: AttachmentsTable;
  attachment_chunks: AttachmentChunksTable;
  events: EventsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  user_factors: UserFactorsTable;
  recovery_codes: RecoveryCodesTable;
  webauthn_challenges: WebauthnChallengesTable;
  mail_outbox: MailOutboxTable;
  mail_quota: MailQuotaTable;
  user_tokens: UserTokensTable;
  registration_tokens: RegistrationTokensTable;
  client_registrations: ClientRegistrationsTable;
  pushed_requests: PushedRequestsTable;
  device_codes: DeviceCodesTable;
  mcp_sessions: McpSessionsTable;
  mcp_subscriptions: McpSubscriptionsTable;
}

/** A mail queued with the change it tells about (docs/users.md): sent after the commit, retried. */
export interface MailOutboxTable {
  id: string;
  /** What the mail is (`verify`, `reset`, `invite`, …): for the admin's list. */
  kind: string;
  /** The address, as given. */
  recipient: string;
  subject: string;
  /** The text and HTML parts, sealed (they carry a link's secret); null once sent or given up. */
  body: string | null;
  /** pending | sent | failed */
  status: string;
  attempts: number;
  created_at: number;
  next_at: number;
  lease_until: number;
  lease_owner: string | null;
  sent_at: number | null;
  last_error: string | null;
}

/** Mails per address in the current hour (at most 5): one row per address, counted by one atomic upsert. */
export interface MailQuotaTable {
  recipient: string;
  window_start: number;
  count: number;
}

/** A single-use link's secret (verification, reset, invitation, e-mail change), by its SHA-256. */
export interface UserTokensTable {
  /** The public selector (the part of the link before the dot). */
  id: string;
  /** SHA-256 of the secret part. */
  hash: string;
  /** verify | reset | invite | email */
  purpose: string;
  user_id: string | null;
  /** The address the link was mailed to (invitation: the invited address; e-mail change: the new one). */
  email: string | null;
  created_by: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** A pushed authorization request (RFC 9126): its parameters until the authorization they ask for is answered. */
export interface PushedRequestsTable {
  /** SHA-256 of the random part of its request_uri. */
  id: string;
  client_id: string;
  /** The parameters as pushed, a JSON array of [name, value] pairs (repeats kept). */
  params: string;
  created_at: number;
  /** 60 s after the push until a browser opens it at /authorize, then the time left to sign in and consent. */
  expires_at: number;
  /** When /authorize first showed it. */
  opened_at: number | null;
  /** When its authorization was answered (code, tokens, denial, error): it is not usable again. */
  used_at: number | null;
}

/** A user's second factor: a TOTP authenticator (`secret` sealed, `last_step`) or a passkey (the WebAuthn columns). */
export interface UserFactorsTable {
  id: string;
  user_id: string;
  kind: string;
  label: string;
  secret: string | null;
  last_step: number | null;
  credential_id: string | null;
  public_key: string | null;
  counter: number | null;
  transports: string | null;
  created_at: number;
  last_used_at: number | null;
  /** Wrong TOTP codes in a row (reset by a right one or a recovery code). */
  failures: number;
}

export interface RecoveryCodesTable {
  hash: string;
  user_id: string;
  created_at: number;
  used_at: number | null;
}

/** A WebAuthn challenge handed out, by its hash: single use, shared by every instance. */
export interface WebauthnChallengesTable {
  hash: string;
  purpose: string;
  user_id: string | null;
  expires_at: number;
}

export interface EventsTable {
  id: Generated<number>;
  type: string;
  time: number;
  collection: string | null;
  record_id: string | null;
  owner: string | null;
  actor: string | null;
  data: string | null; // JSON text
}

export interface WebhooksTable {
  id: string;
  url: string;
  events: string; // JSON array of event types, [] for all
  collections: string; // JSON array of collection names, [] for all
  secret: string; // whsec_…: the signing key (it must be used, so it cannot be hashed)
  cursor: number; // the last event id queued for delivery
  created_at: number;
  updated_at: number;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  webhook_id: string;
  event_id: number;
  status: string; // pending | succeeded | failed
  attempts: number;
  first_at: number;
  next_at: number;
  lease_until: number;
  lease_owner: string | null;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  webhook_id: string;
  event_id: number;
  attempt: number;
  time: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  outcome: string; // succeeded | failed
}

/** A device authorization request (RFC 8628): codes by their SHA-256, the user's decision, the polls. */
export interface DeviceCodesTable {
  /** SHA-256 of the device code. */
  hash: string;
  /** SHA-256 of the user code, normalized (8 capital letters, no dash). */
  user_code_hash: string;
  client_id: string;
  /** The scope asked for, resolved for the client. */
  scope: string;
  /** Whether the client named a scope (the consent page ticks Write only then). */
  scope_given: number;
  /** Seconds a client waits between polls; slow_down adds 5. */
  poll_interval: number;
  last_polled_at: number | null;
  expires_at: number;
  created_at: number;
  /** null while pending; approved | denied */
  decision: string | null;
  subject: string | null;
  granted_scope: string | null;
  grant_expires_at: number | null;
  /** OpenID Connect: the sign-in behind the approval (the ID token's auth_time, sid, amr). */
  auth_time: number | null;
  sid: string | null;
  amr: string | null;
  used_at: number | null;
  /** RFC 8707: the resources named at /device_authorization (paths under publicUrl, space-separated); null: none named, the resource API. */
  resources: string | null;
  grant_id: string | null;
}

/** An initial access token of dynamic client registration (auth.registration: token). */
export interface RegistrationTokensTable {
  /** The public selector (the part of the token before the dot). */
  id: string;
  /** SHA-256 of the whole token. */
  hash: string;
  created_by: string | null;
  created_at: number;
  expires_at: number;
  /** Registrations it may still make. */
  uses_left: number;
}

/** A client that registered itself (RFC 7591), and what RFC 7592 manages it with. */
export interface ClientRegistrationsTable {
  client_id: string;
  /** SHA-256 of the registration access token. */
  token_hash: string;
  /** token_endpoint_auth_method: none | client_secret_basic | client_secret_post */
  auth_method: string;
  /** JSON array of strings. */
  contacts: string;
  /** Who registered it: `registration` (open) or `registration-token:<id>`. */
  created_by: string | null;
  created_at: number;
}
