import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendPage, setPageHeaders, type Problem } from '../../platform/http/html/index.js';
import type { AppContext } from '../../contract/context.js';
import { ADMIN_SCOPE, scopeLabel } from '../../contract/scopes.js';
import { browserBinding, csrfToken, verifyCsrfToken } from './csrf.js';
import { bodyParams, type Params } from '../params.js';
import type { AuthorizationRequest } from './request.js';
import { formTarget } from './request.js';
import type { User } from '../model/users.js';
import { IDENTITY_LABELS, OPENID_SCOPE, isIdentityScope } from '../oidc/claims.js';
import { passkeySignInOptions } from '../model/passkeys.js';
import { passkeyForm } from './factor-views.js';
import { consentPage, type CardView, type ScopeGroup, describeDuration, errorPage, loginPage } from './views.js';

// Sending the authorization server's card pages (login, consent, account, errors) on the HTML kit.

/** The headers of a card page, for the redirects between pages too (`formTargets`: see setPageHeaders). */
export function pageHeaders(reply: FastifyReply, formTargets: string[] = []): void {
  setPageHeaders(reply, 'card', formTargets);
}

/** A card page; a refusal (status ≥ 400) goes as the JSON error body to a client that prefers JSON (`problem`, else the title). */
export function sendCardPage(ctx: AppContext, reply: FastifyReply, status: number, view: CardView, more: { problem?: Problem; formTargets?: string[] } = {}): FastifyReply {
  return sendPage(reply, { kind: 'card', basePath: ctx.config.basePath, status, ...view, ...more });
}

/** The page of a refused authorization request or form: what happened, and that nothing was shared. */
export function sendErrorPage(ctx: AppContext, reply: FastifyReply, status: number, title: string, message: string, problem?: Problem): FastifyReply {
  return sendCardPage(ctx, reply, status, errorPage(title, message), { problem });
}

export function validityChoices(ctx: AppContext): { seconds: number; label: string }[] {
  const max = ctx.config.auth.maxGrantTtl;
  const seconds = [...new Set([3600, 86400, 30 * 86400].filter((s) => s < max).concat(max))];
  return seconds.map((s) => ({ seconds: s, label: describeDuration(s) }));
}

export function authorizePath(ctx: AppContext): string {
  return `${ctx.config.basePath}${ctx.config.auth.path}/authorize`;
}

export async function renderLogin(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, req: AuthorizationRequest, status = 200, error?: string, username?: string) {
  const csrf = await csrfToken(ctx, await browserBinding(ctx, request, reply));
  // The passkey button: a discoverable-credential ceremony whose challenge is remembered now (docs/oauth.md, Passkeys).
  const passkey = passkeyForm({ action: authorizePath(ctx), hidden: { request: req.raw, csrf_token: csrf, step: 'passkey' }, options: await passkeySignInOptions(ctx), kind: 'signin' });
  const base = `${ctx.config.basePath}${ctx.config.auth.path}`;
  return sendCardPage(
    ctx,
    reply,
    status,
    loginPage({
      action: authorizePath(ctx),
      accountUrl: `${base}/account`,
      resetUrl: `${base}/reset`,
      signUpUrl: ctx.config.auth.signup === 'open' ? `${base}/signup` : undefined,
      clientName: req.client.name,
      request: { request: req.raw },
      csrf,
      error,
      username,
      passkey,
    }),
  );
}

/** What the user ticked and picked, kept when the page comes back with an error. */
export interface ConsentChoices {
  scopes: string[];
  ttl: number | null;
}

/**
 * The requested scopes as rows of the consent page: one per collection with Read and Write. Read
 * is ticked; Write only when the client named it in its request (a client that asked for nothing
 * in particular gets every scope it may have offered, and writing is the user's explicit choice).
 * `admin` is never ticked and says what it is: full control of the deployment.
 */
const IDENTITY_GROUP = ' identity'; // not a collection name (those have no spaces)

const ADMIN_WARNING =
  'Full control of this gatehouse deployment: every user, application, grant and setting, and every record through the admin API. Allow only for an administration tool you trust.';

export function consentGroups(ctx: AppContext, req: AuthorizationRequest, choices?: ConsentChoices): ScopeGroup[] {
  const explicit = req.scopeGiven;
  const groups = new Map<string, ScopeGroup>();
  for (const value of req.scope) {
    const m = /^(.+):(read|write)$/.exec(value);
    const model = m ? ctx.collections.get(m[1]) : undefined;
    const checked = choices ? choices.scopes.includes(value) : value !== ADMIN_SCOPE && (!m || m[2] === 'read' || explicit);
    const choice = { value, label: scopeLabel(ctx.collections, value), checked };
    if (isIdentityScope(value)) {
      const group = groups.get(IDENTITY_GROUP) ?? { title: 'Your identity', items: [] };
      const fixed = value === OPENID_SCOPE;
      group.items!.push({ value, label: IDENTITY_LABELS[value as keyof typeof IDENTITY_LABELS], checked: fixed || (choices ? choices.scopes.includes(value) : true), fixed });
      groups.set(IDENTITY_GROUP, group);
      continue;
    }
    if (value === ADMIN_SCOPE) {
      groups.set(value, { title: 'Administration', other: choice, warning: ADMIN_WARNING });
      continue;
    }
    if (!m || !model) {
      groups.set(value, { title: value, other: choice });
      continue;
    }
    const group = groups.get(model.name) ?? { title: model.title.charAt(0).toUpperCase() + model.title.slice(1) };
    if (m[2] === 'read') group.read = choice;
    else group.write = choice;
    groups.set(model.name, group);
  }
  return [...groups.values()];
}

export async function renderConsent(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, req: AuthorizationRequest, user: User, status = 200, error?: string, choices?: ConsentChoices) {
  const csrf = await csrfToken(ctx, await browserBinding(ctx, request, reply));
  const validities = validityChoices(ctx);
  const chosenTtl = choices?.ttl !== undefined && validities.some((o) => o.seconds === choices.ttl) ? choices.ttl! : validities[0].seconds;
  return sendCardPage(
    ctx,
    reply,
    status,
    consentPage({
      action: authorizePath(ctx),
      accountUrl: `${ctx.config.basePath}${ctx.config.auth.path}/account`,
      clientName: req.client.name,
      clientHost: req.client.uri ? new URL(req.client.uri).host : null,
      clientVerified: req.client.verified,
      clientId: req.client.id,
      username: user.username,
      groups: consentGroups(ctx, req, choices),
      validities,
      chosenTtl,
      redirectTarget: new URL(req.redirectUri).origin !== 'null' ? new URL(req.redirectUri).origin : req.redirectUri,
      request: { request: req.raw },
      csrf,
      error,
    }),
    { formTargets: [formTarget(req.redirectUri)] },
  );
}

/**
 * The form of a page's POST, checked: unreadable → a 400 page; without this browser's form token
 * (CSRF) → a 403 page saying `whatNow`, nothing done. Null when the refusal was sent.
 */
export async function checkedForm(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, whatNow: string): Promise<Params | null> {
  let form: Params;
  try {
    form = bodyParams(request);
  } catch {
    sendErrorPage(ctx, reply, 400, 'Invalid request', 'The form could not be read.');
    return null;
  }
  if (await verifyCsrfToken(ctx, request, form.get('csrf_token'))) return form;
  sendErrorPage(ctx, reply, 403, 'This form has expired', whatNow, {
    error: 'The form token is missing or invalid; nothing was changed',
    detail: { csrf_token: 'missing or invalid' },
  });
  return null;
}

/** Runs a step of the flow, turning its errors into a page, a JSON error or a redirect to the client. */
