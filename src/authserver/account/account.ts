import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { asSentence, modelProblem } from '../../contract/errors.js';
import { scopeLabel } from '../../contract/scopes.js';
import { audit } from '../audit.js';
import { signIn, throttled } from '../login-throttle.js';
import { changePassword, checkProfile, updateProfile, userSubject, type User } from '../model/users.js';
import { findClient } from '../model/clients.js';
import { metadataDocumentHost, nullIfRefused } from '../model/client-metadata-document.js';
import { pendingEmailChange, requestEmailChange, unverifiedSignIn } from '../model/lifecycle.js';
import type { Params } from '../params.js';
import { AMR, endSession, sessionUser, startSession } from '../sessions.js';
import { listLiveGrantRows } from '../store/grants.js';
import { revokeGrant } from '../tokens.js';
import { browserBinding, csrfToken } from '../authorize/csrf.js';
import { checkedForm, pageHeaders, sendCardPage } from '../authorize/pages.js';
import { describeDuration } from '../authorize/views.js';
import { accountPage, accountSignInPage, type AuthorizedApp, type TwoStepView } from './account-view.js';
import { enrolmentPage, enrolmentQr, secondFactorPage } from '../authorize/factor-views.js';
import { beginSecondStep, completeSecondStep, secondStepFor, type SecondStepState } from '../second-step.js';
import { confirmTotp, listSecondFactors, mustHaveSecondFactor, recoveryCodesLeft, removeSecondFactor, renewRecoveryCodes, startTotpEnrolment, openTotpEnrolment } from '../model/factors.js';
import { loginCookies } from '../sessions.js';
import { passkeyRegistrationOptions, registerPasskey } from '../model/passkeys.js';
import { passkeyForm } from '../authorize/factor-views.js';
import { Readable } from 'node:stream';
import { deleteAccount, exportAccount } from '../model/account-data.js';
import { accountDeletedPage } from './account-view.js';
import { shownHomePageHost } from '../model/registration.js';

// {auth_url}/account: the signed-in user's authorized applications, each revocable, sign out and
// a password change. Plain server-rendered forms (no script), each POST checked against the
// browser's CSRF token; every change answers 303 back to the page (post/redirect/get).

const NOTICES: Record<string, string> = {
  revoked: 'Access revoked. The application can no longer use it.',
  password: 'Your password was changed.',
  signedout: 'You are signed out.',
  'factor-removed': 'The second factor was removed.',
  profile: 'Your profile was saved.',
  'email-sent': 'We sent a link to your new address. Your address changes when you open it.',
};

export function accountPath(ctx: AppContext): string {
  return `${ctx.config.basePath}${ctx.config.auth.path}/account`;
}

const when = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace(/:\d\d\.\d+Z$/, ' UTC');

async function authorizedApps(ctx: AppContext, user: User): Promise<AuthorizedApp[]> {
  const rows = await listLiveGrantRows(ctx.store, { subject: userSubject(user.id) }, Date.now(), 1000);
  return Promise.all(
    rows.map(async (g) => {
      // A metadata document that cannot be fetched now leaves the grant listed under its client_id.
      const client = await findClient(ctx, g.client_id).catch(nullIfRefused);
      const created = Number(g.created_at);
      const expires = Number(g.expires_at);
      return {
        grantId: g.id,
        clientId: g.client_id,
        clientName: client?.name ?? g.client_id,
        clientHost: metadataDocumentHost(g.client_id) ?? (client ? await shownHomePageHost(ctx, client) : null),
        scopes: g.scope.split(' ').filter(Boolean).map((s) => scopeLabel(ctx.collections, s)),
        granted: when(created),
        expires: `${when(expires)} (valid for ${describeDuration(Math.round((expires - created) / 1000))})`,
        lastUsed: g.last_used_at === null ? 'never' : when(g.last_used_at),
      };
    }),
  );
}

/** The "Two-step sign-in" section: the factors, and the set-up of an authenticator while there is none (`enrolment`: the one a refused form carried, kept). */
async function twoStep(ctx: AppContext, user: User, csrf: string, extra: { recoveryCodes?: string[]; enrolment?: string } = {}): Promise<TwoStepView> {
  const factors = await listSecondFactors(ctx, user);
  const started = factors.some((f) => f.kind === 'totp') ? null : (openTotpEnrolment(ctx, user, extra.enrolment) ?? startTotpEnrolment(ctx, user));
  return {
    factors: factors.map((f) => ({ id: f.id, kind: f.kind, label: f.label, added: when(f.createdAt), lastUsed: f.lastUsedAt === null ? 'never' : when(f.lastUsedAt) })),
    recoveryCodesLeft: factors.length ? await recoveryCodesLeft(ctx, user) : 0,
    enrolment: started ? { ...started, qr: await enrolmentQr(started.uri) } : undefined,
    recoveryCodes: extra.recoveryCodes,
    required: mustHaveSecondFactor(ctx, user),
    passkey: passkeyForm({ action: accountPath(ctx), hidden: { csrf_token: csrf, action: 'passkey-register' }, options: await passkeyRegistrationOptions(ctx, user), kind: 'register', askPassword: user.username }),
  };
}

async function show(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  status = 200,
  message: { notice?: string; error?: string; username?: string; recoveryCodes?: string[]; enrolment?: string; profile?: ProfileForm } = {},
  /** The user when the session was (re)started on this very answer (the request still carries the old cookie). */
  signedInNow?: User,
) {
  const csrf = await csrfToken(ctx, await browserBinding(ctx, request, reply));
  const user = signedInNow ?? (await sessionUser(ctx, request));
  const { recoveryCodes, enrolment, profile, ...messages } = message;
  const base = `${ctx.config.basePath}${ctx.config.auth.path}`;
  if (!user)
    return sendCardPage(ctx, reply, status, accountSignInPage({ action: accountPath(ctx), csrf, resetUrl: `${base}/reset`, signUpUrl: ctx.config.auth.signup === 'open' ? `${base}/signup` : undefined, ...messages }));
  const view = accountPage({
    action: accountPath(ctx),
    csrf,
    username: user.username,
    profile: profile ?? profileOf(user),
    pendingEmail: await pendingEmailChange(ctx, user),
    apps: await authorizedApps(ctx, user),
    twoStep: await twoStep(ctx, user, csrf, { recoveryCodes, enrolment }),
    ...messages,
  });
  return sendCardPage(ctx, reply, status, view);
}

const back = (ctx: AppContext, reply: FastifyReply, done: keyof typeof NOTICES) => {
  pageHeaders(reply);
  return reply.redirect(`${accountPath(ctx)}?done=${done}`, 303);
};

export function accountGet(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const done = (request.query as Record<string, unknown>).done;
    if ((done === 'deleted' || done === 'deleting') && !(await sessionUser(ctx, request))) return sendCardPage(ctx, reply, 200, accountDeletedPage({ recordsPending: done === 'deleting' }));
    return show(ctx, request, reply, 200, { notice: typeof done === 'string' && Object.hasOwn(NOTICES, done) ? NOTICES[done] : undefined });
  };
}

export function accountPost(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const form = await checkedForm(ctx, request, reply, 'Nothing was changed. Open your account page again.');
    if (!form) return reply;
    const step = form.get('step');
    if (step === 'second-factor' || step === 'enrol') return accountSecondStep(ctx, request, reply, form);
    const action = form.get('action');
    if (action === 'signin') return accountSignIn(ctx, request, reply, form);
    const user = await sessionUser(ctx, request);
    if (action === 'signout') {
      await endSession(ctx, request, reply);
      return back(ctx, reply, 'signedout');
    }
    if (!user) return show(ctx, request, reply, 401, { error: 'Your session has ended. Sign in again.' });
    if (action === 'export' || action === 'delete-account') return accountData(ctx, request, reply, user, form, action);
    if (action === 'revoke') {
      const grantId = form.get('grant_id') ?? '';
      // Only a live grant this user gave: another user's, a made-up or an ended one changes nothing.
      const own = (await listLiveGrantRows(ctx.store, { subject: userSubject(user.id) }, Date.now(), 1000)).find((g) => g.id === grantId);
      if (!own) return show(ctx, request, reply, 404, { error: 'That authorization does not exist or has already ended.' });
      await revokeGrant(ctx, own.id, 'revoked by the user on the account page', userSubject(user.id));
      audit(ctx, request.log, 'grant.revoked', { client_id: own.client_id, subject: userSubject(user.id), reason: 'the user revoked it on the account page' });
      return back(ctx, reply, 'revoked');
    }
    if (action === 'password') return accountPassword(ctx, request, reply, user, form);
    if (action === 'profile') return accountProfile(ctx, request, reply, user, form);
    if (action === 'totp-confirm') return accountConfirmTotp(ctx, request, reply, user, form);
    if (action === 'passkey-register') return accountRegisterPasskey(ctx, request, reply, user, form);
    if (action === 'factor-remove' || action === 'recovery-codes') return accountWithPassword(ctx, request, reply, user, form, action);
    return show(ctx, request, reply, 400, { error: 'The form was not understood.' });
  };
}

async function accountSignIn(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, form: Params) {
  const username = form.get('username');
  const password = form.get('password');
  if (!username || !password) return show(ctx, request, reply, 400, { error: 'Enter your username and password.', username });
  const outcome = await signIn(ctx, request.log, { username, password, ip: request.ip, clientId: null, via: 'account page' });
  if ('retryAfter' in outcome) {
    reply.header('retry-after', throttled(outcome.retryAfter).headers['retry-after']);
    return show(ctx, request, reply, 429, { error: `Too many failed attempts. Try again in ${describeDuration(outcome.retryAfter)}.`, username });
  }
  if ('failed' in outcome) return show(ctx, request, reply, 401, { error: 'The username or password is not correct.', username });
  if ('unverified' in outcome) return show(ctx, request, reply, 403, { error: await unverifiedSignIn(ctx, outcome.unverified), username });
  const step = await secondStepFor(ctx, outcome.user);
  if (step) return renderSecondStep(ctx, request, reply, await beginSecondStep(ctx, request, reply, loginCookies(ctx), outcome.user, step));
  await startSession(ctx, request, reply, outcome.user.id, loginCookies(ctx), AMR.password);
  audit(ctx, request.log, 'login.succeeded', { client_id: null, subject: userSubject(outcome.user.id), ip: request.ip });
  pageHeaders(reply);
  return reply.redirect(accountPath(ctx), 303);
}

async function renderSecondStep(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, s: SecondStepState, status = 200, error?: string) {
  const csrf = await csrfToken(ctx, await browserBinding(ctx, request, reply));
  const hidden = { csrf_token: csrf, step: s.step, pending: s.pending };
  if (s.step === 'second-factor') {
    const recoveryOnly = !(await listSecondFactors(ctx, s.user)).some((f) => f.kind === 'totp');
    return sendCardPage(ctx, reply, status, secondFactorPage({ action: accountPath(ctx), hidden, username: s.user.username, error, recoveryOnly }));
  }
  const e = s.enrolment!;
  return sendCardPage(ctx, reply, status, enrolmentPage({ action: accountPath(ctx), hidden: { ...hidden, enrolment: e.sealed }, secret: e.secret, uri: e.uri, qr: await enrolmentQr(e.uri), username: s.user.username, error }));
}

/** The account page's sign-in, second step: the code, or the set-up the policy asks for (then the recovery codes on the account page). */
async function accountSecondStep(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, form: Params) {
  const outcome = await completeSecondStep(ctx, request, request.log, loginCookies(ctx), form, 'account page', null);
  if ('expired' in outcome) return show(ctx, request, reply, 401, { error: 'Your sign-in has expired. Enter your username and password again.' });
  if ('again' in outcome) {
    if (outcome.retryAfter) reply.header('retry-after', throttled(outcome.retryAfter).headers['retry-after']);
    return renderSecondStep(ctx, request, reply, outcome.again, outcome.status, outcome.error);
  }
  await startSession(ctx, request, reply, outcome.user.id, loginCookies(ctx), AMR.passwordAndCode);
  audit(ctx, request.log, 'login.succeeded', { client_id: null, subject: userSubject(outcome.user.id), ip: request.ip });
  if (outcome.recoveryCodes.length) {
    // The session cookie is on this very answer: the page is rendered for the user just signed in.
    const csrf = await csrfToken(ctx, await browserBinding(ctx, request, reply));
    return sendCardPage(
      ctx,
      reply,
      200,
      accountPage({ action: accountPath(ctx), csrf, username: outcome.user.username, profile: profileOf(outcome.user), apps: await authorizedApps(ctx, outcome.user), twoStep: await twoStep(ctx, outcome.user, csrf, { recoveryCodes: outcome.recoveryCodes }), notice: 'Two-step sign-in is on.' }),
    );
  }
  pageHeaders(reply);
  return reply.redirect(accountPath(ctx), 303);
}

/** Turns on an authenticator app: the code it shows confirms the set-up; the recovery codes are shown on this answer only. */
async function accountConfirmTotp(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, user: User, form: Params) {
  // A session alone adds no factor (a stolen cookie must not plant one that outlives a new password).
  if (!(await passwordAgain(ctx, request, reply, user, form.get('password'), { enrolment: form.get('enrolment') }))) return reply;
  try {
    const { recoveryCodes } = await confirmTotp(ctx, user, form.get('enrolment'), form.get('otp'), userSubject(user.id));
    audit(ctx, request.log, 'user.factor_added', { subject: userSubject(user.id), reason: 'account page: authenticator app' });
    // The sign-in of this browser now has passed the new factor; every password-only session of the user ends (sessions.ts).
    await startSession(ctx, request, reply, user.id, loginCookies(ctx), AMR.passwordAndCode);
    return show(ctx, request, reply, 200, { notice: 'Two-step sign-in is on: your authenticator app is set up.', recoveryCodes }, user);
  } catch (e) {
    const problem = modelProblem(e);
    if (!problem) throw e;
    return show(ctx, request, reply, problem.status, { error: asSentence(problem.message), enrolment: form.get('enrolment') });
  }
}

/**
 * The password asked again (checked like any sign-in: throttled) before a change to how the account
 * signs in: true when it is right; else false, and the page that says why has been sent.
 */
async function passwordAgain(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, user: User, password: string | undefined, extra: { enrolment?: string; profile?: ProfileForm } = {}): Promise<boolean> {
  const outcome = await signIn(ctx, request.log, { username: user.username, password: password ?? '', ip: request.ip, clientId: null, via: 'account page' });
  if ('retryAfter' in outcome) {
    reply.header('retry-after', throttled(outcome.retryAfter).headers['retry-after']);
    await show(ctx, request, reply, 429, { error: `Too many failed attempts. Try again in ${describeDuration(outcome.retryAfter)}.`, ...extra });
    return false;
  }
  if ('failed' in outcome) {
    await show(ctx, request, reply, 400, { error: 'The password is not correct. Nothing was changed.', ...extra });
    return false;
  }
  return true;
}

/** Removing a factor and renewing the recovery codes take the password again. */
async function accountWithPassword(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, user: User, form: Params, action: 'factor-remove' | 'recovery-codes') {
  if (!(await passwordAgain(ctx, request, reply, user, form.get('password')))) return reply;
  if (action === 'recovery-codes') {
    try {
      const recoveryCodes = await renewRecoveryCodes(ctx, user, userSubject(user.id));
      return show(ctx, request, reply, 200, { notice: 'New recovery codes: the old ones no longer work.', recoveryCodes });
    } catch (e) {
      const problem = modelProblem(e);
      if (!problem) throw e;
      return show(ctx, request, reply, problem.status, { error: asSentence(problem.message) });
    }
  }
  const factorId = form.get('factor_id') ?? '';
  const factors = await listSecondFactors(ctx, user);
  if (!factors.some((f) => f.id === factorId)) return show(ctx, request, reply, 404, { error: 'That second factor does not exist or was removed already.' });
  try {
    await removeSecondFactor(ctx, user, factorId, userSubject(user.id));
  } catch (e) {
    const problem = modelProblem(e);
    if (!problem) throw e;
    return show(ctx, request, reply, problem.status, { error: asSentence(problem.message, 'Nothing was changed.') });
  }
  audit(ctx, request.log, 'user.factor_removed', { subject: userSubject(user.id), reason: 'account page' });
  return back(ctx, reply, 'factor-removed');
}

type ProfileForm = { name: string; email: string; emailVerified: boolean };
const profileOf = (user: User): ProfileForm => ({ name: user.name ?? '', email: user.email ?? '', emailVerified: user.emailVerified });

/**
 * Name and e-mail address. The name changes at once; a new address only once the link mailed to
 * it is opened (the old address is told), so an account never carries an address its user does
 * not hold. Emptying the field removes the address.
 */
async function accountProfile(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, user: User, form: Params) {
  const typed = { name: form.values.get('name') ?? '', email: (form.values.get('email') ?? '').trim() };
  const emailChanges = typed.email !== '' && typed.email.toLowerCase() !== (user.email ?? '').toLowerCase();
  const emailRemoved = typed.email === '' && user.email !== null;
  const refused = { profile: { ...typed, emailVerified: false } };
  try {
    // Both fields are checked before either is acted on: a refused form changes nothing.
    if (emailChanges) checkProfile({ name: typed.name, email: typed.email });
    // A new address can take the account over (a reset link goes there), and removing it takes
    // the way back: a session alone is not enough, the password is asked again, as for a second factor.
    if ((emailChanges || emailRemoved) && !(await passwordAgain(ctx, request, reply, user, form.get('password'), refused))) return reply;
    if (emailChanges) await requestEmailChange(ctx, user, typed.email);
    // The same address in other letters' case is no change (it would lose its verified mark).
    const changes = emailChanges || !emailRemoved ? { name: typed.name } : { name: typed.name, email: null };
    await updateProfile(ctx, user.username, changes, userSubject(user.id));
  } catch (e) {
    const problem = modelProblem(e);
    if (!problem) throw e;
    return show(ctx, request, reply, problem.status, { error: asSentence(problem.message, 'Nothing was changed.'), ...refused });
  }
  return back(ctx, reply, emailChanges ? 'email-sent' : 'profile');
}

async function accountPassword(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, user: User, form: Params) {
  const current = form.get('current_password') ?? '';
  const next = form.get('new_password') ?? '';
  // The current password is checked like any sign-in (throttled): a left-open session is not enough.
  const outcome = await signIn(ctx, request.log, { username: user.username, password: current, ip: request.ip, clientId: null, via: 'account page' });
  if ('retryAfter' in outcome) {
    reply.header('retry-after', throttled(outcome.retryAfter).headers['retry-after']);
    return show(ctx, request, reply, 429, { error: `Too many failed attempts. Try again in ${describeDuration(outcome.retryAfter)}.` });
  }
  if ('failed' in outcome) return show(ctx, request, reply, 400, { error: 'The current password is not correct. Nothing was changed.' });
  try {
    await changePassword(ctx, user.username, next, userSubject(user.id));
  } catch (e) {
    const problem = modelProblem(e);
    if (!problem) throw e;
    return show(ctx, request, reply, problem.status, { error: asSentence(problem.message, 'Nothing was changed.') });
  }
  audit(ctx, request.log, 'user.password_changed', { subject: userSubject(user.id), reason: 'account page' });
  return back(ctx, reply, 'password');
}

/** Registers a passkey from the ceremony's result the page's script posted. */
async function accountRegisterPasskey(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, user: User, form: Params) {
  if (!(await passwordAgain(ctx, request, reply, user, form.get('password')))) return reply;
  try {
    const recoveryCodes = await registerPasskey(ctx, user, form.get('credential'), userSubject(user.id));
    audit(ctx, request.log, 'user.factor_added', { subject: userSubject(user.id), reason: 'account page: passkey' });
    await startSession(ctx, request, reply, user.id, loginCookies(ctx), AMR.passkey);
    return show(ctx, request, reply, 200, { notice: 'Your passkey is registered: sign in with it on the login page.', recoveryCodes }, user);
  } catch (e) {
    const problem = modelProblem(e);
    if (!problem) throw e;
    return show(ctx, request, reply, problem.status, { error: asSentence(problem.message) });
  }
}

/**
 * "Your data": the export needs the session only (it changes nothing; the form's CSRF token was
 * checked), deleting the account the password again. After a deletion the browser is signed out
 * and sent to a page that says so.
 */
async function accountData(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, user: User, form: Params, action: 'export' | 'delete-account') {
  const subject = userSubject(user.id);
  if (action === 'export') {
    reply.header('content-type', 'application/json; charset=utf-8');
    // A user name is [A-Za-z0-9._@+-]: nothing to quote in the file name.
    reply.header('content-disposition', `attachment; filename="gatehouse-${user.username}-${new Date().toISOString().slice(0, 10)}.json"`);
    reply.header('cache-control', 'no-store');
    audit(ctx, request.log, 'user.exported', { subject, reason: 'account page' });
    return reply.send(Readable.from(exportAccount(ctx, user)));
  }
  if (!(await passwordAgain(ctx, request, reply, user, form.get('password')))) return reply;
  const log = request.log;
  const deleted = await deleteAccount(ctx, user, subject, (err) => log.error({ err, subject }, 'deleting the records of a deleted account stopped; the sweeper will finish it'));
  if (deleted) audit(ctx, log, 'user.deleted', { subject, username: user.username, reason: 'the user deleted their account on the account page' });
  await endSession(ctx, request, reply);
  pageHeaders(reply);
  return reply.redirect(`${accountPath(ctx)}?done=${deleted?.recordsDeleted === null ? 'deleting' : 'deleted'}`, 303);
}
