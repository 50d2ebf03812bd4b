import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { modelProblem } from '../../contract/errors.js';
import { sha256 } from '../../platform/crypto/secrets.js';
import { asSentence } from '../../contract/errors.js';
import { browserBinding, csrfToken } from '../authorize/csrf.js';
import { checkedForm, sendCardPage } from '../authorize/pages.js';
import { describeDuration } from '../authorize/views.js';
import { formAttempt, throttled } from '../login-throttle.js';
import { openInvitation, openResetLink, requestPasswordReset, resetPassword, signUp, signUpPolicy, verifyEmailLink } from '../model/lifecycle.js';
import type { Params } from '../params.js';
import { checkMailPage, confirmLinkPage, donePage, newPasswordPage, resetRequestPage, signUpPage, type SignUpView } from './lifecycle-view.js';

// {auth_url}/signup, /verify and /reset (docs/users.md): thin handlers from the form to the
// lifecycle model (model/lifecycle.ts) and back to a card page. A mailed link's GET only shows a
// page; its button (a CSRF-checked POST) uses the link, so a mail scanner that follows links
// spends nothing.

/** Sign-ups and reset requests an IP address may make in an hour; sign-ups per address typed, fewer. */
const PER_IP = 20;
const PER_NAME = 5;

const paths = (ctx: AppContext) => {
  const base = `${ctx.config.basePath}${ctx.config.auth.path}`;
  return { signup: `${base}/signup`, verify: `${base}/verify`, reset: `${base}/reset`, account: `${base}/account` };
};

const query = (request: FastifyRequest, name: string): string | undefined => {
  const v = (request.query as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : undefined;
};

async function csrf(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<string> {
  return csrfToken(ctx, await browserBinding(ctx, request, reply));
}

/** Counts a use of a mailing form by IP and by what was typed; refused: the 429 page was sent, true. */
async function overLimit(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, form: 'signup' | 'reset', typed: string): Promise<boolean> {
  // The typed value is hashed into the key (any length typed, one short key). A reset is not
  // counted per name: a stranger could use that up for its owner (model/lifecycle.ts spaces
  // reset mails out instead).
  const keys: [string, number][] = [[`${form}:ip:${request.ip}`, PER_IP]];
  if (form === 'signup') keys.push([`${form}:name:${sha256(typed.trim().toLowerCase())}`, PER_NAME]);
  for (const [key, max] of keys) {
    const outcome = await formAttempt(ctx, key, max);
    if ('retryAfter' in outcome) {
      reply.header('retry-after', throttled(outcome.retryAfter).headers['retry-after']);
      const p = paths(ctx);
      sendCardPage(ctx, reply, 429, donePage({ title: 'Too many requests', message: `Too many requests from here. Try again in ${describeDuration(outcome.retryAfter)}.`, link: { url: p.account, label: 'Your account' }, alert: true }), {
        problem: { error: 'Too many requests; retry later', detail: { [form === 'signup' ? 'email' : 'login']: 'too many requests' } },
      });
      return true;
    }
  }
  return false;
}

const closedPage = (ctx: AppContext, reply: FastifyReply) =>
  sendCardPage(ctx, reply, 403, donePage({ title: 'Sign-up is closed', message: 'This gatehouse makes accounts by invitation or by its administrators only.', link: { url: paths(ctx).account, label: 'Sign in' }, alert: true }), {
    problem: { error: 'Sign-up is closed on this gatehouse', detail: { signup: 'closed' } },
  });

const invalidLinkPage = (ctx: AppContext, reply: FastifyReply, what: string, again: { url: string; label: string }) =>
  sendCardPage(ctx, reply, 400, donePage({ title: 'This link does not work', message: `${what} link was used already, has expired or is not complete. Nothing was changed.`, link: again, alert: true }), {
    problem: { error: 'The link is not valid: used, expired or incomplete', detail: { token: 'not valid' } },
  });

// ---- sign-up -------------------------------------------------------------------------------------

async function showSignUp(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, status: number, v: Partial<SignUpView> = {}) {
  return sendCardPage(ctx, reply, status, signUpPage({ action: paths(ctx).signup, csrf: await csrf(ctx, request, reply), signInUrl: paths(ctx).account, ...v }));
}

export function signUpGet(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const token = query(request, 'invite');
    if (token !== undefined) {
      const invitation = await openInvitation(ctx, token);
      if (!invitation || signUpPolicy(ctx) === 'closed') return invalidLinkPage(ctx, reply, 'This invitation', { url: paths(ctx).account, label: 'Sign in' });
      return showSignUp(ctx, request, reply, 200, { invite: { token, email: invitation.email } });
    }
    if (signUpPolicy(ctx) !== 'open') return closedPage(ctx, reply);
    return showSignUp(ctx, request, reply, 200);
  };
}

export function signUpPost(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const form = await checkedForm(ctx, request, reply, 'Nothing was sent. Open the sign-up page again.');
    if (!form) return reply;
    const input = { username: form.get('username') ?? '', email: form.get('email') ?? '', password: form.get('password') ?? '', invite: form.get('invite') };
    const invitation = input.invite !== undefined ? await openInvitation(ctx, input.invite) : null;
    if (input.invite !== undefined && !invitation) return invalidLinkPage(ctx, reply, 'This invitation', { url: paths(ctx).account, label: 'Sign in' });
    if (!invitation && signUpPolicy(ctx) !== 'open') return closedPage(ctx, reply);
    const shown = { username: input.username, email: input.email, invite: invitation && input.invite ? { token: input.invite, email: invitation.email } : undefined };
    if (await overLimit(ctx, request, reply, 'signup', invitation ? invitation.email : input.email)) return reply;
    let made;
    try {
      made = await signUp(ctx, input);
    } catch (e) {
      const problem = modelProblem(e, 'username');
      if (!problem) throw e;
      return showSignUp(ctx, request, reply, problem.status, { ...shown, error: asSentence(problem.message, 'Nothing was made.'), fieldErrors: problem.detail });
    }
    if (invitation && made.user)
      return sendCardPage(ctx, reply, 201, donePage({ title: 'Your account is ready', message: `Welcome, ${made.user.username}. Sign in with your new password.`, link: { url: paths(ctx).account, label: 'Sign in' } }));
    // The same page whether the address was free (a verification link) or someone's (a mail telling its owner).
    return sendCardPage(ctx, reply, 200, checkMailPage({ title: 'Check your mail', message: `We sent a link to ${made.email}. Open it to confirm your address, then sign in.`, backUrl: paths(ctx).account, backLabel: 'Sign in' }));
  };
}

// ---- the verification of an address -------------------------------------------------------------

export function verifyGet(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const token = query(request, 'token') ?? '';
    return sendCardPage(
      ctx,
      reply,
      200,
      confirmLinkPage({ title: 'Confirm your e-mail address', message: 'Press the button to confirm that this address is yours.', action: paths(ctx).verify, csrf: await csrf(ctx, request, reply), token, button: 'Confirm my address' }),
    );
  };
}

export function verifyPost(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const form = await checkedForm(ctx, request, reply, 'Nothing was changed. Open the link in the mail again.');
    if (!form) return reply;
    const done = await verifyEmailLink(ctx, form.get('token'));
    if (!done) return invalidLinkPage(ctx, reply, 'This confirmation', { url: paths(ctx).account, label: 'Your account' });
    const message = done.outcome === 'changed' ? `Your account's e-mail address is now ${done.user.email}.` : `Thank you, ${done.user.username}: your address ${done.user.email} is confirmed. You can sign in now.`;
    return sendCardPage(ctx, reply, 200, donePage({ title: 'Address confirmed', message, link: { url: paths(ctx).account, label: done.outcome === 'changed' ? 'Your account' : 'Sign in' } }));
  };
}

// ---- password reset -----------------------------------------------------------------------------

export function resetGet(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const token = query(request, 'token');
    if (token === undefined) return sendCardPage(ctx, reply, 200, resetRequestPage({ action: paths(ctx).reset, csrf: await csrf(ctx, request, reply), signInUrl: paths(ctx).account }));
    const user = await openResetLink(ctx, token);
    if (!user) return invalidLinkPage(ctx, reply, 'This reset', { url: paths(ctx).reset, label: 'Ask for a new link' });
    return sendCardPage(ctx, reply, 200, newPasswordPage({ action: paths(ctx).reset, csrf: await csrf(ctx, request, reply), token, username: user.username }));
  };
}

export function resetPost(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const form = await checkedForm(ctx, request, reply, 'Nothing was changed. Open the page again.');
    if (!form) return reply;
    return form.get('token') !== undefined ? setNewPassword(ctx, request, reply, form) : askForReset(ctx, request, reply, form);
  };
}

/**
 * "Forgot your password?": the same page, at once, whatever was typed. The lookup and the mail
 * happen after the answer, so that its time says nothing of whether the account exists.
 */
async function askForReset(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, form: Params) {
  const login = (form.get('login') ?? '').trim();
  if (!login) return sendCardPage(ctx, reply, 400, resetRequestPage({ action: paths(ctx).reset, csrf: await csrf(ctx, request, reply), signInUrl: paths(ctx).account, error: 'Enter your username or e-mail address.' }));
  if (await overLimit(ctx, request, reply, 'reset', login)) return reply;
  setImmediate(() => void requestPasswordReset(ctx, login).catch((e: Error) => request.log.warn(`password reset request: ${e.message}`)));
  return sendCardPage(
    ctx,
    reply,
    200,
    checkMailPage({ title: 'Check your mail', message: 'If an account matches what you typed and has an e-mail address, we sent it a link to choose a new password. The link works for 1 hour.', backUrl: paths(ctx).account, backLabel: 'Back to sign in' }),
  );
}

async function setNewPassword(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, form: Params) {
  const token = form.get('token');
  let user;
  try {
    user = await resetPassword(ctx, token, form.get('password') ?? '');
  } catch (e) {
    const problem = modelProblem(e);
    if (!problem) throw e;
    const owner = await openResetLink(ctx, token);
    if (!owner) return invalidLinkPage(ctx, reply, 'This reset', { url: paths(ctx).reset, label: 'Ask for a new link' });
    return sendCardPage(ctx, reply, problem.status, newPasswordPage({ action: paths(ctx).reset, csrf: await csrf(ctx, request, reply), token: token!, username: owner.username, error: asSentence(problem.message, 'Nothing was changed.') }));
  }
  if (!user) return invalidLinkPage(ctx, reply, 'This reset', { url: paths(ctx).reset, label: 'Ask for a new link' });
  return sendCardPage(ctx, reply, 200, donePage({ title: 'Your password is changed', message: `${user.username}, sign in with your new password. Every device that was signed in has been signed out.`, link: { url: paths(ctx).account, label: 'Sign in' } }));
}
