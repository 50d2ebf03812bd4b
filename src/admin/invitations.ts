import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../contract/context.js';
import { ApiError, badRequest, notFound } from '../platform/http/errors.js';
import { absentBodyIsEmpty } from '../platform/http/openapi.js';
import { routeMethods } from '../platform/http/routes.js';
import { audit } from '../authserver/audit.js';
import { describeInvitation, inviteUser, listInvitations, resendVerification, revokeInvitation } from '../authserver/model/lifecycle.js';
import { userSubject } from '../authserver/model/users.js';
import { listMails, type ListedMail, type MailStatus } from '../platform/mail/list.js';
import { ADMIN_API, actorOf, model, op, userByKey, type Created } from './api-kit.js';
import * as S from './schemas.js';

// The admin API's side of the user's lifecycle by e-mail (docs/admin.md): invitations (auth.signup
// invite or open) and a new verification link for a user. The model (authserver/model/lifecycle.ts)
// makes the link and queues its mail in one write; each action is an audit line with its admin.

/** A mail as the admin API lists it: times as ISO strings, no parts. */
export function describeMail(m: ListedMail): Record<string, unknown> {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return { id: m.id, kind: m.kind, recipient: m.recipient, subject: m.subject, status: m.status, attempts: m.attempts, created_at: iso(m.created_at), next_at: m.status === 'pending' ? iso(m.next_at) : null, sent_at: iso(m.sent_at), last_error: m.last_error };
}

export function registerLifecycleRoutes(admin: FastifyInstance, ctx: AppContext, created: Created, options: object): void {
  routeMethods(
    admin,
    `${ADMIN_API}/mail`,
    {
      GET: {
        schema: op({
          operationId: 'admin_list_mail',
          summary: 'The mail outbox, newest first: each mail with its status, attempts and last error (never its content); page with before=<the last id>',
          querystring: S.MailQuery(ctx.config.api),
          response: S.answers({ 200: ['OK', Type.Array(S.Mail)] }, 400, 401, 403),
        }),
        handler: async (request) => {
          const q = request.query as S.MailQuery;
          return (await listMails(ctx.store, { status: q.status as MailStatus | undefined, limit: q.limit ?? ctx.config.api.defaultLimit, before: q.before })).map(describeMail);
        },
      },
    },
    options,
  );
  routeMethods(
    admin,
    `${ADMIN_API}/invitations`,
    {
      GET: {
        schema: op({ operationId: 'admin_list_invitations', summary: 'The open invitations (neither used nor expired), newest first', response: S.answers({ 200: ['OK', Type.Array(S.Invitation)] }, 401, 403) }),
        handler: async () => (await listInvitations(ctx)).map(describeInvitation),
      },
      POST: {
        schema: op({
          operationId: 'admin_create_invitation',
          summary: 'Invite an address: a sign-up link is mailed to it (auth.signup invite or open; 400 while closed)',
          body: S.NewInvitation,
          response: S.answers({ 201: ['Created (Location: its URL, for DELETE)', S.Invitation] }, 400, 401, 403, 409, 429),
        }),
        handler: async (request, reply) => {
          const invitation = await model(() => inviteUser(ctx, (request.body as S.NewInvitation).email, actorOf(request)), 'email');
          audit(ctx, request.log, 'invitation.sent', { actor: actorOf(request), invitation_id: invitation.id, reason: 'admin API' });
          return created(reply, `/invitations/${invitation.id}`, describeInvitation(invitation));
        },
      },
    },
    options,
  );
  routeMethods(
    admin,
    `${ADMIN_API}/invitations/:id`,
    {
      DELETE: {
        schema: op({ operationId: 'admin_revoke_invitation', summary: 'Revoke an open invitation: its link stops working', params: S.IdParam, response: S.answers({ 204: ['Done'] }, 401, 403, 404) }),
        handler: async (request, reply) => {
          const { id } = request.params as { id: string };
          if (!(await revokeInvitation(ctx, id))) throw notFound('No such open invitation', { id: 'does not exist, or was used or revoked' });
          audit(ctx, request.log, 'invitation.revoked', { actor: actorOf(request), invitation_id: id, reason: 'admin API' });
          return reply.code(204).send();
        },
      },
    },
    options,
  );
  routeMethods(
    admin,
    `${ADMIN_API}/users/:user/verification`,
    {
      POST: {
        schema: op({
          operationId: 'admin_resend_verification',
          summary: "Mail a new verification link to the user's unverified address (earlier links stop working)",
          params: S.UserParam,
          body: S.NoFields,
          response: S.answers({ 202: ['The link is queued for the mail', S.VerificationSent] }, 400, 401, 403, 404, 409, 429),
        }),
        preValidation: absentBodyIsEmpty,
        handler: async (request, reply) => {
          const user = await userByKey(ctx, (request.params as { user: string }).user);
          const outcome = await model(() => resendVerification(ctx, user, actorOf(request)));
          if (outcome === 'no-email') throw badRequest('The user has no e-mail address', { email: 'none: set one first (PATCH email)' });
          if (outcome === 'verified') throw new ApiError(409, 'The address is verified already', { email_verified: 'is true: nothing to send' });
          audit(ctx, request.log, 'verification.sent', { subject: userSubject(user.id), actor: actorOf(request), reason: 'admin API' });
          return reply.code(202).send({ status: outcome });
        },
      },
    },
    options,
  );
}
