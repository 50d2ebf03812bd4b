import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { audit } from '../../authserver/audit.js';
import { enrolmentQr } from '../../authserver/authorize/factor-views.js';
import { describeDuration } from '../../authserver/authorize/views.js';
import { signIn } from '../../authserver/login-throttle.js';
import { userSubject, type User } from '../../authserver/model/users.js';
import { AMR } from '../../authserver/sessions.js';
import { listSecondFactors } from '../../authserver/model/factors.js';
import { beginSecondStep, completeSecondStep, secondStepFor, type SecondStepState } from '../../authserver/second-step.js';
import { formOf, safeNext, type ConsoleKit } from './kit.js';
import { consoleCookies, consoleCsrf, endConsoleSession, startConsoleSession } from './session.js';
import { recoveryCodesBody, secondStepBody } from './signin-view.js';

// Signing in to the console (the same throttled sign-in as every form; admins only; the same
// second step as the login page, under the console's cookies) and out.

export function registerSignIn(app: FastifyInstance, kit: ConsoleKit): void {
  const { ctx, base } = kit;

  async function renderSecondStep(request: FastifyRequest, reply: FastifyReply, s: SecondStepState, next: string | undefined, status = 200, error?: string) {
    const csrf = await consoleCsrf(ctx, request, reply);
    const hidden = { csrf_token: csrf, step: s.step, pending: s.pending, next };
    const enrolment = s.enrolment ? { ...s.enrolment, qr: await enrolmentQr(s.enrolment.uri) } : undefined;
    const title = s.step === 'enrol' ? 'Set up two-step sign-in' : 'Two-step sign-in';
    const recoveryOnly = !(await listSecondFactors(ctx, s.user)).some((f) => f.kind === 'totp');
    return kit.bare(reply, status, title, secondStepBody({ base, hidden, username: s.user.username, enrolment, error, recoveryOnly }), error ? { error: error.replace(/\.$/, ''), detail: { otp: 'not accepted' } } : undefined);
  }

  async function signedIn(request: FastifyRequest, reply: FastifyReply, user: User, amr: readonly string[]) {
    await startConsoleSession(ctx, request, reply, user, amr);
    audit(ctx, request.log, 'login.succeeded', { subject: userSubject(user.id), ip: request.ip, reason: 'admin console' });
  }

  kit.route(app, '/signin', {
    POST: async (request, reply) => {
      const form = formOf(request);
      const next = safeNext(base, form.get('next')) ?? undefined;
      const step = form.get('step');
      if (step === 'second-factor' || step === 'enrol') {
        const outcome = await completeSecondStep(ctx, request, request.log, consoleCookies(ctx), form, 'admin console', null);
        if ('expired' in outcome) return kit.signIn(request, reply, 401, { next, error: 'Your sign-in has expired. Enter your username and password again.' });
        if ('again' in outcome) {
          if (outcome.retryAfter) reply.header('retry-after', String(outcome.retryAfter));
          return renderSecondStep(request, reply, outcome.again, next, outcome.status, outcome.error);
        }
        if (!outcome.user.admin) return kit.notAdmin(reply, outcome.user.username);
        await signedIn(request, reply, outcome.user, AMR.passwordAndCode);
        if (outcome.recoveryCodes.length) return kit.bare(reply, 200, 'Your recovery codes', recoveryCodesBody({ codes: outcome.recoveryCodes, continueUrl: next ?? base }));
        return reply.redirect(next ?? base, 303);
      }
      const username = form.get('username');
      const password = form.get('password');
      if (!username || !password) return kit.signIn(request, reply, 400, { username, next, error: 'Enter your username and password.' });
      const outcome = await signIn(ctx, request.log, { username, password, ip: request.ip, clientId: null, via: 'admin console' });
      if ('retryAfter' in outcome) {
        reply.header('retry-after', String(outcome.retryAfter));
        return kit.signIn(request, reply, 429, { username, next, error: `Too many failed attempts. Try again in ${describeDuration(outcome.retryAfter)}.` });
      }
      if ('failed' in outcome) return kit.signIn(request, reply, 401, { username, next, error: 'The username or password is not correct.' });
      if ('unverified' in outcome) return kit.signIn(request, reply, 403, { username, next, error: 'This account waits for its e-mail address to be verified: open the link mailed at sign-up.' });
      const { user } = outcome;
      if (!user.admin) {
        audit(ctx, request.log, 'login.failed', { subject: userSubject(user.id), username, ip: request.ip, reason: 'admin console: not an admin' });
        return kit.notAdmin(reply, user.username);
      }
      const second = await secondStepFor(ctx, user);
      if (second) return renderSecondStep(request, reply, await beginSecondStep(ctx, request, reply, consoleCookies(ctx), user, second), next);
      await signedIn(request, reply, user, AMR.password);
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
