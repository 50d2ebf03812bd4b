import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { USERNAME, changePassword, createUser, findUserById, listUsers, removeUser, setUserAdmin, updateProfile, userSubject, type User } from '../../authserver/model/users.js';
import { listGrants } from '../../authserver/tokens.js';
import { html } from '../../platform/http/html/index.js';
import { confirmBody } from './components.js';
import { ConsoleKit, refused, type Refusal, type Signed } from './kit.js';
import { consoleSignIn, startConsoleSession } from './session.js';
import { AMR } from '../../authserver/sessions.js';
import { audit } from '../../authserver/audit.js';
import { resendVerification } from '../../authserver/model/lifecycle.js';
import { asSentence } from '../../contract/errors.js';
import { userBody, usersBody } from './users-view.js';

// The console's user pages: list and add, a user's page (admin right, profile, password, a new
// verification link for an unverified address), remove after a confirmation page. The signed-in admin cannot take their own right away or remove themselves
// here (the CLI or another admin can): the console would lock them out mid-way.

const DONE: Record<string, string> = {
  added: 'User added.',
  'admin-on': 'The user is now an admin.',
  'admin-off': 'The user is no longer an admin; their grants that carried the admin scope have ended.',
  password: 'Password set. Their sign-in sessions have ended.',
  'own-password': 'Your password is set. Your other sessions have ended.',
  profile: 'Profile saved.',
};

export function registerUserPages(app: FastifyInstance, kit: ConsoleKit): void {
  const { ctx, base } = kit;
  const userOf = (request: FastifyRequest) => findUserById(ctx, (request.params as { id: string }).id);
  const missing = (reply: FastifyReply, s: Signed) => kit.message(reply, s, 404, 'No such user', 'There is no user with this id (they may have been removed).', 'users');

  const listPage = async (reply: FastifyReply, s: Signed, status: number, form: { username: string; admin: boolean }, problem?: Refusal, notice?: string) =>
    kit.page(reply, s, status, 'Users', 'users', usersBody({ base, csrf: s.csrf, users: await listUsers(ctx), form, errors: problem?.errors ?? {}, error: problem?.error, notice }), refused(problem));

  kit.route(app, '/users', {
    GET: kit.guard(async (request, reply, s) => {
      const removed = (request.query as Record<string, unknown>).removed;
      const notice = typeof removed === 'string' && USERNAME.test(removed) ? `User ${removed} removed: their grants, tokens and sessions have ended.` : undefined;
      return listPage(reply, s, 200, { username: '', admin: false }, undefined, notice);
    }),
    POST: kit.guard(async (_request, reply, s) => {
      const form = { username: s.form.get('username') ?? '', admin: s.form.get('admin') === 'on' };
      const outcome = await ConsoleKit.attempt(() => createUser(ctx, form.username, s.form.values.get('password') ?? '', { admin: form.admin }), 'username');
      if (!('ok' in outcome)) return listPage(reply, s, outcome.status, form, outcome);
      return kit.redirect(reply, `/users/${outcome.ok.id}?done=added`);
    }),
  });

  const userPage = async (reply: FastifyReply, s: Signed, status: number, user: User, problem?: Refusal, notice?: string, profile?: { name: string; email: string; emailVerified: boolean }) => {
    const grants = await listGrants(ctx, { subject: userSubject(user.id) });
    const view = { base, csrf: s.csrf, user, self: user.id === s.admin.id, grants: grants.length, errors: problem?.errors ?? {}, error: problem?.error, failed: profile ? ('profile' as const) : ('password' as const), profile, notice };
    return kit.page(reply, s, status, `User ${user.username}`, 'users', userBody(view), refused(problem));
  };

  kit.route(app, '/users/:id', {
    GET: kit.guard(async (request, reply, s) => {
      const user = await userOf(request);
      if (!user) return missing(reply, s);
      const done = (request.query as Record<string, unknown>).done;
      const notice = done === 'verification' ? `A new verification link was sent to ${user.email ?? 'them'}; earlier links no longer work.` : typeof done === 'string' && Object.hasOwn(DONE, done) ? DONE[done] : undefined;
      return userPage(reply, s, 200, user, undefined, notice);
    }),
  });

  kit.route(app, '/users/:id/admin', {
    POST: kit.guard(async (request, reply, s) => {
      const user = await userOf(request);
      if (!user) return missing(reply, s);
      const value = s.form.get('admin');
      if (value !== 'on' && value !== 'off') return kit.message(reply, s, 400, 'Bad request', 'The form was not understood.', 'users');
      if (user.id === s.admin.id) return kit.message(reply, s, 400, 'Not here', 'You cannot change your own admin right in the console.', 'users');
      if (!(await setUserAdmin(ctx, user.username, value === 'on'))) return missing(reply, s);
      return kit.redirect(reply, `/users/${user.id}?done=admin-${value}`);
    }),
  });

  kit.route(app, '/users/:id/profile', {
    POST: kit.guard(async (request, reply, s) => {
      const user = await userOf(request);
      if (!user) return missing(reply, s);
      const profile = { name: s.form.values.get('name') ?? '', email: s.form.values.get('email') ?? '', emailVerified: s.form.get('email_verified') === 'on' };
      const outcome = await ConsoleKit.attempt(() => updateProfile(ctx, user.username, profile), 'email');
      if (!('ok' in outcome)) return userPage(reply, s, outcome.status, user, outcome, undefined, profile);
      if (!outcome.ok) return missing(reply, s);
      return kit.redirect(reply, `/users/${user.id}?done=profile`);
    }),
  });

  kit.route(app, '/users/:id/verification', {
    POST: kit.guard(async (request, reply, s) => {
      const user = await userOf(request);
      if (!user) return missing(reply, s);
      const actor = userSubject(s.admin.id);
      const outcome = await ConsoleKit.attempt(() => resendVerification(ctx, user, actor), 'email');
      if (!('ok' in outcome)) return kit.message(reply, s, outcome.status, 'Not sent', asSentence(outcome.message), 'users');
      if (outcome.ok === 'verified') return kit.message(reply, s, 409, 'Verified already', `The address of ${user.username} is verified already: nothing was sent.`, 'users');
      if (outcome.ok === 'no-email') return kit.message(reply, s, 400, 'No address', `${user.username} has no e-mail address: set one in their profile first.`, 'users');
      audit(ctx, request.log, 'verification.sent', { subject: userSubject(user.id), actor, reason: 'admin console' });
      return kit.redirect(reply, `/users/${user.id}?done=verification`);
    }),
  });

  kit.route(app, '/users/:id/password', {
    POST: kit.guard(async (request, reply, s) => {
      const user = await userOf(request);
      if (!user) return missing(reply, s);
      const self = user.id === s.admin.id;
      // The way this admin signed in, for the session that replaces it below.
      const amr = self ? ((await consoleSignIn(ctx, request))?.amr ?? AMR.password) : AMR.password;
      const outcome = await ConsoleKit.attempt(() => changePassword(ctx, user.username, s.form.values.get('password') ?? ''), 'password');
      if (!('ok' in outcome)) return userPage(reply, s, outcome.status, user, outcome);
      if (!outcome.ok) return missing(reply, s);
      // A new password ends every session of the user, this one too: the admin who changed their own gets a new one.
      if (self) await startConsoleSession(ctx, request, reply, user, amr);
      return kit.redirect(reply, `/users/${user.id}?done=${self ? 'own-password' : 'password'}`);
    }),
  });

  kit.route(app, '/users/:id/delete', {
    GET: kit.guard(async (request, reply, s) => {
      const user = await userOf(request);
      if (!user) return missing(reply, s);
      if (user.id === s.admin.id) return kit.message(reply, s, 400, 'Not here', 'You cannot remove yourself in the console.', 'users');
      return kit.page(
        reply,
        s,
        200,
        'Remove the user',
        'users',
        confirmBody({
          csrf: s.csrf,
          title: `Remove the user ${user.username}?`,
          text: 'The grants they gave and their tokens end on every instance within a second, their sign-in sessions close and their password stops working. Records they own stay, under their subject. This cannot be undone.',
          details: html`<p class="muted small">Subject <code>user:${user.id}</code></p>`,
          action: `${base}/users/${user.id}/delete`,
          button: 'Remove the user',
          cancel: `${base}/users/${user.id}`,
        }),
      );
    }),
    POST: kit.guard(async (request, reply, s) => {
      const user = await userOf(request);
      if (!user) return missing(reply, s);
      if (user.id === s.admin.id) return kit.message(reply, s, 400, 'Not here', 'You cannot remove yourself in the console.', 'users');
      if (!(await removeUser(ctx, user.username))) return missing(reply, s);
      return kit.redirect(reply, `/users?removed=${encodeURIComponent(user.username)}`);
    }),
  });
}
