import type { FastifyInstance } from 'fastify';
import { listClients } from '../../authserver/model/clients.js';
import { listUsers } from '../../authserver/model/users.js';
import { listGrants } from '../../authserver/tokens.js';
import { readMaintenance } from '../../platform/store/settings.js';
import { listMails, mailCounts } from '../../platform/mail/list.js';
import { dashboardBody } from './dashboard-view.js';
import type { ConsoleKit } from './kit.js';
import { consoleUser } from './session.js';

// The console's front door, {base}/admin: signed out, the sign-in form (200); signed in, the
// dashboard (with the mail queue's state: docs/users.md#mail).

export function registerDashboard(app: FastifyInstance, kit: ConsoleKit): void {
  const { ctx, base } = kit;
  const dashboard = kit.guard(async (_request, reply, s) => {
    const [clients, users, grants, maintenance, mail, failed, pending] = await Promise.all([
      listClients(ctx),
      listUsers(ctx),
      listGrants(ctx, {}),
      readMaintenance(ctx.store),
      mailCounts(ctx.store),
      listMails(ctx.store, { status: 'failed', limit: 5 }),
      listMails(ctx.store, { status: 'pending', limit: 50 }),
    ]);
    // The mails that need a look: given up, or failing and waiting for their next attempt.
    const troubled = [...pending.filter((m) => m.last_error !== null), ...failed].slice(0, 5);
    const body = dashboardBody({ base, clients: clients.length, users: users.length, admins: users.filter((u) => u.admin).length, grants: grants.length, grantsCapped: grants.length >= 1000, maintenance, mail, troubled });
    return kit.page(reply, s, 200, 'Dashboard', 'dashboard', body);
  });
  kit.route(app, '/', {
    GET: async function (request, reply) {
      if (await consoleUser(ctx, request)) return dashboard.call(this, request, reply);
      const signedOut = (request.query as Record<string, unknown>).signed_out !== undefined;
      return kit.signIn(request, reply, 200, { info: signedOut ? 'You are signed out.' : undefined });
    },
  });
}
