import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { userSubject } from '../../authserver/model/users.js';
import { EVENT_TYPES } from '../../contract/event-bus.js';
import { addWebhook, findWebhook, listWebhooks, removeWebhook, webhookDeliveries } from '../../webhooks/webhooks.js';
import { ConsoleKit, refused, type Signed } from './kit.js';
import { confirmBody } from './components.js';
import { webhookBody, webhookProps, webhookSecretBody, webhooksBody } from './webhooks-view.js';

// The console's webhook pages (docs/events.md#webhooks): the list and the form to add one (its secret
// is shown on the POST's own answer, once), a webhook's delivery attempts, and delete after a
// confirmation page. The same model functions as the CLI and the admin API.

const ATTEMPTS_SHOWN = 100;

export function registerWebhookPages(app: FastifyInstance, kit: ConsoleKit): void {
  const { ctx, base } = kit;
  const collections = () => [...ctx.collections.keys()];
  const missing = (reply: FastifyReply, s: Signed) => kit.message(reply, s, 404, 'No such webhook', 'This webhook does not exist (it may have been deleted).', 'webhooks');
  const webhookOf = (request: FastifyRequest) => findWebhook(ctx, (request.params as { id: string }).id);

  const listPage = async (reply: FastifyReply, s: Signed, status: number, extra: Partial<Parameters<typeof webhooksBody>[0]> = {}, problem?: ReturnType<typeof refused>) =>
    kit.page(
      reply,
      s,
      status,
      'Webhooks',
      'webhooks',
      webhooksBody({ base, csrf: s.csrf, webhooks: await listWebhooks(ctx), form: { url: '', events: [], collections: [] }, eventTypes: EVENT_TYPES, collections: collections(), errors: {}, ...extra }),
      problem,
    );

  kit.route(app, '/webhooks', {
    GET: kit.guard(async (request, reply, s) => listPage(reply, s, 200, { notice: (request.query as Record<string, unknown>).deleted !== undefined ? 'Webhook deleted.' : undefined })),
    POST: kit.guard(async (_request, reply, s) => {
      const form = { url: s.form.get('url') ?? '', events: s.form.all('events'), collections: s.form.all('collections') };
      const outcome = await ConsoleKit.attempt(() => addWebhook(ctx, form, userSubject(s.admin.id)), 'url');
      if (!('ok' in outcome)) return listPage(reply, s, outcome.status, { form, errors: outcome.errors, error: outcome.error }, refused(outcome));
      return kit.page(reply, s, 201, 'Webhook added', 'webhooks', webhookSecretBody(base, outcome.ok.webhook, outcome.ok.secret));
    }),
  });

  kit.route(app, '/webhooks/:id', {
    GET: kit.guard(async (request, reply, s) => {
      const w = await webhookOf(request);
      if (!w) return missing(reply, s);
      const { attempts, pending } = await webhookDeliveries(ctx, w.id, ATTEMPTS_SHOWN, null);
      return kit.page(reply, s, 200, 'Webhook', 'webhooks', webhookBody(base, w, attempts, pending));
    }),
  });

  kit.route(app, '/webhooks/:id/delete', {
    GET: kit.guard(async (request, reply, s) => {
      const w = await webhookOf(request);
      if (!w) return missing(reply, s);
      return kit.page(
        reply,
        s,
        200,
        'Delete the webhook',
        'webhooks',
        confirmBody({
          csrf: s.csrf,
          title: 'Delete this webhook?',
          text: 'No more events are sent to it; deliveries still waiting are dropped. Its attempts stay listed until the retention ends.',
          details: webhookProps(w),
          action: `${base}/webhooks/${w.id}/delete`,
          button: 'Delete the webhook',
          cancel: `${base}/webhooks/${w.id}`,
        }),
      );
    }),
    POST: kit.guard(async (request, reply, s) => {
      const w = await webhookOf(request);
      if (!w || !(await removeWebhook(ctx, w.id, userSubject(s.admin.id)))) return missing(reply, s);
      return kit.redirect(reply, '/webhooks?deleted');
    }),
  });
}
