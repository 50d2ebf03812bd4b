import type { FastifyInstance } from 'fastify';
import { readMaintenance, writeMaintenance } from '../../platform/store/settings.js';
import type { ConsoleKit } from './kit.js';
import { maintenanceBody } from './maintenance-view.js';

// The Maintenance section: the switch every instance reads within a second.

export function registerMaintenancePages(app: FastifyInstance, kit: ConsoleKit): void {
  const { ctx, base } = kit;
  kit.route(app, '/maintenance', {
    GET: kit.guard(async (request, reply, s) => {
      const done = (request.query as Record<string, unknown>).done;
      const message = done === 'on' ? 'Switched on: every instance answers 503 within a second.' : done === 'off' ? 'Switched off: every instance answers again within a second.' : undefined;
      return kit.page(reply, s, 200, 'Maintenance', 'maintenance', maintenanceBody(base, s.csrf, await readMaintenance(ctx.store), message));
    }),
    POST: kit.guard(async (_request, reply, s) => {
      const enabled = s.form.get('enabled');
      if (enabled !== 'on' && enabled !== 'off') return kit.message(reply, s, 400, 'Bad request', 'The form was not understood.', 'maintenance');
      await writeMaintenance(ctx.store, enabled === 'on');
      return kit.redirect(reply, `/maintenance?done=${enabled}`);
    }),
  });
}
