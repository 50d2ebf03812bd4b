import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../contract/context.js';
import type { Caller } from '../contract/caller.js';
import { modelProblem } from '../contract/errors.js';
import { ADMIN_SCOPE } from '../contract/scope-name.js';
import { ApiError, badRequest, forbidden, notFound } from '../platform/http/errors.js';
import { routeMethods } from '../platform/http/routes.js';
import { readMaintenance, writeMaintenance } from '../platform/store/settings.js';
import { Authenticator } from '../api/access/authenticate.js';
import { describeClient, findClient, listClients, registerClient, removeClient, rotateClientSecret, updateClient, type ClientChanges } from '../authserver/model/clients.js';
import { changePassword, createUser, describeUser, findUserById, findUserByUsername, listUsers, removeUser, setUserAdmin, userSubject, type User } from '../authserver/model/users.js';
import { findGrant, listGrants, revokeGrant } from '../authserver/tokens.js';
import { addWebhook, describeWebhook, findWebhook, listWebhooks, removeWebhook, updateWebhook, webhookDeliveries } from '../webhooks/webhooks.js';
import { EVENT_TYPES, EventSelection, eventJson } from '../contract/event-bus.js';
import { feedPage, nextLink, parseFeedQuery, requireRetained, streamEvents, wantsStream } from '../api/events.js';
import { requireJsonAccept } from '../platform/http/negotiation.js';

// The admin API, {base_url}/admin/v1 (DESIGN.md "Administration"): clients, users, grants and
// maintenance with SPEC's JSON conventions. A bearer token with the `admin` scope is required (no
// token 401, another scope 403). Handlers parse, call the authorization server's model (the same
// functions as the CLI), and answer; the model's rule errors become 400 with `detail` per field.

export const ADMIN_API = '/admin/v1';

declare module 'fastify' {
  interface FastifyRequest {
    /** The admin API's caller, once its token is verified and holds the admin scope. */
    admin: Caller | null;
  }
}

type Body = Record<string, unknown>;

function body(request: FastifyRequest): Body {
  const b = request.body;
  if (b === undefined || b === null || typeof b !== 'object' || Array.isArray(b)) throw badRequest('A JSON object body is required', { body: 'must be a JSON object' });
  return b as Body;
}

/** Only these fields; each of the given JSON type. */
function fields(b: Body, allowed: Record<string, 'string' | 'boolean' | 'string[]' | 'string|null'>): void {
  // Null prototype, own keys only: a field named `constructor` or `__proto__` is an unknown field like any other.
  const detail: Record<string, string> = Object.create(null);
  for (const [k, v] of Object.entries(b)) {
    const type = Object.hasOwn(allowed, k) ? allowed[k] : undefined;
    if (!type) detail[k] = `unknown field (allowed: ${Object.keys(allowed).join(', ')})`;
    else if (type === 'string[]' ? !Array.isArray(v) || v.some((x) => typeof x !== 'string') : type === 'string|null' ? v !== null && typeof v !== 'string' : typeof v !== type)
      detail[k] = `must be ${type === 'string[]' ? 'an array of strings' : type === 'string|null' ? 'a string or null' : `a ${type}`}`;
  }
  if (Object.keys(detail).length) throw badRequest('Invalid request body', detail);
}

/** The model's errors as HTTP answers: a broken rule 400 naming the field, a duplicate 409. */
async function model<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const problem = modelProblem(e, 'id');
    if (!problem) throw e;
    throw new ApiError(problem.status, problem.message, problem.detail);
  }
}

/** A user by id, or by username (both are unique; ids are tried first). */
async function userByKey(ctx: AppContext, key: string): Promise<User> {
  const user = (await findUserById(ctx, key)) ?? (await findUserByUsername(ctx, key));
  if (!user) throw notFound('No such user', { user: 'does not exist' });
  return user;
}

/** Who made a change through the admin API: the admin's subject (an event's `actor`). */
const actorOf = (request: FastifyRequest): string => request.admin!.subject;

export function registerAdminApi(app: FastifyInstance, ctx: AppContext): void {
  const authenticator = new Authenticator(ctx);
  const url = (path: string) => `${ctx.config.publicUrl}${ADMIN_API}${path}`;
  // The operators' way in stays open in maintenance mode.
  const options = { config: { alwaysAvailable: true } };

  app.register(async (admin) => {
    admin.decorateRequest('admin', null);
    admin.decorateRequest('macBodyHash', null);
    admin.addHook('onRequest', async (request) => {
      const who = await authenticator.identify(request);
      if (who instanceof ApiError) throw who;
      if (!who.scopes.has(ADMIN_SCOPE)) throw forbidden('The admin API needs the admin scope', { scope: `requires ${ADMIN_SCOPE}` });
      request.admin = who;
    });
    admin.addHook('preHandler', (request, _reply, done) => done(authenticator.checkBodyHash(request) ?? undefined));

    const created = (reply: FastifyReply, path: string, value: unknown) => reply.code(201).header('location', url(path)).send(value);

    routeMethods(
      admin,
      `${ADMIN_API}/clients`,
      {
        GET: async () => (await listClients(ctx)).map(describeClient),
        POST: async (request, reply) => {
          const b = body(request);
          fields(b, { client_id: 'string', name: 'string', redirect_uris: 'string[]', grant_types: 'string[]', scope: 'string|null', token_type: 'string', public: 'boolean', client_secret: 'string', origins: 'string[]', uri: 'string|null', verified: 'boolean', introspect: 'boolean', require_pkce: 'boolean' });
          if (typeof b.client_id !== 'string') throw badRequest('Invalid request body', { client_id: 'is required' });
          const { client, secret } = await model(() =>
            registerClient(ctx, {
              id: b.client_id as string,
              name: b.name as string | undefined,
              public: b.public === true,
              secret: b.client_secret as string | undefined,
              redirectUris: (b.redirect_uris as string[] | undefined) ?? [],
              grantTypes: (b.grant_types as string[] | undefined) ?? [],
              scope: (b.scope as string | null | undefined) ?? null,
              tokenType: b.token_type as string | undefined,
              origins: (b.origins as string[] | undefined) ?? [],
              uri: (b.uri as string | null | undefined) ?? null,
              verified: b.verified === true,
              introspect: b.introspect === true,
              requirePkce: b.require_pkce === true,
            }, actorOf(request)),
          );
          return created(reply, `/clients/${encodeURIComponent(client.id)}`, { ...describeClient(client), ...(secret === null ? {} : { client_secret: secret }) });
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
        GET: async (request) => describeClient(await clientOr404(request)),
        PATCH: async (request) => {
          const b = body(request);
          fields(b, { name: 'string', redirect_uris: 'string[]', grant_types: 'string[]', scope: 'string|null', token_type: 'string', origins: 'string[]', uri: 'string|null', verified: 'boolean', introspect: 'boolean', require_pkce: 'boolean' });
          const changes: ClientChanges = {
            name: b.name as string | undefined,
            redirectUris: b.redirect_uris as string[] | undefined,
            grantTypes: b.grant_types as string[] | undefined,
            scope: b.scope as string | null | undefined,
            tokenType: b.token_type as string | undefined,
            origins: b.origins as string[] | undefined,
            uri: b.uri as string | null | undefined,
            verified: b.verified as boolean | undefined,
            introspect: b.introspect as boolean | undefined,
            requirePkce: b.require_pkce as boolean | undefined,
          };
          const updated = await model(() => updateClient(ctx, (request.params as { id: string }).id, changes, actorOf(request)));
          if (!updated) throw notFound('No such client', { client_id: 'does not exist' });
          return describeClient(updated);
        },
        DELETE: async (request, reply) => {
          const revoked = await removeClient(ctx, (request.params as { id: string }).id, actorOf(request));
          if (!revoked) throw notFound('No such client', { client_id: 'does not exist' });
          return reply.code(204).send();
        },
      },
      options,
    );
    routeMethods(
      admin,
      `${ADMIN_API}/clients/:id/secret`,
      {
        POST: async (request) => {
          const b = request.body === undefined ? {} : body(request);
          fields(b, { client_secret: 'string' });
          const rotated = await model(() => rotateClientSecret(ctx, (request.params as { id: string }).id, b.client_secret as string | undefined, actorOf(request)));
          if (!rotated) throw notFound('No such client', { client_id: 'does not exist' });
          return { ...describeClient(rotated.client), client_secret: rotated.secret };
        },
      },
      options,
    );

    routeMethods(
      admin,
      `${ADMIN_API}/users`,
      {
        GET: async () => (await listUsers(ctx)).map(describeUser),
        POST: async (request, reply) => {
          const b = body(request);
          fields(b, { username: 'string', password: 'string', admin: 'boolean' });
          const detail: Record<string, string> = {};
          if (typeof b.username !== 'string') detail.username = 'is required';
          if (typeof b.password !== 'string') detail.password = 'is required';
          if (Object.keys(detail).length) throw badRequest('Invalid request body', detail);
          const user = await model(() => createUser(ctx, b.username as string, b.password as string, { admin: b.admin === true }, actorOf(request)));
          return created(reply, `/users/${user.id}`, describeUser(user));
        },
      },
      options,
    );
    routeMethods(
      admin,
      `${ADMIN_API}/users/:user`,
      {
        GET: async (request) => describeUser(await userByKey(ctx, (request.params as { user: string }).user)),
        PATCH: async (request) => {
          const b = body(request);
          fields(b, { password: 'string', admin: 'boolean' });
          const user = await userByKey(ctx, (request.params as { user: string }).user);
          // The password first: a bad one changes nothing.
          if (typeof b.password === 'string') await model(() => changePassword(ctx, user.username, b.password as string, actorOf(request)));
          const after = typeof b.admin === 'boolean' ? await setUserAdmin(ctx, user.username, b.admin, actorOf(request)) : user;
          return describeUser(after ?? user);
        },
        DELETE: async (request, reply) => {
          const user = await userByKey(ctx, (request.params as { user: string }).user);
          await removeUser(ctx, user.username, actorOf(request));
          return reply.code(204).send();
        },
      },
      options,
    );

    routeMethods(
      admin,
      `${ADMIN_API}/grants`,
      {
        GET: async (request) => {
          const q = request.query as Record<string, unknown>;
          const unknown = Object.keys(q).filter((k) => k !== 'user' && k !== 'client');
          if (unknown.length) throw badRequest('Unknown query parameter', Object.fromEntries(unknown.map((k) => [k, 'unknown (filters: user, client)'])));
          for (const k of ['user', 'client']) if (Array.isArray(q[k])) throw badRequest('Repeated query parameter', { [k]: 'must be given once' });
          const filter: { subject?: string; clientId?: string } = {};
          if (typeof q.user === 'string') {
            const user = await findUserByUsername(ctx, q.user);
            if (!user) throw badRequest('No such user', { user: 'no user has this username' });
            filter.subject = userSubject(user.id);
          }
          if (typeof q.client === 'string') filter.clientId = q.client;
          return listGrants(ctx, filter);
        },
      },
      options,
    );
    routeMethods(
      admin,
      `${ADMIN_API}/grants/:id`,
      {
        DELETE: async (request, reply) => {
          const { id } = request.params as { id: string };
          const grant = await findGrant(ctx, id);
          if (!grant || grant.revokedAt !== null || grant.expiresAt <= Date.now()) throw notFound('No such live grant', { id: 'does not exist or has ended' });
          await revokeGrant(ctx, id, 'revoked by an admin', actorOf(request));
          return reply.code(204).send();
        },
      },
      options,
    );

    // Webhooks (DESIGN.md "Events"): the secret is in the 201 of POST only.
    const webhookOr404 = async (request: FastifyRequest) => {
      const w = await findWebhook(ctx, (request.params as { id: string }).id);
      if (!w) throw notFound('No such webhook', { id: 'does not exist' });
      return w;
    };
    routeMethods(
      admin,
      `${ADMIN_API}/webhooks`,
      {
        GET: async () => (await listWebhooks(ctx)).map(describeWebhook),
        POST: async (request, reply) => {
          const b = body(request);
          fields(b, { url: 'string', events: 'string[]', collections: 'string[]' });
          const { webhook, secret } = await model(() => addWebhook(ctx, b, actorOf(request)));
          return created(reply, `/webhooks/${webhook.id}`, { ...describeWebhook(webhook), secret });
        },
      },
      options,
    );
    routeMethods(
      admin,
      `${ADMIN_API}/webhooks/:id`,
      {
        GET: async (request) => describeWebhook(await webhookOr404(request)),
        PATCH: async (request) => {
          const b = body(request);
          fields(b, { url: 'string', events: 'string[]', collections: 'string[]' });
          const updated = await model(() => updateWebhook(ctx, (request.params as { id: string }).id, b, actorOf(request)));
          if (!updated) throw notFound('No such webhook', { id: 'does not exist' });
          return describeWebhook(updated);
        },
        DELETE: async (request, reply) => {
          if (!(await removeWebhook(ctx, (request.params as { id: string }).id, actorOf(request)))) throw notFound('No such webhook', { id: 'does not exist' });
          return reply.code(204).send();
        },
      },
      options,
    );
    routeMethods(
      admin,
      `${ADMIN_API}/webhooks/:id/deliveries`,
      {
        GET: async (request, reply) => {
          const w = await webhookOr404(request);
          const q = request.query as Record<string, unknown>;
          const limit = q.limit === undefined ? ctx.config.api.defaultLimit : Number(q.limit);
          if (!Number.isInteger(limit) || limit < 1 || limit > ctx.config.api.maxLimit)
            throw badRequest('Invalid limit', { limit: `must be an integer from 1 to ${ctx.config.api.maxLimit}` });
          const before = q.before === undefined ? null : Number(q.before);
          if (before !== null && !Number.isInteger(before)) throw badRequest('Invalid before', { before: 'must be an attempt id' });
          const { attempts, pending } = await webhookDeliveries(ctx, w.id, limit, before);
          reply.header('x-pending-deliveries', String(pending));
          if (attempts.length === limit) reply.header('link', `<${url(`/webhooks/${w.id}/deliveries`)}?limit=${limit}&before=${attempts[attempts.length - 1].id}>; rel="next"`);
          return attempts;
        },
      },
      options,
    );

    // Every event, the admin side's included (GET /v1/events shows a token only its records').
    const allTypes = new Set(EVENT_TYPES);
    routeMethods(
      admin,
      `${ADMIN_API}/events`,
      {
        GET: async (request, reply) => {
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
        GET: maintenanceView,
        PUT: async (request) => {
          const b = body(request);
          fields(b, { enabled: 'boolean' });
          if (typeof b.enabled !== 'boolean') throw badRequest('Invalid request body', { enabled: 'is required (true or false)' });
          await writeMaintenance(ctx.store, b.enabled);
          return maintenanceView();
        },
      },
      options,
    );
  });
}
