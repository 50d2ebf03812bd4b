import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { audit } from '../../authserver/audit.js';
import { inviteUser, lifecyclePaths, listInvitations, revokeInvitation, signUpPolicy } from '../../authserver/model/lifecycle.js';
import { listUsers, userSubject } from '../../authserver/model/users.js';
import { html } from '../../platform/http/html/index.js';
import { confirmBody, when } from './components.js';
import { ConsoleKit, refused, type Refusal, type Signed } from './kit.js';
import { invitationsBody } from './invitations-view.js';

// The console's Invitations section: the sign-up policy, invite an address (auth.signup invite or
// open), the open invitations, revoke one after a confirmation page. Each invitation and revoke is
// an audit line with the admin who did it.

const DONE: Record<string, string> = {
  invited: 'Invitation sent: the link in the mail works once, for 7 days.',
  revoked: 'Invitation revoked: its link no longer works.',
};

export function registerInvitationPages(app: FastifyInstance, kit: ConsoleKit): void {
  const { ctx, base } = kit;

  const listPage = async (reply: FastifyReply, s: Signed, status: number, form: { email: string }, problem?: Refusal, notice?: string) => {
    const [invitations, users] = await Promise.all([listInvitations(ctx), listUsers(ctx)]);
    const body = invitationsBody({
      base,
      csrf: s.csrf,
      policy: signUpPolicy(ctx),
      signupUrl: lifecyclePaths(ctx).signup,
      invitations,
      usernames: new Map(users.map((u) => [u.id, u.username])),
      form,
      errors: problem?.errors ?? {},
      error: problem?.error,
      notice,
    });
    return kit.page(reply, s, status, 'Invitations', 'invitations', body, refused(problem));
  };
  const openOne = async (request: FastifyRequest) => {
    const id = (request.params as { id: string }).id;
    return (await listInvitations(ctx)).find((i) => i.id === id) ?? null;
  };
  const missing = (reply: FastifyReply, s: Signed) => kit.message(reply, s, 404, 'No such open invitation', 'This invitation does not exist, or was used or revoked already.', 'invitations');

  kit.route(app, '/invitations', {
    GET: kit.guard(async (request, reply, s) => {
      const done = (request.query as Record<string, unknown>).done;
      return listPage(reply, s, 200, { email: '' }, undefined, typeof done === 'string' && Object.hasOwn(DONE, done) ? DONE[done] : undefined);
    }),
    POST: kit.guard(async (request, reply, s) => {
      const form = { email: s.form.values.get('email') ?? '' };
      const actor = userSubject(s.admin.id);
      const outcome = await ConsoleKit.attempt(() => inviteUser(ctx, form.email, actor), 'email');
      if (!('ok' in outcome)) return listPage(reply, s, outcome.status, form, outcome);
      audit(ctx, request.log, 'invitation.sent', { actor, invitation_id: outcome.ok.id, reason: 'admin console' });
      return kit.redirect(reply, '/invitations?done=invited');
    }),
  });

  kit.route(app, '/invitations/:id/revoke', {
    GET: kit.guard(async (request, reply, s) => {
      const invitation = await openOne(request);
      if (!invitation) return missing(reply, s);
      return kit.page(
        reply,
        s,
        200,
        'Revoke the invitation',
        'invitations',
        confirmBody({
          csrf: s.csrf,
          title: `Revoke the invitation of ${invitation.email}?`,
          text: 'The link in the mail stops working at once. You can invite the address again later.',
          details: html`<dl class="props"><dt>Address</dt><dd>${invitation.email}</dd><dt>Sent</dt><dd>${when(invitation.createdAt)}</dd><dt>Expires</dt><dd>${when(invitation.expiresAt)}</dd></dl>`,
          action: `${base}/invitations/${invitation.id}/revoke`,
          button: 'Revoke the invitation',
          cancel: `${base}/invitations`,
        }),
      );
    }),
    POST: kit.guard(async (request, reply, s) => {
      const id = (request.params as { id: string }).id;
      if (!(await revokeInvitation(ctx, id))) return missing(reply, s);
      audit(ctx, request.log, 'invitation.revoked', { actor: userSubject(s.admin.id), invitation_id: id, reason: 'admin console' });
      return kit.redirect(reply, '/invitations?done=revoked');
    }),
  });
}
