import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { OAuthError } from '../../platform/http/errors.js';
import { DEVICE_CODE_GRANT, decideDeviceAuthorization, devicePagePath, lookUpUserCode, showUserCode } from '../device-authorization.js';
import { throttled, userCodeAttempt } from '../login-throttle.js';
import { findClient } from '../model/clients.js';
import { parseUrlEncoded, queryParams, type Params } from '../params.js';
import { withAdminRule } from '../scope-request.js';
import { sessionOf, type SignedIn } from '../sessions.js';
import type { DeviceCodeRow } from '../store/device-codes.js';
import { readConsentDecision } from './consent.js';
import { browserBinding, csrfToken } from './csrf.js';
import { deviceDecidedPage, userCodePage } from './device-view.js';
import { browserFormStep } from './login.js';
import { checkedForm, pageHeaders, renderConsent, renderLogin, sendCardPage, sendErrorPage, type ConsentFlow } from './pages.js';
import { describeDuration } from './views.js';

// GET/POST {auth_url}/device (RFC 8628 §3.3): the user types the code a device shows, signs in
// with /authorize's login (login.ts) and decides on its consent page (scope and validity). Like
// /authorize it keeps no state between pages: every form carries the user code (the hidden
// `request`), and every request looks it up again — counted per IP, so that wrong codes are
// throttled (login-throttle.ts `userCodeAttempt`) however they arrive.

/** A pending device request as the flow of the login and consent pages. */
interface DeviceFlow extends ConsentFlow {
  row: DeviceCodeRow;
}

async function sendCodeEntry(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, status = 200, error?: string, userCode?: string) {
  const csrf = await csrfToken(ctx, await browserBinding(ctx, request, reply));
  return sendCardPage(ctx, reply, status, userCodePage({ action: devicePagePath(ctx), csrf, userCode, error }), status >= 400 ? { problem: { error: error!, detail: { user_code: error! } } } : {});
}

/** The pending request of a typed code, or null when a page saying why not was sent. */
async function openDeviceFlow(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, typed: string): Promise<DeviceFlow | null> {
  pageHeaders(reply);
  const attempt = await userCodeAttempt(ctx, request.ip);
  if ('retryAfter' in attempt) {
    reply.header('retry-after', throttled(attempt.retryAfter).headers['retry-after']);
    await sendCodeEntry(ctx, request, reply, 429, `Too many wrong codes. Try again in ${describeDuration(attempt.retryAfter)}.`);
    return null;
  }
  const found = await lookUpUserCode(ctx, typed);
  if ('unknown' in found) {
    await sendCodeEntry(ctx, request, reply, 400, 'That code is not valid. Check the code on your device and type it again.', typed.slice(0, 20));
    return null;
  }
  await attempt.giveBack();
  if ('ended' in found) {
    if (found.ended === 'expired') sendErrorPage(ctx, reply, 400, 'This code has expired', 'Start again on your device to get a new code.');
    else sendErrorPage(ctx, reply, 400, 'This code was already used', 'Each code is used once. Start again on your device if it is still waiting.');
    return null;
  }
  const row = found.pending;
  const client = await findClient(ctx, row.client_id);
  if (!client) {
    sendErrorPage(ctx, reply, 400, 'Unknown application', 'The application that asked for this code is no longer registered.');
    return null;
  }
  const userCode = showUserCode(found.userCode);
  const raw = new URLSearchParams({ user_code: userCode }).toString();
  return {
    row,
    client,
    raw,
    action: devicePagePath(ctx),
    continueUrl: async () => `${devicePagePath(ctx)}?${raw}`,
    idTokenHint: null,
    scope: row.scope.split(' ').filter(Boolean),
    scopeGiven: row.scope_given === 1,
    redirectUri: null,
    notice: `Only continue if you started this on a device you own: ${client.name}, showing the code ${userCode}.`,
  };
}

/** The flow's scope as this user may be granted it (the admin rule); null when nothing is left (a page was sent). */
function forUser(ctx: AppContext, reply: FastifyReply, flow: DeviceFlow, signedIn: SignedIn): DeviceFlow | null {
  try {
    return { ...flow, scope: withAdminRule(flow.scope, flow.client, { user: signedIn.user, via: DEVICE_CODE_GRANT }) };
  } catch (e) {
    if (!(e instanceof OAuthError)) throw e;
    sendErrorPage(ctx, reply, 403, 'Not for this account', `${flow.client.name} asked for what this account cannot grant. ${e.description}.`);
    return null;
  }
}

/** Signed in: the consent page; else the login page. */
async function showNextStep(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, flow: DeviceFlow) {
  const signedIn = await sessionOf(ctx, request);
  if (!signedIn) return renderLogin(ctx, request, reply, flow);
  const asked = forUser(ctx, reply, flow, signedIn);
  if (!asked) return reply;
  return renderConsent(ctx, request, reply, asked, signedIn.user);
}

export function deviceGet(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    pageHeaders(reply);
    let typed: string | undefined;
    try {
      typed = queryParams(request).get('user_code');
    } catch {
      return sendErrorPage(ctx, reply, 400, 'Invalid request', 'The address could not be read.');
    }
    if (typed === undefined || typed === '') return sendCodeEntry(ctx, request, reply);
    const flow = await openDeviceFlow(ctx, request, reply, typed);
    if (!flow) return reply;
    return showNextStep(ctx, request, reply, flow);
  };
}

export function devicePost(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    pageHeaders(reply);
    const form = await checkedForm(ctx, request, reply, 'Type the code of your device again.');
    if (!form) return reply;
    const step = form.get('step');
    if (step === 'code') {
      const flow = await openDeviceFlow(ctx, request, reply, form.get('user_code') ?? '');
      if (!flow) return reply;
      // Post/redirect/get: the next page is the GET of the code (a reload does not post again).
      return reply.redirect(await flow.continueUrl(), 303);
    }
    let typed: string;
    try {
      typed = parseUrlEncoded(form.get('request') ?? '').get('user_code') ?? '';
    } catch {
      return sendErrorPage(ctx, reply, 400, 'Invalid request', 'The form could not be read.');
    }
    const flow = await openDeviceFlow(ctx, request, reply, typed);
    if (!flow) return reply;
    return browserFormStep(ctx, request, reply, flow, form, flow.continueUrl, (signedIn) => decide(ctx, request, reply, flow, signedIn, form));
  };
}

async function decide(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, flow: DeviceFlow, signedIn: SignedIn, form: Params) {
  const asked = forUser(ctx, reply, flow, signedIn);
  if (!asked) return reply;
  const decision = readConsentDecision(ctx, asked.scope, form);
  if ('again' in decision) return renderConsent(ctx, request, reply, asked, signedIn.user, 400, decision.again, decision.choices);
  const approved = !('deny' in decision);
  const done = await decideDeviceAuthorization(
    ctx,
    request.log,
    asked.row,
    signedIn,
    'deny' in decision ? { denied: true } : { approved: { scope: decision.scope, expiresAt: Date.now() + decision.ttl * 1000 } },
  );
  if (!done) return sendErrorPage(ctx, reply, 400, 'This code was already used', 'Each code is used once. Start again on your device if it is still waiting.');
  return sendCardPage(ctx, reply, 200, deviceDecidedPage(asked.client.name, approved));
}
