import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { constantTimeEqual, randomSecret } from '../../platform/crypto/secrets.js';
import { loginCookies, readCookies, setCookie, type CookieScope } from '../sessions.js';

// CSRF protection of the browser forms (login and consent; the admin console with its own cookie
// scope): the form carries an HMAC (server key) of a random per-browser cookie. A cross-site page
// can neither read the cookie nor compute the HMAC, and SameSite keeps the cookie off cross-site
// POSTs anyway. The scope's kind is in the MAC: a token of one scope is worthless in another.

const message = (scope: CookieScope, binding: string) => (scope.kind ? `csrf:${scope.kind}:${binding}` : `csrf:${binding}`);

/** The browser's binding value, set as a cookie (on the scope's path) on first sight. */
export function browserBinding(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, scope = loginCookies(ctx)): string {
  const existing = readCookies(request).get(scope.binding);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const value = randomSecret(32);
  setCookie(reply, scope, scope.binding, value, null);
  return value;
}

export async function csrfToken(ctx: AppContext, binding: string, scope = loginCookies(ctx)): Promise<string> {
  return ctx.keys.sign(message(scope, binding));
}

export async function verifyCsrfToken(ctx: AppContext, request: FastifyRequest, token: string | undefined, scope = loginCookies(ctx)): Promise<boolean> {
  const binding = readCookies(request).get(scope.binding);
  if (!binding || !token) return false;
  const dot = token.indexOf('.');
  if (dot <= 0) return false;
  const expected = await ctx.keys.macWith(token.slice(0, dot), message(scope, binding));
  return expected !== null && constantTimeEqual(token.slice(dot + 1), expected);
}
