import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { Store } from './store.js';
import { sqlOf } from './sql.js';
import { webOrigins } from '../http/origins.js';

// gatehouse's own tables, as ordered migrations. Collection tables follow the config and are
// synchronised by api/store/collection-tables.ts after these have run.

function coreMigrations(t: Store['columnType']): Record<string, Migration> {
  return {
    '0001_core': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('settings')
          .addColumn('key', 'text', (c) => c.primaryKey())
          .addColumn('value', 'text', (c) => c.notNull())
          .addColumn('updated_at', t('integer') as 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('signing_keys')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('secret', 'text', (c) => c.notNull())
          .addColumn('created_at', t('integer') as 'bigint', (c) => c.notNull())
          .addColumn('retired_at', t('integer') as 'bigint')
          .execute();
        await db.schema
          .createTable('users')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('username', 'text', (c) => c.notNull().unique())
          .addColumn('password_hash', 'text', (c) => c.notNull())
          .addColumn('created_at', t('integer') as 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('clients')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('secret_hash', 'text')
          .addColumn('public', 'integer', (c) => c.notNull())
          .addColumn('redirect_uris', 'text', (c) => c.notNull())
          .addColumn('grant_types', 'text', (c) => c.notNull())
          .addColumn('scope', 'text')
          .addColumn('token_type', 'text', (c) => c.notNull())
          .addColumn('created_at', t('integer') as 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('grants')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('client_id', 'text', (c) => c.notNull())
          .addColumn('subject', 'text', (c) => c.notNull())
          .addColumn('scope', 'text', (c) => c.notNull())
          .addColumn('expires_at', t('integer') as 'bigint', (c) => c.notNull())
          .addColumn('revoked_at', t('integer') as 'bigint')
          .addColumn('revoked_reason', 'text')
          .addColumn('created_at', t('integer') as 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('authorization_codes')
          .addColumn('hash', 'text', (c) => c.primaryKey())
          .addColumn('client_id', 'text', (c) => c.notNull())
          .addColumn('subject', 'text', (c) => c.notNull())
          .addColumn('redirect_uri', 'text', (c) => c.notNull())
          .addColumn('redirect_uri_given', 'integer', (c) => c.notNull())
          .addColumn('scope', 'text', (c) => c.notNull())
          .addColumn('requested_scope', 'text', (c) => c.notNull())
          .addColumn('grant_expires_at', t('integer') as 'bigint', (c) => c.notNull())
          .addColumn('code_challenge', 'text')
          .addColumn('code_challenge_method', 'text')
          .addColumn('expires_at', t('integer') as 'bigint', (c) => c.notNull())
          .addColumn('used_at', t('integer') as 'bigint')
          .addColumn('grant_id', 'text')
          .addColumn('created_at', t('integer') as 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('access_tokens')
          .addColumn('hash', 'text', (c) => c.primaryKey())
          .addColumn('grant_id', 'text')
          .addColumn('client_id', 'text', (c) => c.notNull())
          .addColumn('subject', 'text', (c) => c.notNull())
          .addColumn('scope', 'text', (c) => c.notNull())
          .addColumn('token_type', 'text', (c) => c.notNull())
          .addColumn('key_id', 'text')
          .addColumn('expires_at', t('integer') as 'bigint', (c) => c.notNull())
          .addColumn('revoked_at', t('integer') as 'bigint')
          .addColumn('created_at', t('integer') as 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('access_tokens_grant').on('access_tokens').column('grant_id').execute();
        await db.schema.createIndex('access_tokens_expiry').on('access_tokens').column('expires_at').execute();
        await db.schema
          .createTable('refresh_tokens')
          .addColumn('hash', 'text', (c) => c.primaryKey())
          .addColumn('grant_id', 'text', (c) => c.notNull())
          .addColumn('client_id', 'text', (c) => c.notNull())
          .addColumn('scope', 'text', (c) => c.notNull())
          .addColumn('expires_at', t('integer') as 'bigint', (c) => c.notNull())
          .addColumn('used_at', t('integer') as 'bigint')
          .addColumn('created_at', t('integer') as 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('refresh_tokens_grant').on('refresh_tokens').column('grant_id').execute();
        await db.schema
          .createTable('sessions')
          .addColumn('hash', 'text', (c) => c.primaryKey())
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('expires_at', t('integer') as 'bigint', (c) => c.notNull())
          .addColumn('created_at', t('integer') as 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('counters')
          .addColumn('key', 'text', (c) => c.primaryKey())
          .addColumn('count', 'integer', (c) => c.notNull())
          .addColumn('window_start', t('integer') as 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('nonces')
          .addColumn('key', 'text', (c) => c.primaryKey())
          .addColumn('expires_at', t('integer') as 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('jobs')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('subject', 'text', (c) => c.notNull())
          .addColumn('client_id', 'text', (c) => c.notNull())
          .addColumn('collection', 'text', (c) => c.notNull())
          .addColumn('parent_id', 'text')
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('total', 'integer', (c) => c.notNull())
          .addColumn('processed', 'integer', (c) => c.notNull())
          .addColumn('items', 'text', (c) => c.notNull())
          .addColumn('results', 'text', (c) => c.notNull())
          .addColumn('lease_until', t('integer') as 'bigint', (c) => c.notNull())
          .addColumn('created_at', t('integer') as 'bigint', (c) => c.notNull())
          .addColumn('updated_at', t('integer') as 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('jobs_pending').on('jobs').columns(['status', 'lease_until']).execute();
        await db.schema
          .createTable('idempotency_keys')
          .addColumn('subject', 'text', (c) => c.notNull())
          .addColumn('key', 'text', (c) => c.notNull())
          .addColumn('collection', 'text', (c) => c.notNull())
          .addColumn('body_hash', 'text', (c) => c.notNull())
          .addColumn('record_id', 'text', (c) => c.notNull())
          .addColumn('created_at', t('integer') as 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('idempotency_keys_pk', ['subject', 'key'])
          .execute();
        await db.schema
          .createTable('tombstones')
          .addColumn('collection', 'text', (c) => c.notNull())
          .addColumn('id', 'text', (c) => c.notNull())
          .addColumn('deleted_at', t('integer') as 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('tombstones_pk', ['collection', 'id'])
          .execute();
        await db.schema
          .createTable('attachments')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('collection', 'text', (c) => c.notNull())
          .addColumn('record_id', 'text', (c) => c.notNull())
          .addColumn('filename', 'text', (c) => c.notNull())
          .addColumn('content_type', 'text', (c) => c.notNull())
          .addColumn('size', t('integer') as 'bigint', (c) => c.notNull())
          .addColumn('sha256', 'text', (c) => c.notNull())
          .addColumn('data', t('blob') as 'blob', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('attachments_record').on('attachments').columns(['collection', 'record_id']).execute();
      },
    },
    // client_credentials tokens have no grant: index only the tokens that do (cheaper inserts).
    '0002_partial_token_grant_index': {
      async up(db: Kysely<any>) {
        await db.schema.dropIndex('access_tokens_grant').execute();
        await db.schema
          .createIndex('access_tokens_grant')
          .on('access_tokens')
          .column('grant_id')
          .where(sql.ref('grant_id'), 'is not', null)
          .execute();
      },
    },
    // Access tokens keyed by their selector (time-ordered) instead of their hash (random): issuing
    // appends to the primary key. Existing tokens keep working: their key is their hash.
    '0003_access_token_selector': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('access_tokens_next')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('hash', 'text', (c) => c.notNull())
          .addColumn('grant_id', 'text')
          .addColumn('client_id', 'text', (c) => c.notNull())
          .addColumn('subject', 'text', (c) => c.notNull())
          .addColumn('scope', 'text', (c) => c.notNull())
          .addColumn('token_type', 'text', (c) => c.notNull())
          .addColumn('key_id', 'text')
          .addColumn('expires_at', t('integer') as 'bigint', (c) => c.notNull())
          .addColumn('revoked_at', t('integer') as 'bigint')
          .addColumn('created_at', t('integer') as 'bigint', (c) => c.notNull())
          .execute();
        const columns = ['hash', 'grant_id', 'client_id', 'subject', 'scope', 'token_type', 'key_id', 'expires_at', 'revoked_at', 'created_at'];
        await db
          .insertInto('access_tokens_next')
          .columns(['id', ...columns])
          .expression(db.selectFrom('access_tokens').select([sql.ref('hash').as('id'), ...columns]))
          .execute();
        await db.schema.dropTable('access_tokens').execute();
        await db.schema.alterTable('access_tokens_next').renameTo('access_tokens').execute();
        await db.schema.createIndex('access_tokens_grant').on('access_tokens').column('grant_id').where(sql.ref('grant_id'), 'is not', null).execute();
        await db.schema.createIndex('access_tokens_expiry').on('access_tokens').column('expires_at').execute();
      },
    },
    // Admins (the `admin` scope), and the indexes that listing and revoking by user or client use.
    '0004_admins_and_holder_indexes': {
      async up(db: Kysely<any>) {
        await db.schema.alterTable('users').addColumn('admin', 'integer', (c) => c.notNull().defaultTo(0)).execute();
        for (const table of ['grants', 'access_tokens', 'authorization_codes'])
          for (const column of ['subject', 'client_id'])
            await db.schema.createIndex(`${table}_${column}`).ifNotExists().on(table).column(column).execute();
        await db.schema.createIndex('sessions_user').ifNotExists().on('sessions').column('user_id').execute();
      },
    },
    // CORS: a client's explicit origins, and every client's web origins in one indexed table.
    '0005_client_origins': {
      async up(db: Kysely<any>) {
        await db.schema.alterTable('clients').addColumn('origins', 'text', (c) => c.notNull().defaultTo('[]')).execute();
        await db.schema
          .createTable('client_origins')
          .addColumn('origin', 'text', (c) => c.notNull())
          .addColumn('client_id', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('client_origins_pk', ['origin', 'client_id'])
          .execute();
        await db.schema.createIndex('client_origins_client').on('client_origins').column('client_id').execute();
        const clients = await db.selectFrom('clients').select(['id', 'redirect_uris']).execute();
        for (const c of clients as { id: string; redirect_uris: string }[])
          for (const origin of webOrigins(JSON.parse(c.redirect_uris) as string[]))
            await db.insertInto('client_origins').values({ origin, client_id: c.id }).execute();
      },
    },
    // The consent page shows a client's home page and whether the operator vouches for it.
    '0006_client_uri_verified': {
      async up(db: Kysely<any>) {
        await db.schema.alterTable('clients').addColumn('uri', 'text').execute();
        await db.schema.alterTable('clients').addColumn('verified', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      },
    },
    // Events (docs/events.md): the outbox, and the webhooks that deliver it.
    '0007_events_and_webhooks': {
      async up(db: Kysely<any>) {
        const int = t('integer') as 'bigint';
        const postgres = int === ('bigint' as string);
        await db.schema
          .createTable('events')
          .addColumn('id', postgres ? 'bigserial' : 'integer', (c) => (postgres ? c.primaryKey() : c.primaryKey().autoIncrement()))
          .addColumn('type', 'text', (c) => c.notNull())
          .addColumn('time', int, (c) => c.notNull())
          .addColumn('collection', 'text')
          .addColumn('record_id', 'text')
          .addColumn('owner', 'text')
          .addColumn('actor', 'text')
          .addColumn('data', 'text')
          .execute();
        await db.schema
          .createTable('webhooks')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('url', 'text', (c) => c.notNull())
          .addColumn('events', 'text', (c) => c.notNull())
          .addColumn('collections', 'text', (c) => c.notNull())
          .addColumn('secret', 'text', (c) => c.notNull())
          .addColumn('cursor', int, (c) => c.notNull())
          .addColumn('created_at', int, (c) => c.notNull())
          .addColumn('updated_at', int, (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('webhook_deliveries')
          .addColumn('id', postgres ? 'bigserial' : 'integer', (c) => (postgres ? c.primaryKey() : c.primaryKey().autoIncrement()))
          .addColumn('webhook_id', 'text', (c) => c.notNull())
          .addColumn('event_id', int, (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('attempts', 'integer', (c) => c.notNull())
          .addColumn('first_at', int, (c) => c.notNull())
          .addColumn('next_at', int, (c) => c.notNull())
          .addColumn('lease_until', int, (c) => c.notNull())
          .addColumn('lease_owner', 'text')
          .addUniqueConstraint('webhook_deliveries_event', ['webhook_id', 'event_id'])
          .execute();
        await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_at']).execute();
        await db.schema
          .createTable('webhook_attempts')
          .addColumn('id', postgres ? 'bigserial' : 'integer', (c) => (postgres ? c.primaryKey() : c.primaryKey().autoIncrement()))
          .addColumn('webhook_id', 'text', (c) => c.notNull())
          .addColumn('event_id', int, (c) => c.notNull())
          .addColumn('attempt', 'integer', (c) => c.notNull())
          .addColumn('time', int, (c) => c.notNull())
          .addColumn('status_code', 'integer')
          .addColumn('duration_ms', 'integer', (c) => c.notNull())
          .addColumn('error', 'text')
          .addColumn('outcome', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('webhook_attempts_webhook').on('webhook_attempts').columns(['webhook_id', 'id']).execute();
        await db.schema.createIndex('webhook_attempts_time').on('webhook_attempts').column('time').execute();
      },
    },
    // Attachments in chunks (docs/api.md#attachments): an upload is stored piece by piece from its spooled file,
    // never held whole in memory. Rows from before keep their bytes in attachments.data.
    '0008_attachment_chunks': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('attachment_chunks')
          .addColumn('attachment_id', 'text', (c) => c.notNull())
          .addColumn('seq', 'integer', (c) => c.notNull())
          .addColumn('data', t('blob') as 'blob', (c) => c.notNull())
          .addPrimaryKeyConstraint('attachment_chunks_pk', ['attachment_id', 'seq'])
          .execute();
      },
    },
    // A client registered as a resource server may introspect every client's tokens
    // (docs/oauth.md, introspection); a client may be held to PKCE even when confidential.
    '0009_client_introspect_require_pkce': {
      async up(db: Kysely<any>) {
        await db.schema.alterTable('clients').addColumn('introspect', 'integer', (c) => c.notNull().defaultTo(0)).execute();
        await db.schema.alterTable('clients').addColumn('require_pkce', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      },
    },
    // One grant per user and app (docs/oauth.md): a live
    // (unrevoked) grant is unique per subject and client. Duplicates made before are merged into
    // the one that lasts longest: it takes the scopes of the live ones, the others' tokens and codes
    // move to it (nothing a user holds stops working), and the others are retired.
    '0010_one_grant_per_user_and_client': {
      async up(db: Kysely<any>) {
        const now = Date.now();
        const rows = (await db
          .selectFrom('grants')
          .select(['id', 'subject', 'client_id', 'scope', 'expires_at', 'created_at'])
          .where('revoked_at', 'is', null)
          .orderBy('expires_at', 'desc')
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .execute()) as { id: string; subject: string; client_id: string; scope: string; expires_at: number | string; created_at: number | string }[];
        const groups = new Map<string, typeof rows>();
        for (const r of rows) {
          const key = JSON.stringify([r.subject, r.client_id]);
          groups.set(key, [...(groups.get(key) ?? []), r]);
        }
        for (const [keep, ...others] of groups.values()) {
          if (others.length === 0) continue;
          const scope = [...new Set([keep, ...others].filter((g) => g === keep || Number(g.expires_at) > now).flatMap((g) => g.scope.split(' ').filter(Boolean)))];
          await db.updateTable('grants').set({ scope: scope.join(' ') }).where('id', '=', keep.id).execute();
          const ids = others.map((g) => g.id);
          for (const table of ['access_tokens', 'refresh_tokens', 'authorization_codes'])
            await db.updateTable(table).set({ grant_id: keep.id }).where('grant_id', 'in', ids).execute();
          await db.updateTable('grants').set({ revoked_at: now, revoked_reason: `merged into ${keep.id}` }).where('id', 'in', ids).execute();
        }
        await db.schema
          .createIndex('grants_one_live')
          .unique()
          .on('grants')
          .columns(['subject', 'client_id'])
          .where(sql.ref('revoked_at'), 'is', null)
          .execute();
      },
    },
    // OpenID Connect (docs/oauth.md, Sign in with gatehouse): who a user is (e-mail, name), what a
    // client registered for its ID tokens and logout, what a code and a refresh token carry into
    // an ID token (nonce, the sign-in's time and session), the session's public id (`sid`), and
    // the asymmetric keys that sign ID tokens (the private half sealed, platform/crypto/sealed.ts).
    '0011_openid_connect': {
      async up(db: Kysely<any>) {
        const ms = t('integer') as 'bigint';
        for (const [name, type] of [
          ['email', 'text'],
          ['name', 'text'],
          ['updated_at', ms],
        ] as const)
          await db.schema.alterTable('users').addColumn(name, type).execute();
        await db.schema.alterTable('users').addColumn('email_verified', 'integer', (c) => c.notNull().defaultTo(0)).execute();
        await db.schema.alterTable('clients').addColumn('id_token_signed_response_alg', 'text', (c) => c.notNull().defaultTo('RS256')).execute();
        await db.schema.alterTable('clients').addColumn('post_logout_redirect_uris', 'text', (c) => c.notNull().defaultTo('[]')).execute();
        for (const table of ['authorization_codes', 'refresh_tokens']) {
          await db.schema.alterTable(table).addColumn('auth_time', ms).execute();
          await db.schema.alterTable(table).addColumn('sid', 'text').execute();
          await db.schema.alterTable(table).addColumn('amr', 'text').execute();
        }
        await db.schema.alterTable('authorization_codes').addColumn('nonce', 'text').execute();
        await db.schema.alterTable('sessions').addColumn('sid', 'text').execute();
        // How the session's sign-in was made (RFC 8176 values, JSON): a password-only session
        // does not satisfy a user who has (or must have) a second factor.
        await db.schema.alterTable('sessions').addColumn('amr', 'text').execute();
        await db.schema
          .createTable('id_token_keys')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('alg', 'text', (c) => c.notNull())
          .addColumn('private_key', 'text', (c) => c.notNull())
          .addColumn('public_jwk', 'text', (c) => c.notNull())
          .addColumn('created_at', ms, (c) => c.notNull())
          .addColumn('retired_at', ms)
          .execute();
        // One current key per algorithm, whoever makes it.
        await db.schema.createIndex('id_token_keys_one_current').unique().on('id_token_keys').column('alg').where(sql.ref('retired_at'), 'is', null).execute();
        // RP-initiated logout ends a session by its public id.
        await db.schema.createIndex('sessions_sid').on('sessions').column('sid').execute();
      },
    },
    // Second factors (docs/oauth.md, Second factors). '0011' is left to OpenID Connect: Kysely runs
    // migrations in name order. A TOTP secret is stored sealed (platform/crypto/sealed.ts, the row's
    // id as context); `last_step` is the last time step whose code was accepted (each code once).
    // A recovery code and a WebAuthn challenge are stored by their SHA-256 only.
    '0012_second_factors': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('user_factors')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('kind', 'text', (c) => c.notNull())
          .addColumn('label', 'text', (c) => c.notNull())
          .addColumn('secret', 'text')
          .addColumn('last_step', t('integer') as 'bigint')
          .addColumn('credential_id', 'text', (c) => c.unique())
          .addColumn('public_key', 'text')
          .addColumn('counter', t('integer') as 'bigint')
          .addColumn('transports', 'text')
          .addColumn('created_at', t('integer') as 'bigint', (c) => c.notNull())
          .addColumn('last_used_at', t('integer') as 'bigint')
          // Wrong codes in a row (TOTP): past a limit, only a recovery code or a passkey signs in.
          .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
        await db.schema.createIndex('user_factors_user').on('user_factors').column('user_id').execute();
        await db.schema
          .createTable('recovery_codes')
          .addColumn('hash', 'text', (c) => c.primaryKey())
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('created_at', t('integer') as 'bigint', (c) => c.notNull())
          .addColumn('used_at', t('integer') as 'bigint')
          .execute();
        await db.schema.createIndex('recovery_codes_user').on('recovery_codes').column('user_id').execute();
        await db.schema
          .createTable('webauthn_challenges')
          .addColumn('hash', 'text', (c) => c.primaryKey())
          .addColumn('purpose', 'text', (c) => c.notNull())
          .addColumn('user_id', 'text')
          .addColumn('expires_at', t('integer') as 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('webauthn_challenges_expiry').on('webauthn_challenges').column('expires_at').execute();
        // One authenticator app per user, however two set-ups race.
        await db.schema.createIndex('user_factors_one_totp').unique().on('user_factors').column('user_id').where(sql.ref('kind'), '=', sql.lit('totp')).execute();
      },
    },
    // The user's lifecycle by e-mail (docs/users.md): the mail outbox (a mail is queued in the
    // transaction of the change it tells about and sent after the commit, retried with backoff; its
    // parts are sealed, platform/crypto/sealed.ts, and emptied once sent), the per-address mail
    // quota, and the single-use links (verification, reset, invitation, e-mail change: SHA-256 only).
    '0013_user_lifecycle': {
      async up(db: Kysely<any>) {
        const ms = t('integer') as 'bigint';
        await db.schema
          .createTable('mail_outbox')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('kind', 'text', (c) => c.notNull())
          .addColumn('recipient', 'text', (c) => c.notNull())
          .addColumn('subject', 'text', (c) => c.notNull())
          .addColumn('body', 'text')
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('created_at', ms, (c) => c.notNull())
          .addColumn('next_at', ms, (c) => c.notNull())
          .addColumn('lease_until', ms, (c) => c.notNull().defaultTo(0))
          .addColumn('lease_owner', 'text')
          .addColumn('sent_at', ms)
          .addColumn('last_error', 'text')
          .execute();
        await db.schema.createIndex('mail_outbox_due').on('mail_outbox').columns(['status', 'next_at']).execute();
        await db.schema.createIndex('mail_outbox_created').on('mail_outbox').column('created_at').execute();
        await db.schema
          .createTable('mail_quota')
          .addColumn('recipient', 'text', (c) => c.primaryKey())
          .addColumn('window_start', ms, (c) => c.notNull())
          .addColumn('count', 'integer', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('user_tokens')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('hash', 'text', (c) => c.notNull())
          .addColumn('purpose', 'text', (c) => c.notNull())
          .addColumn('user_id', 'text')
          .addColumn('email', 'text')
          .addColumn('created_by', 'text')
          .addColumn('created_at', ms, (c) => c.notNull())
          .addColumn('expires_at', ms, (c) => c.notNull())
          .addColumn('used_at', ms)
          .execute();
        await db.schema.createIndex('user_tokens_user').on('user_tokens').columns(['user_id', 'purpose']).execute();
        await db.schema.createIndex('user_tokens_email').on('user_tokens').columns(['purpose', 'email']).execute();
        await db.schema.createIndex('user_tokens_expiry').on('user_tokens').column('expires_at').execute();
        // A password reset by e-mail address and "is this address taken" (sign-up) look users up by it, in any case.
        await db.schema.createIndex('users_email').on('users').expression(sql`lower(email)`).execute();
        // Made by sign-up: cannot sign in until the address is verified (auth.requireVerifiedEmail).
        // Users made by an operator never wait for a link.
        await db.schema.alterTable('users').addColumn('verification_pending', 'integer', (c) => c.notNull().defaultTo(0)).execute();
        // The sweeper removes sign-ups never verified (docs/users.md).
        await db.schema.createIndex('users_verification_pending').on('users').columns(['verification_pending', 'created_at']).execute();
      },
    },
    '0014_client_registration': {
      async up(db: Kysely<any>) {
        const ms = t('integer') as 'bigint';
        // Initial access tokens of dynamic client registration (auth.registration: token): only the
        // SHA-256 of the token; `id` is its public selector (the part before the dot).
        await db.schema
          .createTable('registration_tokens')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('hash', 'text', (c) => c.notNull())
          .addColumn('created_by', 'text')
          .addColumn('created_at', ms, (c) => c.notNull())
          .addColumn('expires_at', ms, (c) => c.notNull())
          .addColumn('uses_left', 'integer', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('registration_tokens_expiry').on('registration_tokens').column('expires_at').execute();
        // A client that registered itself (RFC 7591): the SHA-256 of its registration access token
        // (RFC 7592) and the metadata the clients table has no column for.
        await db.schema
          .createTable('client_registrations')
          .addColumn('client_id', 'text', (c) => c.primaryKey())
          .addColumn('token_hash', 'text', (c) => c.notNull())
          .addColumn('auth_method', 'text', (c) => c.notNull())
          .addColumn('contacts', 'text', (c) => c.notNull())
          .addColumn('created_by', 'text')
          .addColumn('created_at', ms, (c) => c.notNull())
          .execute();
      },
    },
    // The device authorization grant (RFC 8628, docs/oauth.md#devices-and-clis): a device code and
    // its user code, both by their SHA-256 only; the user's decision, the poll bookkeeping (the last
    // poll and the interval, raised by slow_down) and the redemption are columns of the one row, so
    // that any instance answers any poll.
    '0015_device_authorization': {
      async up(db: Kysely<any>) {
        const ms = t('integer') as 'bigint';
        await db.schema
          .createTable('device_codes')
          .addColumn('hash', 'text', (c) => c.primaryKey())
          .addColumn('user_code_hash', 'text', (c) => c.notNull().unique())
          .addColumn('client_id', 'text', (c) => c.notNull())
          .addColumn('scope', 'text', (c) => c.notNull())
          .addColumn('scope_given', 'integer', (c) => c.notNull())
          .addColumn('poll_interval', 'integer', (c) => c.notNull())
          .addColumn('last_polled_at', ms)
          .addColumn('expires_at', ms, (c) => c.notNull())
          .addColumn('created_at', ms, (c) => c.notNull())
          .addColumn('decision', 'text')
          .addColumn('subject', 'text')
          .addColumn('granted_scope', 'text')
          .addColumn('grant_expires_at', ms)
          .addColumn('auth_time', ms)
          .addColumn('sid', 'text')
          .addColumn('amr', 'text')
          .addColumn('used_at', ms)
          .addColumn('grant_id', 'text')
          // RFC 8707: the resources named at /device_authorization (paths, space-separated); null: none, the resource API.
          .addColumn('resources', 'text')
          .execute();
        await db.schema.createIndex('device_codes_expiry').on('device_codes').column('expires_at').execute();
      },
    },
    // DPoP (RFC 9449, docs/oauth.md#proof-of-possession): the JWK SHA-256 thumbprint an access
    // token — and a public client's refresh token — is bound to, and clients that must send a proof.
    // The proofs' jti are kept in `nonces`, the replay cache MAC already uses.
    '0016_dpop': {
      async up(db: Kysely<any>) {
        await db.schema.alterTable('access_tokens').addColumn('jkt', 'text').execute();
        await db.schema.alterTable('refresh_tokens').addColumn('jkt', 'text').execute();
        await db.schema.alterTable('clients').addColumn('dpop_bound', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      },
    },
    '0017_resource_indicators': {
      // RFC 8707 (docs/oauth.md#resource-indicators): an access token's audience, and the resources
      // a code or refresh token may be redeemed for — each a path under publicUrl (`/v1`, `/mcp`;
      // contract/resources.ts); null on rows from before: the resource API.
      async up(db: Kysely<any>) {
        await db.schema.alterTable('access_tokens').addColumn('audience', 'text').execute();
        await db.schema.alterTable('authorization_codes').addColumn('resources', 'text').execute();
        await db.schema.alterTable('refresh_tokens').addColumn('resources', 'text').execute();
      },
    },
    '0018_pushed_authorization_requests': {
      async up(db: Kysely<any>) {
        const ms = t('integer') as 'bigint';
        // RFC 9126: a client registered --require-par sends its authorization requests through {auth_url}/par only.
        await db.schema.alterTable('clients').addColumn('require_par', 'integer', (c) => c.notNull().defaultTo(0)).execute();
        await db.schema
          .createTable('pushed_requests')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('client_id', 'text', (c) => c.notNull())
          .addColumn('params', 'text', (c) => c.notNull())
          .addColumn('created_at', ms, (c) => c.notNull())
          .addColumn('expires_at', ms, (c) => c.notNull())
          .addColumn('opened_at', ms)
          .addColumn('used_at', ms)
          .execute();
        await db.schema.createIndex('pushed_requests_expiry').on('pushed_requests').column('expires_at').execute();
      },
    },
    '0019_mcp_sessions': {
      // MCP resource subscriptions (docs/mcp.md#following-changes): a session's row once it
      // subscribes or opens its stream (the id is the random part of its self-verifying session id;
      // `subscriptions` counts its rows below, so the limit holds under concurrent subscribes;
      // `stream` names its current GET stream), and one row per record it follows.
      async up(db: Kysely<any>) {
        const ms = t('integer') as 'bigint';
        await db.schema
          .createTable('mcp_sessions')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('subject', 'text', (c) => c.notNull())
          .addColumn('client_id', 'text', (c) => c.notNull())
          .addColumn('subscriptions', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('stream', 'text')
          .addColumn('expires_at', ms, (c) => c.notNull())
          .execute();
        await db.schema.createIndex('mcp_sessions_expiry').on('mcp_sessions').column('expires_at').execute();
        // A user's client keeps its newest sessions only (api/store/mcp-sessions.ts).
        await db.schema.createIndex('mcp_sessions_owner').on('mcp_sessions').columns(['subject', 'client_id', 'expires_at']).execute();
        await db.schema
          .createTable('mcp_subscriptions')
          .addColumn('session_id', 'text', (c) => c.notNull())
          .addColumn('collection', 'text', (c) => c.notNull())
          .addColumn('record_id', 'text', (c) => c.notNull())
          .addColumn('uri', 'text', (c) => c.notNull())
          .addColumn('created_at', ms, (c) => c.notNull())
          .addPrimaryKeyConstraint('mcp_subscriptions_pk', ['session_id', 'collection', 'record_id'])
          .execute();
        await db.schema.createIndex('mcp_subscriptions_record').on('mcp_subscriptions').columns(['collection', 'record_id']).execute();
      },
    },
  };
}

/** The names of gatehouse's migrations, in order (a restore refuses a backup that has others). */
export function coreMigrationNames(): string[] {
  return Object.keys(coreMigrations(() => 'text')); // the column types are only asked for when migrating
}

function migratorOf(store: Store): Migrator {
  const migrations = coreMigrations(store.columnType);
  const provider: MigrationProvider = { getMigrations: async () => migrations };
  return new Migrator({
    db: sqlOf(store),
    provider,
    migrationTableName: 'gatehouse_migrations',
    migrationLockTableName: 'gatehouse_migrations_lock',
  });
}

/** Whether gatehouse has made this database (its first migration has run); asking creates nothing. */
export async function isGatehouseDatabase(store: Store): Promise<boolean> {
  return (await migratorOf(store).getMigrations()).some((m) => m.executedAt !== undefined);
}

/** Applies gatehouse's migrations up to `target` (default: all of them); returns the names applied. */
export async function migrateCore(store: Store, target?: string): Promise<string[]> {
  const migrator = migratorOf(store);
  const { error, results } = target === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(target);
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
