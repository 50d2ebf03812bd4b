import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { randomSecret, sha256 } from '../security/secrets.js';
import { findUserById, type User } from './users.js';

// Browser sessions of the login/consent pages. The cookie holds a random value; the database
// holds only its hash, so every instance recognises the session and a database leak reveals none.

export const SESSION_COOKIE = 'gatehouse_session';
export const BROWSER_COOKIE = 'gatehouse_browser';

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

export function setCookie(reply: FastifyReply, ctx: AppContext, name: string, value: string, maxAgeSeconds: number | null): void {
  const attributes = [`${name}=${value}`, `Path=${cookiePath(ctx)}`, 'HttpOnly', 'Secure', 'SameSite=Lax'];
  if (maxAgeSeconds !== null) attributes.push(`Max-Age=${maxAgeSeconds}`);
  const previous = reply.getHeader('set-cookie');
  const list = previous === undefined ? [] : Array.isArray(previous) ? previous.map(String) : [String(previous)];
  reply.header('set-cookie', [...list, attributes.join('; ')]);
}

/** The signed-in user of this browser, or null. */
export async function sessionUser(ctx: AppContext, request: FastifyRequest): Promise<User | null> {
  const value = readCookies(request).get(SESSION_COOKIE);
  if (!value) return null;
  const row = await ctx.store.db
    .selectFrom('sessions')
    .select('user_id')
    .where('hash', '=', sha256(value))
    .where('expires_at', '>', Date.now())
    .executeTakeFirst();
  return row ? findUserById(ctx, row.user_id) : null;
}

/** Signs the user in with a fresh session value (the old one, if any, is dropped: no fixation). */
export async function startSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, userId: string): Promise<void> {
  const old = readCookies(request).get(SESSION_COOKIE);
  if (old) await ctx.store.db.deleteFrom('sessions').where('hash', '=', sha256(old)).execute();
  const value = randomSecret(32);
  const now = Date.now();
  const ttl = ctx.config.auth.sessionTtl;
  await ctx.store.db.insertInto('sessions').values({ hash: sha256(value), user_id: userId, expires_at: now + ttl * 1000, created_at: now }).execute();
  await ctx.store.db.deleteFrom('sessions').where('expires_at', '<=', now).execute();
  setCookie(reply, ctx, SESSION_COOKIE, value, ttl);
}

/** Signs the browser out: the session row is deleted and the cookie cleared. */
export async function endSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const value = readCookies(request).get(SESSION_COOKIE);
  if (value) await ctx.store.db.deleteFrom('sessions').where('hash', '=', sha256(value)).execute();
  setCookie(reply, ctx, SESSION_COOKIE, '', 0);
}
