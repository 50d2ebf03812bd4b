import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { audit } from '../audit.js';
import { recordFailure, signIn, throttled } from '../login-throttle.js';
import { userSubject, type User } from '../model/users.js';
import { passkeySignInOptions, verifyPasskeySignIn } from '../model/passkeys.js';
import { listSecondFactors } from '../model/factors.js';
import { unverifiedSignIn } from '../model/lifecycle.js';
import type { Params } from '../params.js';
import { beginSecondStep, completeSecondStep, secondStepFor, type SecondStepState } from '../second-step.js';
import { AMR, endSession, loginCookies, sessionOf, startSession, type SignedIn } from '../sessions.js';
import { browserBinding, csrfToken } from './csrf.js';
import { enrolmentPage, enrolmentQr, passkeyForm, recoveryCodesPage, secondFactorPage } from './factor-views.js';
import { pageHeaders, renderLogin, sendCardPage, sendErrorPage, type BrowserFlow } from './pages.js';
import { readIdTokenHint } from '../oidc/id-token.js';
import { describeDuration } from './views.js';

// The login step of the authorization flow: the same throttled sign-in as the password grant,
// then, for a user with a second factor (or who must set one up, `auth.mfa`), the second step
// (second-step.ts). The session starts only when both are done. The flow (pages.ts `BrowserFlow`)
// is /authorize's request or /device's user code: where the forms post and where to go on.

export async function login(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, req: BrowserFlow, form: Params) {
  const username = form.get('username');
  const password = form.get('password');
  if (!username || !password) return renderLogin(ctx, request, reply, req, 400, 'Enter your username and password.', username);
  const outcome = await signIn(ctx, request.log, { username, password, ip: request.ip, clientId: req.client.id, via: 'login form' });
  if ('retryAfter' in outcome) {
    reply.header('retry-after', throttled(outcome.retryAfter).headers['retry-after']);
    return renderLogin(ctx, request, reply, req, 429, `Too many failed attempts. Try again in ${describeDuration(outcome.retryAfter)}.`, username);
  }
  if ('failed' in outcome) return renderLogin(ctx, request, reply, req, 401, 'The username or password is not correct.', username);
  if ('unverified' in outcome) return renderLogin(ctx, request, reply, req, 403, await unverifiedSignIn(ctx, outcome.unverified), username);
  const { user } = outcome;
  // OpenID Connect id_token_hint: the application expects one user; a sign-in as another is no answer to it.
  if (await hintRefuses(ctx, req, user)) return renderLogin(ctx, request, reply, req, 401, anotherAccount(req));
  const step = await secondStepFor(ctx, user);
  if (step) return renderSecondStep(ctx, request, reply, req, await beginSecondStep(ctx, request, reply, loginCookies(ctx), user, step));
  return signedIn(ctx, request, reply, req, user, AMR.password);
}

/** OpenID Connect id_token_hint: the application expects one user; a sign-in as another, by any way, is no answer to it. */
async function hintRefuses(ctx: AppContext, req: BrowserFlow, user: User): Promise<boolean> {
  return req.idTokenHint !== null && (await readIdTokenHint(ctx, req.idTokenHint))?.sub !== userSubject(user.id);
}

const anotherAccount = (req: BrowserFlow) => `${req.client.name} asked for another account. Sign in as that account, or go back to the application.`;

/** The posted second step (`step=second-factor` or `step=enrol`). */
export async function loginSecondStep(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, req: BrowserFlow, form: Params) {
  const outcome = await completeSecondStep(ctx, request, request.log, loginCookies(ctx), form, 'login form', req.client.id);
  if ('expired' in outcome) return renderLogin(ctx, request, reply, req, 401, 'Your sign-in has expired. Enter your username and password again.');
  if ('again' in outcome) {
    if (outcome.retryAfter) reply.header('retry-after', throttled(outcome.retryAfter).headers['retry-after']);
    return renderSecondStep(ctx, request, reply, req, outcome.again, outcome.status, outcome.error);
  }
  if (outcome.recoveryCodes.length === 0) return signedIn(ctx, request, reply, req, outcome.user, AMR.passwordAndCode);
  await startSignedInSession(ctx, request, reply, req, outcome.user, AMR.passwordAndCode);
  return sendCardPage(ctx, reply, 200, recoveryCodesPage({ codes: outcome.recoveryCodes, continueUrl: await req.continueUrl(), continueLabel: `Continue to ${req.client.name}` }));
}

async function renderSecondStep(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, req: BrowserFlow, s: SecondStepState, status = 200, error?: string) {
  const csrf = await csrfToken(ctx, await browserBinding(ctx, request, reply));
  const hidden = { request: req.raw, csrf_token: csrf, step: s.step, pending: s.pending };
  const action = req.action;
  if (s.step === 'second-factor') {
    // A user with a passkey may use it here instead (a passkey sign-in is both factors).
    const kinds = new Set((await listSecondFactors(ctx, s.user)).map((f) => f.kind));
    const passkey = kinds.has('passkey')
      ? passkeyForm({ action, hidden: { request: req.raw, csrf_token: csrf, step: 'passkey' }, options: await passkeySignInOptions(ctx), kind: 'signin' })
      : undefined;
    return sendCardPage(ctx, reply, status, secondFactorPage({ action, hidden, username: s.user.username, error, recoveryOnly: !kinds.has('totp'), passkey }));
  }
  const e = s.enrolment!;
  return sendCardPage(ctx, reply, status, enrolmentPage({ action, hidden: { ...hidden, enrolment: e.sealed }, secret: e.secret, uri: e.uri, qr: await enrolmentQr(e.uri), username: s.user.username, error }));
}

async function startSignedInSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, req: BrowserFlow, user: User, amr: readonly string[]) {
  await startSession(ctx, request, reply, user.id, loginCookies(ctx), amr);
  audit(ctx, request.log, 'login.succeeded', { client_id: req.client.id, subject: userSubject(user.id), ip: request.ip });
}

async function signedIn(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, req: BrowserFlow, user: User, amr: readonly string[]) {
  await startSignedInSession(ctx, request, reply, req, user, amr);
  pageHeaders(reply);
  // Post/redirect/get: the consent page is a plain GET of the original request (303: the resource API answers no 3xx but 303, docs/api.md#status-codes).
  return reply.redirect(await req.continueUrl(), 303);
}

/** A passkey sign-in (`step=passkey`, `credential`): both factors at once, so no second step. */
export async function loginWithPasskey(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, req: BrowserFlow, form: Params) {
  const user = await verifyPasskeySignIn(ctx, form.get('credential'));
  if (!user) {
    // In the feed like every failed sign-in (no user name: a passkey response names none that can be trusted).
    await recordFailure(ctx, request.log, { username: '', ip: request.ip, clientId: req.client.id, via: 'login form' }, 'passkey');
    return renderLogin(ctx, request, reply, req, 401, 'The passkey was not accepted. Try again, or sign in with your password.');
  }
  if (await hintRefuses(ctx, req, user)) return renderLogin(ctx, request, reply, req, 401, anotherAccount(req));
  return signedIn(ctx, request, reply, req, user, AMR.passkey);
}

/**
 * A POST of a browser flow's pages (/authorize, /device), past its CSRF check: the sign-in steps
 * (password, second factor, passkey, sign out and back to `restartUrl`), then, signed in, the
 * consent form, which the flow answers itself.
 */
export async function browserFormStep(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  flow: BrowserFlow,
  form: Params,
  restartUrl: () => Promise<string> | string,
  consent: (signedIn: SignedIn) => Promise<FastifyReply>,
): Promise<FastifyReply> {
  const step = form.get('step');
  if (step === 'login') return login(ctx, request, reply, flow, form);
  if (step === 'second-factor' || step === 'enrol') return loginSecondStep(ctx, request, reply, flow, form);
  if (step === 'passkey') return loginWithPasskey(ctx, request, reply, flow, form);
  if (step === 'logout') {
    await endSession(ctx, request, reply);
    pageHeaders(reply);
    return reply.redirect(await restartUrl(), 303);
  }
  const signedIn = await sessionOf(ctx, request);
  if (!signedIn) return renderLogin(ctx, request, reply, flow, 401, 'Your session has ended. Sign in again.');
  if (step === 'consent') return consent(signedIn);
  return sendErrorPage(ctx, reply, 400, 'Invalid request', 'The form was not understood.');
}
