import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { constantTimeEqual } from '../../platform/crypto/secrets.js';
import { bindingSetOn, issueBinding, issuedBinding, loginCookies, type CookieScope } from '../sessions.js';

// CSRF protection of the browser forms (login, consent, account; the admin console with its own
// cookie scope): the form carries an HMAC (server key) of the browser's binding cookie, a value the
// server issued and signed (sessions.ts: a value it did not issue is replaced, never adopted) and
// renews at every sign-in. A cross-site page can neither read the cookie nor compute the HMAC, nor
// choose the value; SameSite keeps the cookie off cross-site POSTs anyway. The scope's kind is in
// the MAC: a token of one scope is worthless in another.

const message = (scope: CookieScope, binding: string) => (scope.kind ? `csrf:${scope.kind}:${binding}` : `csrf:${binding}`);

/** The browser's binding value: its cookie when the server issued it, else a fresh one (set as a cookie). */
export async function browserBinding(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, scope = loginCookies(ctx)): Promise<string> {
  return bindingSetOn(reply, scope) ?? (await issuedBinding(ctx, request, scope)) ?? issueBinding(ctx, reply, scope);
}

export async function csrfToken(ctx: AppContext, binding: string, scope = loginCookies(ctx)): Promise<string> {
  return ctx.keys.sign(message(scope, binding));
}

export async function verifyCsrfToken(ctx: AppContext, request: FastifyRequest, token: string | undefined, scope = loginCookies(ctx)): Promise<boolean> {
  const binding = await issuedBinding(ctx, request, scope);
  if (!binding || !token) return false;
  const dot = token.indexOf('.');
  if (dot <= 0) return false;
  const expected = await ctx.keys.macWith(token.slice(0, dot), message(scope, binding));
  return expected !== null && constantTimeEqual(token.slice(dot + 1), expected);
}
