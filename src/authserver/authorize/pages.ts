import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendPage, setPageHeaders, type Problem } from '../../platform/http/html/index.js';
import type { AppContext } from '../../contract/context.js';
import { metadataDocumentHost } from '../model/client-metadata-document.js';
import { ADMIN_SCOPE, scopeLabel } from '../../contract/scopes.js';
import { browserBinding, csrfToken, verifyCsrfToken } from './csrf.js';
import { bodyParams, type Params } from '../params.js';
import type { AuthorizationRequest } from './request.js';
import { formTarget } from './request.js';
import { metBySignIn } from './pushed.js';
import type { Client } from '../model/client.js';
import type { User } from '../model/users.js';
import { IDENTITY_LABELS, OPENID_SCOPE, isIdentityScope } from '../oidc/claims.js';
import { passkeySignInOptions } from '../model/passkeys.js';
import { passkeyForm } from './factor-views.js';
import { consentPage, type CardView, type ScopeGroup, describeDuration, errorPage, loginPage } from './views.js';
import { shownHomePageHost } from '../model/registration.js';

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

/**
 * What the login and consent steps need of the flow they serve — /authorize's request, or the user
 * code of /device (device.ts) —, so that both flows use the one login (login.ts) and consent page.
 */
export interface BrowserFlow {
  client: Client;
  /** The flow's own request, carried by each form as the hidden field `request` and read again at every POST. */
  raw: string;
  /** Where the forms post. */
  action: string;
  /**
   * Where the flow goes on once the user has signed in (a plain GET); called only then, as it may
   * take out of a pushed request what the sign-in has met.
   */
  continueUrl(): Promise<string>;
  /** OpenID Connect id_token_hint: the only user who may sign in (the authorize flow's). */
  idTokenHint: string | null;
}

/** The consent page's flow: what is asked, and where the browser goes after the choice. */
export interface ConsentFlow extends BrowserFlow {
  scope: string[];
  /** Whether the client named the scope (Write is ticked only then). */
  scopeGiven: boolean;
  /** Where the browser is sent after the choice; null: nowhere (the user goes back to a device). */
  redirectUri: string | null;
  /** A warning said above the choices (the device flow's: who started this). */
  notice?: string;
}

/** /authorize's request as the flow of its login and consent pages. */
export function authorizeFlow(ctx: AppContext, req: AuthorizationRequest): ConsentFlow {
  return {
    client: req.client,
    raw: req.raw,
    action: authorizePath(ctx),
    // Once signed in, the original request, less what this sign-in has just met (`prompt=login`, `max_age`: no loop).
    continueUrl: async () => {
      const raw = await metBySignIn(ctx, req);
      return `${authorizePath(ctx)}${raw ? `?${raw}` : ''}`;
    },
    idTokenHint: req.idTokenHint,
    scope: req.scope,
    scopeGiven: req.scopeGiven,
    redirectUri: req.redirectUri,
  };
}

export async function renderLogin(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, flow: BrowserFlow, status = 200, error?: string, username?: string) {
  const csrf = await csrfToken(ctx, await browserBinding(ctx, request, reply));
  // The passkey button: a discoverable-credential ceremony whose challenge is remembered now (docs/oauth.md, Passkeys).
  const passkey = passkeyForm({ action: flow.action, hidden: { request: flow.raw, csrf_token: csrf, step: 'passkey' }, options: await passkeySignInOptions(ctx), kind: 'signin' });
  const base = `${ctx.config.basePath}${ctx.config.auth.path}`;
  return sendCardPage(
    ctx,
    reply,
    status,
    loginPage({
      action: flow.action,
      accountUrl: `${base}/account`,
      resetUrl: `${base}/reset`,
      signUpUrl: ctx.config.auth.signup === 'open' ? `${base}/signup` : undefined,
      // A metadata document's client names itself: where it came from is said beside it.
      clientName: metadataDocumentHost(flow.client.id) ? `${flow.client.name} (from ${metadataDocumentHost(flow.client.id)})` : flow.client.name,
      request: { request: flow.raw },
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

export function consentGroups(ctx: AppContext, req: Pick<ConsentFlow, 'scope' | 'scopeGiven'>, choices?: ConsentChoices): ScopeGroup[] {
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

export async function renderConsent(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, req: ConsentFlow, user: User, status = 200, error?: string, choices?: ConsentChoices) {
  const csrf = await csrfToken(ctx, await browserBinding(ctx, request, reply));
  const validities = validityChoices(ctx);
  const chosenTtl = choices?.ttl !== undefined && validities.some((o) => o.seconds === choices.ttl) ? choices.ttl! : validities[0].seconds;
  return sendCardPage(
    ctx,
    reply,
    status,
    consentPage({
      action: req.action,
      accountUrl: `${ctx.config.basePath}${ctx.config.auth.path}/account`,
      clientName: req.client.name,
      clientHost: await shownHomePageHost(ctx, req.client),
      clientVerified: req.client.verified,
      clientFrom: metadataDocumentHost(req.client.id),
      clientId: req.client.id,
      username: user.username,
      groups: consentGroups(ctx, req, choices),
      validities,
      chosenTtl,
      redirectTarget: req.redirectUri === null ? null : new URL(req.redirectUri).origin !== 'null' ? new URL(req.redirectUri).origin : req.redirectUri,
      notice: req.notice,
      request: { request: req.raw },
      csrf,
      error,
    }),
    { formTargets: req.redirectUri === null ? [] : [formTarget(req.redirectUri)] },
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
