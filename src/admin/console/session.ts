import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { browserBinding, csrfToken, verifyCsrfToken } from '../../authserver/authorize/csrf.js';
import { cookieName, endSession, sessionOf, sessionUser, startSession, type CookieScope, type SignedIn } from '../../authserver/sessions.js';
import type { User } from '../../authserver/model/users.js';

// The console's own browser session: the authorization server's session functions with the
// console's cookie scope — cookies of their own names, SameSite=Strict, and session hashes and
// CSRF bindings of their own kind (a login-page session is no console session, and the reverse). The
// CSRF token is the login pages' scheme, bound to the console's own binding cookie.

export const CONSOLE_SESSION_COOKIE = '__Host-gatehouse_admin';
export const CONSOLE_BINDING_COOKIE = '__Host-gatehouse_admin_browser';

export function consolePath(ctx: AppContext): string {
  return `${ctx.config.basePath}/admin`;
}

export function consoleCookies(ctx: AppContext): CookieScope {
  return { sameSite: 'Strict', session: cookieName(ctx, CONSOLE_SESSION_COOKIE), binding: cookieName(ctx, CONSOLE_BINDING_COOKIE), kind: 'admin-console' };
}

/** The signed-in user of this browser's console session (admin or not: the caller decides), or null. */
export function consoleUser(ctx: AppContext, request: FastifyRequest): Promise<User | null> {
  return sessionUser(ctx, request, consoleCookies(ctx));
}

/** This browser's console sign-in (who, since when, how), or null. */
export function consoleSignIn(ctx: AppContext, request: FastifyRequest): Promise<SignedIn | null> {
  return sessionOf(ctx, request, consoleCookies(ctx));
}

export function startConsoleSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, user: User, amr: readonly string[]): Promise<void> {
  return startSession(ctx, request, reply, user.id, consoleCookies(ctx), amr);
}

export function endConsoleSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  return endSession(ctx, request, reply, consoleCookies(ctx));
}

/** The token for this browser's forms (the binding cookie is set on first sight). */
export async function consoleCsrf(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<string> {
  const scope = consoleCookies(ctx);
  return csrfToken(ctx, await browserBinding(ctx, request, reply, scope), scope);
}

export function consoleCsrfValid(ctx: AppContext, request: FastifyRequest, token: string | undefined): Promise<boolean> {
  return verifyCsrfToken(ctx, request, token, consoleCookies(ctx));
}
