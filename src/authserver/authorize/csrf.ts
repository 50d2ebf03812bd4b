import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { constantTimeEqual, randomSecret } from '../../platform/crypto/secrets.js';
import { BROWSER_COOKIE, readCookies, setCookie } from '../sessions.js';

// CSRF protection of the login and consent forms: the form carries an HMAC (server key) of a
// random per-browser cookie. A cross-site page can neither read the cookie nor compute the HMAC,
// and SameSite=Lax keeps the cookie off cross-site POSTs anyway.

/** The browser's binding value, set as a cookie on first sight. */
export function browserBinding(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): string {
  const existing = readCookies(request).get(BROWSER_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const value = randomSecret(32);
  setCookie(reply, ctx, BROWSER_COOKIE, value, null);
  return value;
}

export async function csrfToken(ctx: AppContext, binding: string): Promise<string> {
  return ctx.keys.sign(`csrf:${binding}`);
}

export async function verifyCsrfToken(ctx: AppContext, request: FastifyRequest, token: string | undefined): Promise<boolean> {
  const binding = readCookies(request).get(BROWSER_COOKIE);
  if (!binding || !token) return false;
  const dot = token.indexOf('.');
  if (dot <= 0) return false;
  const expected = await ctx.keys.macWith(token.slice(0, dot), `csrf:${binding}`);
  return expected !== null && constantTimeEqual(token.slice(dot + 1), expected);
}
