import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../contract/context.js';
import { ADMIN_SCOPE } from '../contract/scope-name.js';
import { ApiError, badRequest, forbidden, notFound } from '../platform/http/errors.js';
import { routeMethods } from '../platform/http/routes.js';
import { schemaValidator } from '../platform/http/schema-validator.js';
import { absentBodyIsEmpty, collectOperations, pathItems, type Operation } from '../platform/http/openapi.js';
import { readMaintenance, writeMaintenance } from '../platform/store/settings.js';
import { Authenticator } from '../api/access/authenticate.js';
import { describeClient, findClient, listClients, registerClient, removeClient, rotateClientSecret, updateClient, type ClientChanges } from '../authserver/model/clients.js';
import { changePassword, createUser, describeUser, findUserByUsername, listUsers, passwordProblem, removeUser, setUserAdmin, updateProfile, userSubject, type User } from '../authserver/model/users.js';
import { findGrant, listGrants, revokeGrant } from '../authserver/tokens.js';
import { resetSecondFactors } from '../authserver/model/factors.js';
import { addWebhook, describeWebhook, findWebhook, listWebhooks, removeWebhook, updateWebhook, webhookDeliveries } from '../webhooks/webhooks.js';
import { EVENT_TYPES, EventSelection, eventJson } from '../contract/event-bus.js';
import { feedPage, nextLink, parseFeedQuery, requireRetained, streamEvents, wantsStream } from '../api/events.js';
import { feedParameters } from '../api/parameters.js';
import { requireJsonAccept } from '../platform/http/negotiation.js';
import * as S from './schemas.js';
import { ADMIN_API, actorOf, model, op, userByKey, type Created } from './api-kit.js';
import { registerLifecycleRoutes } from './invitations.js';
import { registerRegistrationTokenRoutes } from './registration-tokens.js';

// The admin API, {base_url}/admin/v1 (docs/admin.md): clients, users, invitations (invitations.ts),
// grants, webhooks, events and maintenance with the JSON conventions of docs/api.md. A bearer token with the `admin` scope is
// required (no token 401, another scope 403). Each route's schema (schemas.ts) is both what Fastify
// validates and what the OpenAPI document says; handlers call the authorization server's model
// (the same functions as the CLI) and answer; the model's rule errors become 400 with `detail` per field.

export { ADMIN_API };

/**
 * Registers the admin API; returns the OpenAPI path items of its operations, generated from the
 * route schemas (for the resource API's document, `/v1/openapi.json`).
 */
export function registerAdminApi(app: FastifyInstance, ctx: AppContext): () => Record<string, unknown> {
  const authenticator = new Authenticator(ctx);
  const url = (path: string) => `${ctx.config.publicUrl}${ADMIN_API}${path}`;
  // The operators' way in stays open in maintenance mode.
  const options = { config: { alwaysAvailable: true } };
  let operations: readonly Operation[] = [];

  app.register(async (admin) => {
    operations = collectOperations(admin);
    admin.setValidatorCompiler(schemaValidator());
    // A response schema documents an answer; it is sent as it is (JSON.stringify), never trimmed.
    admin.setSerializerCompiler(() => (data) => JSON.stringify(data));
    admin.decorateRequest('admin', null);
    admin.decorateRequest('macBodyHash', null);
    admin.addHook('onRequest', async (request) => {
      const who = await authenticator.identify(request);
      if (who instanceof ApiError) throw who;
      if (!who.scopes.has(ADMIN_SCOPE)) throw forbidden('The admin API needs the admin scope', { scope: `requires ${ADMIN_SCOPE}` });
      request.admin = who;
    });
    // Before the schema is checked: a body that does not match its MAC is refused whatever it holds.
    admin.addHook('preValidation', (request, _reply, done) => done(authenticator.checkBodyHash(request) ?? undefined));

    const created: Created = (reply, path, value) => reply.code(201).header('location', url(path)).send(value);

    routeMethods(
      admin,
      `${ADMIN_API}/clients`,
      {
        GET: {
          schema: op({ operationId: 'admin_list_clients', summary: 'List the clients (never their secrets)', response: S.answers({ 200: ['OK', Type.Array(S.Client)] }, 401, 403) }),
          handler: async () => (await listClients(ctx)).map(describeClient),
        },
        POST: {
          schema: op({ operationId: 'admin_create_client', summary: 'Register a client; the secret is shown this once', body: S.NewClient, response: S.answers({ 201: ['Created (Location: its URL)', S.Client] }, 400, 401, 403, 409) }),
          handler: async (request, reply) => {
            const b = request.body as S.NewClient;
            const { client, secret } = await model(() =>
              registerClient(ctx, {
                id: b.client_id,
                name: b.name,
                public: b.public === true,
                secret: b.client_secret,
                redirectUris: b.redirect_uris ?? [],
                grantTypes: b.grant_types ?? [],
                scope: b.scope ?? null,
                tokenType: b.token_type,
                origins: b.origins ?? [],
                uri: b.uri ?? null,
                verified: b.verified === true,
                introspect: b.introspect === true,
                requirePkce: b.require_pkce === true,
                requirePar: b.require_pushed_authorization_requests === true,
                dpopBound: b.dpop_bound_access_tokens === true,
                postLogoutRedirectUris: b.post_logout_redirect_uris ?? [],
                idTokenSignedResponseAlg: b.id_token_signed_response_alg,
              }, actorOf(request)),
            );
            return created(reply, `/clients/${encodeURIComponent(client.id)}`, { ...describeClient(client), ...(secret === null ? {} : { client_secret: secret }) });
          },
        },
      },
      options,
    );

    const clientOr404 = async (request: FastifyRequest) => {
      const client = await findClient(ctx, (request.params as { id: string }).id, true);
      if (!client) throw notFound('No such client', { client_id: 'does not exist' });
      return client;
    };
    routeMethods(
      admin,
      `${ADMIN_API}/clients/:id`,
      {
        GET: {
          schema: op({ operationId: 'admin_get_client', summary: 'One client', params: S.IdParam, response: S.answers({ 200: ['OK', S.Client] }, 401, 403, 404) }),
          handler: async (request) => describeClient(await clientOr404(request)),
        },
        PATCH: {
          schema: op({
            operationId: 'admin_update_client',
            summary: 'Change name, redirect URIs, grants, scope or token type (the registration rules apply)',
            params: S.IdParam,
            body: S.ClientChanges,
            response: S.answers({ 200: ['OK', S.Client] }, 400, 401, 403, 404),
          }),
          handler: async (request) => {
            const b = request.body as S.ClientChanges;
            const changes: ClientChanges = {
              name: b.name,
              redirectUris: b.redirect_uris,
              grantTypes: b.grant_types,
              scope: b.scope,
              tokenType: b.token_type,
              origins: b.origins,
              uri: b.uri,
              verified: b.verified,
              introspect: b.introspect,
              requirePkce: b.require_pkce,
              requirePar: b.require_pushed_authorization_requests,
              dpopBound: b.dpop_bound_access_tokens,
              postLogoutRedirectUris: b.post_logout_redirect_uris,
              idTokenSignedResponseAlg: b.id_token_signed_response_alg,
            };
            const updated = await model(() => updateClient(ctx, (request.params as { id: string }).id, changes, actorOf(request)));
            if (!updated) throw notFound('No such client', { client_id: 'does not exist' });
            return describeClient(updated);
          },
        },
        DELETE: {
          schema: op({ operationId: 'admin_delete_client', summary: 'Remove a client: its grants and tokens end', params: S.IdParam, response: S.answers({ 204: ['Done'] }, 401, 403, 404) }),
          handler: async (request, reply) => {
            const revoked = await removeClient(ctx, (request.params as { id: string }).id, actorOf(request));
            if (!revoked) throw notFound('No such client', { client_id: 'does not exist' });
            return reply.code(204).send();
          },
        },
      },
      options,
    );
    routeMethods(
      admin,
      `${ADMIN_API}/clients/:id/secret`,
      {
        POST: {
          schema: op({
            operationId: 'admin_rotate_client_secret',
            summary: 'A new secret, shown this once; the old one stops working',
            params: S.IdParam,
            body: S.SecretRotation,
            response: S.answers({ 200: ['OK', S.Client] }, 400, 401, 403, 404),
          }),
          // No body: generate one.
          preValidation: absentBodyIsEmpty,
          handler: async (request) => {
            const b = request.body as S.SecretRotation;
            const rotated = await model(() => rotateClientSecret(ctx, (request.params as { id: string }).id, b.client_secret, actorOf(request)));
            if (!rotated) throw notFound('No such client', { client_id: 'does not exist' });
            return { ...describeClient(rotated.client), client_secret: rotated.secret };
          },
        },
      },
      options,
    );

    routeMethods(
      admin,
      `${ADMIN_API}/users`,
      {
        GET: {
          schema: op({ operationId: 'admin_list_users', summary: 'List the users', response: S.answers({ 200: ['OK', Type.Array(S.User)] }, 401, 403) }),
          handler: async () => (await listUsers(ctx)).map(describeUser),
        },
        POST: {
          schema: op({ operationId: 'admin_create_user', summary: 'Add a user', body: S.NewUser, response: S.answers({ 201: ['Created (Location: its URL)', S.User] }, 400, 401, 403, 409) }),
          handler: async (request, reply) => {
            const b = request.body as S.NewUser;
            const user = await model(() =>
              createUser(ctx, b.username, b.password, { admin: b.admin === true, email: b.email, emailVerified: b.email_verified, name: b.name }, actorOf(request)),
            );
            return created(reply, `/users/${user.id}`, describeUser(user));
          },
        },
      },
      options,
    );
    routeMethods(
      admin,
      `${ADMIN_API}/users/:user`,
      {
        GET: {
          schema: op({ operationId: 'admin_get_user', summary: 'One user', params: S.UserParam, response: S.answers({ 200: ['OK', S.User] }, 401, 403, 404) }),
          handler: async (request) => describeUser(await userByKey(ctx, (request.params as { user: string }).user)),
        },
        PATCH: {
          schema: op({
            operationId: 'admin_update_user',
            summary: 'Change the password (ends the sign-in sessions), the admin flag, the e-mail address or the name',
            params: S.UserParam,
            body: S.UserChanges,
            response: S.answers({ 200: ['OK', S.User] }, 400, 401, 403, 404),
          }),
          handler: async (request) => {
            const b = request.body as S.UserChanges;
            const user = await userByKey(ctx, (request.params as { user: string }).user);
            // Every value checked before anything changes: a bad one changes nothing.
            const problem = b.password === undefined ? null : passwordProblem(b.password);
            if (problem) throw badRequest(problem, { password: problem });
            let after: User | null = user;
            if (b.email !== undefined || b.email_verified !== undefined || b.name !== undefined)
              after = await model(() => updateProfile(ctx, user.username, { email: b.email, emailVerified: b.email_verified, name: b.name }, actorOf(request)));
            if (b.password !== undefined) after = (await model(() => changePassword(ctx, user.username, b.password!, actorOf(request)))) ?? after;
            if (b.admin !== undefined) after = await setUserAdmin(ctx, user.username, b.admin, actorOf(request));
            return describeUser(after ?? user);
          },
        },
        DELETE: {
          schema: op({ operationId: 'admin_delete_user', summary: 'Remove a user: their grants and tokens end; their records stay', params: S.UserParam, response: S.answers({ 204: ['Done'] }, 401, 403, 404) }),
          handler: async (request, reply) => {
            const user = await userByKey(ctx, (request.params as { user: string }).user);
            await removeUser(ctx, user.username, actorOf(request));
            return reply.code(204).send();
          },
        },
      },
      options,
    );
    routeMethods(
      admin,
      `${ADMIN_API}/users/:user/factors`,
      {
        DELETE: {
          schema: op({
            operationId: 'admin_reset_user_factors',
            summary: "Remove every second factor and recovery code of a user who lost them; their sessions end",
            params: S.UserParam,
            response: S.answers({ 200: ['The user, and how many factors were removed', S.FactorsReset] }, 401, 403, 404),
          }),
          handler: async (request) => {
            const user = await userByKey(ctx, (request.params as { user: string }).user);
            const reset = await resetSecondFactors(ctx, user.username, actorOf(request));
            if (!reset) throw notFound('No such user', { user: 'does not exist' });
            return { ...describeUser(reset.user), factors_removed: reset.factors };
          },
        },
      },
      options,
    );

    registerLifecycleRoutes(admin, ctx, created, options);
    registerRegistrationTokenRoutes(admin, ctx, created, options);

    routeMethods(
      admin,
      `${ADMIN_API}/grants`,
      {
        GET: {
          schema: op({ operationId: 'admin_list_grants', summary: 'The live grants, newest first', querystring: S.GrantFilter, response: S.answers({ 200: ['OK', Type.Array(S.Grant)] }, 400, 401, 403) }),
          handler: async (request) => {
            const q = request.query as S.GrantFilter;
            const filter: { subject?: string; clientId?: string } = {};
            if (q.user !== undefined) {
              const user = await findUserByUsername(ctx, q.user);
              if (!user) throw badRequest('No such user', { user: 'no user has this username' });
              filter.subject = userSubject(user.id);
            }
            if (q.client !== undefined) filter.clientId = q.client;
            return listGrants(ctx, filter);
          },
        },
      },
      options,
    );
    routeMethods(
      admin,
      `${ADMIN_API}/grants/:id`,
      {
        DELETE: {
          schema: op({ operationId: 'admin_revoke_grant', summary: 'Revoke a grant and its tokens (every instance within a second)', params: S.IdParam, response: S.answers({ 204: ['Done'] }, 401, 403, 404) }),
          handler: async (request, reply) => {
            const { id } = request.params as { id: string };
            const grant = await findGrant(ctx, id);
            if (!grant || grant.revokedAt !== null || grant.expiresAt <= Date.now()) throw notFound('No such live grant', { id: 'does not exist or has ended' });
            await revokeGrant(ctx, id, 'revoked by an admin', actorOf(request));
            return reply.code(204).send();
          },
        },
      },
      options,
    );

    // Webhooks (docs/events.md "Webhooks"): the secret is in the 201 of POST only.
    const webhookOr404 = async (request: FastifyRequest) => {
      const w = await findWebhook(ctx, (request.params as { id: string }).id);
      if (!w) throw notFound('No such webhook', { id: 'does not exist' });
      return w;
    };
    routeMethods(
      admin,
      `${ADMIN_API}/webhooks`,
      {
        GET: {
          schema: op({ operationId: 'admin_list_webhooks', summary: 'List the webhooks (never a secret)', response: S.answers({ 200: ['OK', Type.Array(S.Webhook)] }, 401, 403) }),
          handler: async () => (await listWebhooks(ctx)).map(describeWebhook),
        },
        POST: {
          schema: op({ operationId: 'admin_create_webhook', summary: 'Add a webhook; its signing secret is in this answer only', body: S.WebhookFields, response: S.answers({ 201: ['Created (Location: its URL)', S.Webhook] }, 400, 401, 403) }),
          handler: async (request, reply) => {
            const { webhook, secret } = await model(() => addWebhook(ctx, request.body as S.WebhookFields, actorOf(request)));
            return created(reply, `/webhooks/${webhook.id}`, { ...describeWebhook(webhook), secret });
          },
        },
      },
      options,
    );
    routeMethods(
      admin,
      `${ADMIN_API}/webhooks/:id`,
      {
        GET: {
          schema: op({ operationId: 'admin_get_webhook', summary: 'One webhook', params: S.IdParam, response: S.answers({ 200: ['OK', S.Webhook] }, 401, 403, 404) }),
          handler: async (request) => describeWebhook(await webhookOr404(request)),
        },
        PATCH: {
          schema: op({ operationId: 'admin_update_webhook', summary: 'Change its url, events or collections', params: S.IdParam, body: S.WebhookFields, response: S.answers({ 200: ['OK', S.Webhook] }, 400, 401, 403, 404) }),
          handler: async (request) => {
            const updated = await model(() => updateWebhook(ctx, (request.params as { id: string }).id, request.body as S.WebhookFields, actorOf(request)));
            if (!updated) throw notFound('No such webhook', { id: 'does not exist' });
            return describeWebhook(updated);
          },
        },
        DELETE: {
          schema: op({ operationId: 'admin_delete_webhook', summary: 'Remove a webhook and its pending deliveries', params: S.IdParam, response: S.answers({ 204: ['Done'] }, 401, 403, 404) }),
          handler: async (request, reply) => {
            if (!(await removeWebhook(ctx, (request.params as { id: string }).id, actorOf(request)))) throw notFound('No such webhook', { id: 'does not exist' });
            return reply.code(204).send();
          },
        },
      },
      options,
    );
    routeMethods(
      admin,
      `${ADMIN_API}/webhooks/:id/deliveries`,
      {
        GET: {
          schema: op({
            operationId: 'admin_list_webhook_deliveries',
            summary: 'Every delivery attempt, newest first (X-Pending-Deliveries: deliveries still waiting)',
            params: S.IdParam,
            querystring: S.DeliveryPage(ctx.config.api),
            response: S.answers({ 200: ['OK', Type.Array(S.DeliveryAttempt)] }, 400, 401, 403, 404),
          }),
          // An unknown webhook is a 404 whatever the query says (it is looked up before the query is checked).
          preValidation: async (request) => void (await webhookOr404(request)),
          handler: async (request, reply) => {
            const w = await webhookOr404(request);
            // The schema's default fills limit in (the fallback only satisfies the type).
            const { limit = ctx.config.api.defaultLimit, before } = request.query as S.DeliveryPage;
            const { attempts, pending } = await webhookDeliveries(ctx, w.id, limit, before ?? null);
            reply.header('x-pending-deliveries', String(pending));
            if (attempts.length === limit) reply.header('link', `<${url(`/webhooks/${w.id}/deliveries`)}?limit=${limit}&before=${attempts[attempts.length - 1].id}>; rel="next"`);
            return attempts;
          },
        },
      },
      options,
    );

    // Every event, the admin side's included (GET /v1/events shows a token only its records').
    // Its query is read by the event feed's own parser, shared with /v1/events (its schema describes only).
    const allTypes = new Set(EVENT_TYPES);
    routeMethods(
      admin,
      `${ADMIN_API}/events`,
      {
        GET: {
          schema: op({
            operationId: 'admin_list_all_events',
            summary: "Every event, the admin side's included; Accept: text/event-stream streams them (docs/events.md)",
            querystring: feedParameters(ctx.config.api, [...ctx.collections.keys()], EVENT_TYPES),
            response: S.answers({ 200: ['Events, oldest first', Type.Array(S.AdminEvent)] }, 400, 401, 403),
          }),
          handler: async (request, reply) => {
            const stream = wantsStream(request);
            if (!stream) requireJsonAccept(request.headers.accept);
            const lastEventId = stream ? ([] as string[]).concat(request.headers['last-event-id'] ?? [])[0] : undefined;
            const q = parseFeedQuery(ctx, request.query as Record<string, unknown>, allTypes, lastEventId);
            const selection = new EventSelection(q.types, q.collections);
            await requireRetained(ctx, q.after);
            const caller = request.admin!;
            if (stream) {
              const token = authenticator.presentedToken(request);
              return streamEvents(ctx, request, reply, selection, q.after, {
                endsAt: caller.expiresAt,
                stillValid: async () => token !== null && (await authenticator.tokens.verify(token))?.scopes.has(ADMIN_SCOPE) === true,
              });
            }
            const page = await feedPage(ctx, selection, q, request);
            reply.header('link', nextLink(url('/events'), request.query as Record<string, unknown>, q, page));
            return reply.type('application/json; charset=utf-8').send(`[${page.map(eventJson).join(',')}]`);
          },
        },
      },
      { config: { alwaysAvailable: true, negotiates: true } },
    );

    const maintenanceView = async () => {
      const m = await readMaintenance(ctx.store);
      return { enabled: m.on, since: m.since ? new Date(m.since).toISOString() : null };
    };
    routeMethods(
      admin,
      `${ADMIN_API}/maintenance`,
      {
        GET: {
          schema: op({ operationId: 'admin_get_maintenance', summary: 'Whether maintenance mode is on', response: S.answers({ 200: ['OK', S.Maintenance] }, 401, 403) }),
          handler: maintenanceView,
        },
        PUT: {
          schema: op({
            operationId: 'admin_set_maintenance',
            summary: 'Switch maintenance mode (503 on /v1 and /oauth on every instance within a second)',
            body: S.MaintenanceSwitch,
            response: S.answers({ 200: ['OK', S.Maintenance] }, 400, 401, 403),
          }),
          handler: async (request) => {
            await writeMaintenance(ctx.store, (request.body as S.MaintenanceSwitch).enabled);
            return maintenanceView();
          },
        },
      },
      options,
    );
  });

  // Each path with its own server (the document's default server is the resource API's).
  return () =>
    pathItems(operations, { tags: ['admin'], security: [{ oauth2: [ADMIN_SCOPE] }, { bearer: [] }] }, { servers: [{ url: ctx.config.publicUrl }] }, new Map([[S.ErrorBody, '#/components/schemas/Error']]));
}
