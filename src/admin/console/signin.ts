import type { FastifyInstance } from 'fastify';
import { audit } from '../../authserver/audit.js';
import { describeDuration } from '../../authserver/authorize/views.js';
import { signIn } from '../../authserver/login-throttle.js';
import { userSubject } from '../../authserver/model/users.js';
import { formOf, safeNext, type ConsoleKit } from './kit.js';
import { endConsoleSession, startConsoleSession } from './session.js';

// Signing in to the console (the same throttled sign-in as every form; admins only) and out.

export function registerSignIn(app: FastifyInstance, kit: ConsoleKit): void {
  const { ctx, base } = kit;
  kit.route(app, '/signin', {
    POST: async (request, reply) => {
      const form = formOf(request);
      const username = form.get('username');
      const password = form.get('password');
      const next = safeNext(base, form.get('next')) ?? undefined;
      if (!username || !password) return kit.signIn(request, reply, 400, { username, next, error: 'Enter your username and password.' });
      const outcome = await signIn(ctx, request.log, { username, password, ip: request.ip, clientId: null, via: 'admin console' });
      if ('retryAfter' in outcome) {
        reply.header('retry-after', String(outcome.retryAfter));
        return kit.signIn(request, reply, 429, { username, next, error: `Too many failed attempts. Try again in ${describeDuration(outcome.retryAfter)}.` });
      }
      if ('failed' in outcome) return kit.signIn(request, reply, 401, { username, next, error: 'The username or password is not correct.' });
      const { user } = outcome;
      if (!user.admin) {
        audit(ctx, request.log, 'login.failed', { subject: userSubject(user.id), username, ip: request.ip, reason: 'admin console: not an admin' });
        return kit.notAdmin(reply, user.username);
      }
      await startConsoleSession(ctx, request, reply, user);
      audit(ctx, request.log, 'login.succeeded', { subject: userSubject(user.id), ip: request.ip, reason: 'admin console' });
      return reply.redirect(next ?? base, 303);
    },
  });

  kit.route(app, '/signout', {
    POST: async (request, reply) => {
      await endConsoleSession(ctx, request, reply);
      return kit.redirect(reply, '?signed_out');
    },
  });
}
