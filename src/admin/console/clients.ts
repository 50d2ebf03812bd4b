import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CLIENT_ID, findClient, listClients, registerClient, removeClient, rotateClientSecret, updateClient, type Client, type ClientChanges } from '../../authserver/model/clients.js';
import type { Params } from '../../authserver/params.js';
import { grantableUniverse } from '../../authserver/scope-request.js';
import { selfRegisteredClientIds } from '../../authserver/model/registration.js';
import { ConsoleKit, refused, type Refusal, type Signed } from './kit.js';
import { confirmBody } from './components.js';
import { EMPTY_CLIENT, clientBody, clientFormValues, clientProps, clientsBody, secretBody, type ClientFormValues } from './clients-view.js';

// The console's client pages: list and register (the secret shown once on the answer), a
// client's settings under the registration rules, rotate the secret and delete, each after a
// confirmation page. The rules and their errors are the model's (model/clients.ts).

function valuesOf(form: Params, current?: ClientFormValues): ClientFormValues {
  return {
    client_id: current?.client_id ?? form.get('client_id') ?? '',
    name: form.get('name')?.trim() ?? '',
    type: current?.type ?? (form.get('type') === 'public' ? 'public' : 'confidential'),
    redirect_uris: form.values.get('redirect_uris') ?? '',
    grant_types: form.all('grant_types'),
    scope: (form.get('scope') ?? '').trim(),
    token_type: form.get('token_type') ?? 'bearer',
    origins: form.values.get('origins') ?? '',
    uri: (form.get('uri') ?? '').trim(),
    verified: form.get('verified') === 'yes',
    introspect: form.get('introspect') === 'yes',
    require_pkce: form.get('require_pkce') === 'yes',
    require_par: form.get('require_par') === 'yes',
    dpop_bound_access_tokens: form.get('dpop_bound_access_tokens') === 'yes',
    post_logout_redirect_uris: form.values.get('post_logout_redirect_uris') ?? '',
    id_token_signed_response_alg: form.get('id_token_signed_response_alg') ?? 'RS256',
  };
}

function lines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
}

export function registerClientPages(app: FastifyInstance, kit: ConsoleKit): void {
  const { ctx, base } = kit;
  const knownScopes = grantableUniverse(ctx.collections);
  const enabledGrants = ctx.config.auth.grants;
  const id = (request: FastifyRequest) => (request.params as { id: string }).id;
  const path = (client: Client | string) => `/clients/${encodeURIComponent(typeof client === 'string' ? client : client.id)}`;
  const missing = (reply: FastifyReply, s: Signed) => kit.message(reply, s, 404, 'No such client', 'There is no client with this id (it may have been deleted).', 'clients');

  const listPage = async (reply: FastifyReply, s: Signed, status: number, form: ClientFormValues, problem?: Refusal, notice?: string) =>
    kit.page(reply, s, status, 'Clients', 'clients', clientsBody({ base, csrf: s.csrf, clients: await listClients(ctx), registered: await selfRegisteredClientIds(ctx), form, errors: problem?.errors ?? {}, error: problem?.error, notice, knownScopes, enabledGrants }), refused(problem));

  kit.route(app, '/clients', {
    GET: kit.guard(async (request, reply, s) => {
      const q = request.query as Record<string, unknown>;
      const gone = typeof q.deleted === 'string' && CLIENT_ID.test(q.deleted) ? `Client ${q.deleted} deleted: its grants and tokens have ended.` : undefined;
      return listPage(reply, s, 200, EMPTY_CLIENT, undefined, gone);
    }),
    POST: kit.guard(async (_request, reply, s) => {
      const v = valuesOf(s.form);
      const outcome = await ConsoleKit.attempt(
        () =>
          registerClient(ctx, {
            id: v.client_id,
            name: v.name || undefined,
            public: v.type === 'public',
            ...changesOf(v),
          }),
        'client_id',
      );
      if (!('ok' in outcome)) return listPage(reply, s, outcome.status, v, outcome);
      const { client, secret } = outcome.ok;
      reply.header('location', `${base}${path(client)}`);
      return kit.page(reply, s, 201, 'Client registered', 'clients', secretBody({ base, client, secret, rotated: false }));
    }),
  });

  const clientPage = (reply: FastifyReply, s: Signed, status: number, client: Client, form: ClientFormValues, problem?: Refusal, notice?: string) =>
    kit.page(reply, s, status, `Client ${client.id}`, 'clients', clientBody({ base, csrf: s.csrf, client, form, errors: problem?.errors ?? {}, error: problem?.error, notice, knownScopes, enabledGrants }), refused(problem));

  kit.route(app, '/clients/:id', {
    GET: kit.guard(async (request, reply, s) => {
      const client = await findClient(ctx, id(request), true);
      if (!client) return missing(reply, s);
      const saved = (request.query as Record<string, unknown>).saved !== undefined;
      return clientPage(reply, s, 200, client, clientFormValues(client), undefined, saved ? 'Changes saved.' : undefined);
    }),
    POST: kit.guard(async (request, reply, s) => {
      const client = await findClient(ctx, id(request), true);
      if (!client) return missing(reply, s);
      const v = valuesOf(s.form, clientFormValues(client));
      const outcome = await ConsoleKit.attempt(
        () =>
          updateClient(ctx, client.id, {
            // An empty name is the client id, as when registering.
            name: v.name || client.id,
            ...changesOf(v),
          }),
        'client_id',
      );
      if (!('ok' in outcome)) return clientPage(reply, s, outcome.status, client, v, outcome);
      if (!outcome.ok) return missing(reply, s);
      return kit.redirect(reply, `${path(client)}?saved`);
    }),
  });

  kit.route(app, '/clients/:id/secret', {
    GET: kit.guard(async (request, reply, s) => {
      const client = await findClient(ctx, id(request), true);
      if (!client) return missing(reply, s);
      if (client.public) return kit.message(reply, s, 400, 'No secret', `Client ${client.id} is public: it has no secret.`, 'clients');
      return kit.page(
        reply,
        s,
        200,
        'Rotate the secret',
        'clients',
        confirmBody({
          csrf: s.csrf,
          title: `Rotate the secret of ${client.id}?`,
          text: 'A new secret is generated and shown once. The current secret stops working at once on every instance; tokens already issued stay valid.',
          action: `${base}${path(client)}/secret`,
          button: 'Rotate the secret',
          cancel: `${base}${path(client)}`,
        }),
      );
    }),
    POST: kit.guard(async (request, reply, s) => {
      const outcome = await ConsoleKit.attempt(() => rotateClientSecret(ctx, id(request)), 'client_id');
      if (!('ok' in outcome)) return kit.message(reply, s, outcome.status, 'No secret', outcome.error, 'clients');
      if (!outcome.ok) return missing(reply, s);
      return kit.page(reply, s, 200, 'New secret', 'clients', secretBody({ base, client: outcome.ok.client, secret: outcome.ok.secret, rotated: true }));
    }),
  });

  kit.route(app, '/clients/:id/delete', {
    GET: kit.guard(async (request, reply, s) => {
      const client = await findClient(ctx, id(request), true);
      if (!client) return missing(reply, s);
      return kit.page(
        reply,
        s,
        200,
        'Delete the client',
        'clients',
        confirmBody({
          csrf: s.csrf,
          title: `Delete the client ${client.id}?`,
          text: 'Its grants, tokens and unused codes end on every instance within a second, and its credentials stop working. This cannot be undone.',
          details: clientProps(client),
          action: `${base}${path(client)}/delete`,
          button: 'Delete the client',
          cancel: `${base}${path(client)}`,
        }),
      );
    }),
    POST: kit.guard(async (request, reply, s) => {
      const removed = await removeClient(ctx, id(request));
      if (!removed) return missing(reply, s);
      return kit.redirect(reply, `/clients?deleted=${encodeURIComponent(id(request))}`);
    }),
  });
}

/** The form's values as the model's client fields, the same for registering and for editing. */
function changesOf(v: ClientFormValues): Required<Omit<ClientChanges, 'name'>> {
  return {
    redirectUris: lines(v.redirect_uris),
    grantTypes: v.grant_types,
    scope: v.scope || null,
    tokenType: v.token_type,
    origins: lines(v.origins),
    uri: v.uri || null,
    verified: v.verified,
    introspect: v.introspect,
    requirePkce: v.require_pkce,
    requirePar: v.require_par,
    dpopBound: v.dpop_bound_access_tokens,
    postLogoutRedirectUris: lines(v.post_logout_redirect_uris),
    idTokenSignedResponseAlg: v.id_token_signed_response_alg,
  };
}
