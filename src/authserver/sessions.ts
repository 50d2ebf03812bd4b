import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../contract/context.js';
import { randomSecret, sha256 } from '../platform/crypto/secrets.js';
import { write } from '../platform/store/write-path.js';
import { findUserById, type User } from './model/users.js';
import { deleteSession, findSessionUserId, insertSession } from './store/sessions.js';

// Browser sessions: the login/consent pages' and, in its own cookies, the admin console's. The
// cookie holds a random value; the database holds only its hash, so every instance recognises the
// session and a database leak reveals none.

export const SESSION_COOKIE = 'gatehouse_session';
export const BROWSER_COOKIE = 'gatehouse_browser';

/**
 * A family of browser cookies: where they are sent, how strictly, under which names, and the
 * label mixed into the stored session hash (so a session value of one family is no session of
 * another: the console's cookie value presented as a login session, or the reverse, finds nothing).
 */
export interface CookieScope {
  path: string;
  sameSite: 'Lax' | 'Strict';
  /** The session cookie's name. */
  session: string;
  /** The CSRF binding cookie's name (authorize/csrf.ts). */
  binding: string;
  /** '' for the login pages (their hashes are the plain SHA-256 of the value). */
  kind: string;
}

/** The login and consent pages under {auth_url}: the cookies are sent nowhere else. */
export function loginCookies(ctx: AppContext): CookieScope {
  return { path: cookiePath(ctx), sameSite: 'Lax', session: SESSION_COOKIE, binding: BROWSER_COOKIE, kind: '' };
}

export function readCookies(request: FastifyRequest): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (!out.has(name)) out.set(name, part.slice(eq + 1).trim());
  }
  return out;
}

/** The pages live under {auth_url}: the cookies are sent nowhere else. */
export function cookiePath(ctx: AppContext): string {
  return `${ctx.config.basePath}${ctx.config.auth.path}`;
}

export function setCookie(reply: FastifyReply, scope: CookieScope, name: string, value: string, maxAgeSeconds: number | null): void {
  const attributes = [`${name}=${value}`, `Path=${scope.path}`, 'HttpOnly', 'Secure', `SameSite=${scope.sameSite}`];
  if (maxAgeSeconds !== null) attributes.push(`Max-Age=${maxAgeSeconds}`);
  const previous = reply.getHeader('set-cookie');
  const list = previous === undefined ? [] : Array.isArray(previous) ? previous.map(String) : [String(previous)];
  reply.header('set-cookie', [...list, attributes.join('; ')]);
}

function sessionHash(scope: CookieScope, value: string): string {
  return sha256(scope.kind ? `${scope.kind}:${value}` : value);
}

/** The signed-in user of this browser, or null. */
export async function sessionUser(ctx: AppContext, request: FastifyRequest, scope = loginCookies(ctx)): Promise<User | null> {
  const value = readCookies(request).get(scope.session);
  if (!value) return null;
  const userId = await findSessionUserId(ctx.store, sessionHash(scope, value), Date.now());
  return userId ? findUserById(ctx, userId) : null;
}

/** Signs the user in with a fresh session value (the old one, if any, is dropped: no fixation). */
export async function startSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, userId: string, scope = loginCookies(ctx)): Promise<void> {
  const old = readCookies(request).get(scope.session);
  const value = randomSecret(32);
  const now = Date.now();
  const ttl = ctx.config.auth.sessionTtl;
  await write(ctx.store, async (tx) => {
    if (old) await deleteSession(tx, sessionHash(scope, old));
    await insertSession(tx, { hash: sessionHash(scope, value), userId, expiresAt: now + ttl * 1000, createdAt: now });
  });
  setCookie(reply, scope, scope.session, value, ttl);
}

/** Signs the browser out: the session row is deleted and the cookie cleared. */
export async function endSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, scope = loginCookies(ctx)): Promise<void> {
  const value = readCookies(request).get(scope.session);
  if (value) await write(ctx.store, (tx) => deleteSession(tx, sessionHash(scope, value)));
  setCookie(reply, scope, scope.session, '', 0);
}
