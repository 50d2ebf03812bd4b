import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { audit } from '../../authserver/audit.js';
import { createRegistrationToken, listRegistrationTokens, registrationPolicy, revokeRegistrationToken } from '../../authserver/model/registration.js';
import { userSubject } from '../../authserver/model/users.js';
import { InvalidInput } from '../../contract/errors.js';
import { html } from '../../platform/http/html/index.js';
import { confirmBody, when } from './components.js';
import { ConsoleKit, refused, type Refusal, type Signed } from './kit.js';
import { registrationTokenMadeBody, registrationTokensBody } from './registration-tokens-view.js';

// The console's initial access tokens of dynamic client registration (part of the Clients
// section): make one (shown once), the live ones, revoke one after a confirmation page. Each make
// and revoke is an audit line with the admin who did it.

const DONE: Record<string, string> = { revoked: 'Registration token revoked: it registers no more clients (those it registered stay).' };

/** A form's number: empty is absent; anything else not a whole number is the model's refusal. */
function wholeNumber(text: string, field: string): number | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  if (!/^\d{1,9}$/.test(t)) throw new InvalidInput(`${field}: must be a whole number`, { [field]: 'must be a whole number' });
  return Number(t);
}

export function registerRegistrationTokenPages(app: FastifyInstance, kit: ConsoleKit): void {
  const { ctx, base } = kit;

  const listPage = async (reply: FastifyReply, s: Signed, status: number, form: { ttl: string; uses: string }, problem?: Refusal, notice?: string) =>
    kit.page(
      reply,
      s,
      status,
      'Registration tokens',
      'clients',
      registrationTokensBody({ base, csrf: s.csrf, policy: registrationPolicy(ctx), registerUrl: `${ctx.config.authUrl}/register`, tokens: await listRegistrationTokens(ctx), form, errors: problem?.errors ?? {}, error: problem?.error, notice }),
      refused(problem),
    );
  const liveOne = async (request: FastifyRequest) => {
    const id = (request.params as { id: string }).id;
    return (await listRegistrationTokens(ctx)).find((t) => t.id === id) ?? null;
  };
  const missing = (reply: FastifyReply, s: Signed) => kit.message(reply, s, 404, 'No such registration token', 'This token does not exist, or was used up, revoked or has expired.', 'clients');

  kit.route(app, '/registration-tokens', {
    GET: kit.guard(async (request, reply, s) => {
      const done = (request.query as Record<string, unknown>).done;
      return listPage(reply, s, 200, { ttl: '', uses: '' }, undefined, typeof done === 'string' && Object.hasOwn(DONE, done) ? DONE[done] : undefined);
    }),
    POST: kit.guard(async (request, reply, s) => {
      const form = { ttl: s.form.values.get('ttl') ?? '', uses: s.form.values.get('uses') ?? '' };
      const actor = userSubject(s.admin.id);
      const outcome = await ConsoleKit.attempt(() => createRegistrationToken(ctx, { ttl: wholeNumber(form.ttl, 'ttl'), uses: wholeNumber(form.uses, 'uses') }, actor), 'ttl');
      if (!('ok' in outcome)) return listPage(reply, s, outcome.status, form, outcome);
      audit(ctx, request.log, 'registration_token.created', { actor, registration_token_id: outcome.ok.registrationToken.id, reason: 'admin console' });
      return kit.page(reply, s, 201, 'Registration token made', 'clients', registrationTokenMadeBody(base, outcome.ok.token, outcome.ok.registrationToken));
    }),
  });

  kit.route(app, '/registration-tokens/:id/revoke', {
    GET: kit.guard(async (request, reply, s) => {
      const token = await liveOne(request);
      if (!token) return missing(reply, s);
      return kit.page(
        reply,
        s,
        200,
        'Revoke the registration token',
        'clients',
        confirmBody({
          csrf: s.csrf,
          title: 'Revoke this registration token?',
          text: 'It stops registering clients at once. The clients it registered stay.',
          details: html`<dl class="props"><dt>Id</dt><dd><code>${token.id}</code></dd><dt>Made</dt><dd>${when(token.createdAt)}</dd><dt>Expires</dt><dd>${when(token.expiresAt)}</dd><dt>Uses left</dt><dd>${String(token.usesLeft)}</dd></dl>`,
          action: `${base}/registration-tokens/${token.id}/revoke`,
          button: 'Revoke the token',
          cancel: `${base}/registration-tokens`,
        }),
      );
    }),
    POST: kit.guard(async (request, reply, s) => {
      const id = (request.params as { id: string }).id;
      if (!(await revokeRegistrationToken(ctx, id))) return missing(reply, s);
      audit(ctx, request.log, 'registration_token.revoked', { actor: userSubject(s.admin.id), registration_token_id: id, reason: 'admin console' });
      return kit.redirect(reply, '/registration-tokens?done=revoked');
    }),
  });
}
