import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { listClients } from '../../authserver/model/clients.js';
import { findUserByUsername, listUsers, userSubject } from '../../authserver/model/users.js';
import { findGrant, listGrants, revokeGrant } from '../../authserver/tokens.js';
import { html } from '../../platform/http/html/index.js';
import { confirmBody, when } from './components.js';
import { ConsoleKit, type Signed } from './kit.js';
import { grantsBody, who } from './grants-view.js';

// The console's grant pages: the live grants, filtered by user or client (a GET form: it changes
// nothing, so it carries no token and its URL can be bookmarked), and revoke after a confirmation
// page. A revoke ends the grant and its tokens on every instance within a second.

const LIMIT = 1000;

export function registerGrantPages(app: FastifyInstance, kit: ConsoleKit): void {
  const { ctx, base } = kit;

  const liveGrant = async (request: FastifyRequest) => {
    const grant = await findGrant(ctx, (request.params as { id: string }).id);
    return grant && grant.revokedAt === null && grant.expiresAt > Date.now() ? grant : null;
  };
  const missing = (reply: FastifyReply, s: Signed) => kit.message(reply, s, 404, 'No such live grant', 'This grant does not exist or has ended already.', 'grants');

  kit.route(app, '/grants', {
    GET: kit.guard(async (request, reply, s) => {
      const q = request.query as Record<string, unknown>;
      const one = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
      const filter = { user: one(q.user), client: one(q.client) };
      const [users, clients] = await Promise.all([listUsers(ctx), listClients(ctx)]);
      const usernames = new Map(users.map((u) => [u.id, u.username]));
      let error: string | undefined;
      let grants: Awaited<ReturnType<typeof listGrants>> = [];
      const user = filter.user === undefined ? null : await findUserByUsername(ctx, filter.user);
      if (filter.user !== undefined && !user) error = `No user is named ${filter.user}.`;
      else grants = await listGrants(ctx, { subject: user ? userSubject(user.id) : undefined, clientId: filter.client }, LIMIT);
      const notice = q.revoked !== undefined ? 'Grant revoked: its tokens no longer work.' : undefined;
      const body = grantsBody({ base, grants, capped: grants.length >= LIMIT, usernames, users, clients, filter, error, notice });
      return kit.page(reply, s, error ? 400 : 200, 'Grants', 'grants', body, error ? { error, detail: { user: 'no user has this username' } } : undefined);
    }),
  });

  kit.route(app, '/grants/:id/revoke', {
    GET: kit.guard(async (request, reply, s) => {
      const grant = await liveGrant(request);
      if (!grant) return missing(reply, s);
      const usernames = new Map((await listUsers(ctx)).map((u) => [u.id, u.username]));
      const details = html`<dl class="props">
<dt>User</dt><dd>${who(grant.subject, usernames, base)}</dd>
<dt>Client</dt><dd><code>${grant.clientId}</code></dd>
<dt>Scope</dt><dd><code>${grant.scope}</code></dd>
<dt>Expires</dt><dd>${when(grant.expiresAt)}</dd>
</dl>`;
      return kit.page(
        reply,
        s,
        200,
        'Revoke the grant',
        'grants',
        confirmBody({
          csrf: s.csrf,
          title: 'Revoke this grant?',
          text: 'The grant and every access and refresh token issued from it stop working on every instance within a second. The application has to ask the user again.',
          details,
          action: `${base}/grants/${grant.id}/revoke`,
          button: 'Revoke the grant',
          cancel: `${base}/grants`,
        }),
      );
    }),
    POST: kit.guard(async (request, reply, s) => {
      const grant = await liveGrant(request);
      if (!grant || !(await revokeGrant(ctx, grant.id, 'revoked by an admin'))) return missing(reply, s);
      return kit.redirect(reply, '/grants?revoked');
    }),
  });
}
