import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../contract/context.js';
import { randomSecret, sha256 } from '../platform/crypto/secrets.js';
import { write } from '../platform/store/write-path.js';
import { findUserById, type User } from './model/users.js';
import { deleteSession, findSessionUserId, insertSession } from './store/sessions.js';

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
  const userId = await findSessionUserId(ctx.store, sha256(value), Date.now());
  return userId ? findUserById(ctx, userId) : null;
}

/** Signs the user in with a fresh session value (the old one, if any, is dropped: no fixation). */
export async function startSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, userId: string): Promise<void> {
  const old = readCookies(request).get(SESSION_COOKIE);
  const value = randomSecret(32);
  const now = Date.now();
  const ttl = ctx.config.auth.sessionTtl;
  await write(ctx.store, async (tx) => {
    if (old) await deleteSession(tx, sha256(old));
    await insertSession(tx, { hash: sha256(value), userId, expiresAt: now + ttl * 1000, createdAt: now });
  });
  setCookie(reply, ctx, SESSION_COOKIE, value, ttl);
}

/** Signs the browser out: the session row is deleted and the cookie cleared. */
export async function endSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const value = readCookies(request).get(SESSION_COOKIE);
  if (value) await write(ctx.store, (tx) => deleteSession(tx, sha256(value)));
  setCookie(reply, ctx, SESSION_COOKIE, '', 0);
}
