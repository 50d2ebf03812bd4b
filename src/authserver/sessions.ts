import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../contract/context.js';
import { constantTimeEqual, randomSecret, sha256 } from '../platform/crypto/secrets.js';
import { write } from '../platform/store/write-path.js';
import { findUserById, type User } from './model/users.js';
import { hasSecondFactor, mustHaveSecondFactor } from './model/factors.js';
import { deleteSession, deleteSessionBySid, findSession, insertSession } from './store/sessions.js';

// Browser sessions: the login/consent pages' and, in its own cookies, the admin console's. The
// cookie holds a random value; the database holds only its hash, so every instance recognises the
// session and a database leak reveals none.
//
// Every browser cookie is `__Host-`-prefixed: Secure, Path=/ and no Domain, so neither a sibling
// subdomain nor a plain-HTTP page of the same host can set or shadow it (cookie tossing). Path=/
// means the cookies also reach the origin's other paths; when the public URL carries a path, the
// names carry it too, so two deployments on one origin keep their cookies apart.

export const SESSION_COOKIE = '__Host-gatehouse_session';
export const BROWSER_COOKIE = '__Host-gatehouse_browser';

/**
 * A family of browser cookies: how strictly they are sent, under which names, and the label mixed
 * into the stored session hash and the CSRF binding's MAC (so a session value of one family is no
 * session of another: the console's cookie value presented as a login session, or the reverse,
 * finds nothing).
 */
export interface CookieScope {
  sameSite: 'Lax' | 'Strict';
  /** The session cookie's name. */
  session: string;
  /** The CSRF binding cookie's name (authorize/csrf.ts). */
  binding: string;
  /** '' for the login pages (their hashes are the plain SHA-256 of the value). */
  kind: string;
}

/** A cookie's name in this deployment: `base`, plus the public URL's path when it has one. */
export function cookieName(ctx: AppContext, base: string): string {
  const path = ctx.config.basePath.replace(/[^A-Za-z0-9]+/g, '_').replace(/_+$/, '');
  return path ? `${base}${path}` : base;
}

/** The login, consent and account pages under {auth_url}. */
export function loginCookies(ctx: AppContext): CookieScope {
  return { sameSite: 'Lax', session: cookieName(ctx, SESSION_COOKIE), binding: cookieName(ctx, BROWSER_COOKIE), kind: '' };
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

export function setCookie(reply: FastifyReply, scope: CookieScope, name: string, value: string, maxAgeSeconds: number | null): void {
  const attributes = [`${name}=${value}`, 'Path=/', 'HttpOnly', 'Secure', `SameSite=${scope.sameSite}`];
  if (maxAgeSeconds !== null) attributes.push(`Max-Age=${maxAgeSeconds}`);
  const previous = reply.getHeader('set-cookie');
  const list = previous === undefined ? [] : Array.isArray(previous) ? previous.map(String) : [String(previous)];
  reply.header('set-cookie', [...list, attributes.join('; ')]);
}

// The CSRF binding (authorize/csrf.ts binds the form tokens to it): `<random>.<keyId>.<HMAC(server
// key, random)>`, issued by the server only. A value the server did not issue — planted by a
// sibling host, or made up — fails the MAC and is replaced, never adopted, so nobody can choose the
// value a victim's form tokens are bound to.

const BINDING = /^([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{43})$/;
const bindingMessage = (scope: CookieScope, random: string) => `browser:${scope.kind}:${random}`;

// The binding set on a reply, so a page rendered in the same response (after a sign-in renewed
// it) binds its forms to the new value, not to the one the request came with.
const setOnReply = new WeakMap<FastifyReply, Map<string, string>>();

/** Sets a fresh binding cookie and answers its value. */
export async function issueBinding(ctx: AppContext, reply: FastifyReply, scope: CookieScope): Promise<string> {
  const random = randomSecret(32);
  const value = `${random}.${await ctx.keys.sign(bindingMessage(scope, random))}`;
  setCookie(reply, scope, scope.binding, value, null);
  let set = setOnReply.get(reply);
  if (!set) setOnReply.set(reply, (set = new Map()));
  set.set(scope.binding, value);
  return value;
}

/** The binding this reply has set already, if any. */
export function bindingSetOn(reply: FastifyReply, scope: CookieScope): string | undefined {
  return setOnReply.get(reply)?.get(scope.binding);
}

/** This browser's binding value when the server issued it (for this scope), else null. */
export async function issuedBinding(ctx: AppContext, request: FastifyRequest, scope: CookieScope): Promise<string | null> {
  const value = readCookies(request).get(scope.binding);
  const m = value ? BINDING.exec(value) : null;
  if (!m) return null;
  const expected = await ctx.keys.macWith(m[2], bindingMessage(scope, m[1]));
  return expected !== null && constantTimeEqual(m[3], expected) ? value! : null;
}

function sessionHash(scope: CookieScope, value: string): string {
  return sha256(scope.kind ? `${scope.kind}:${value}` : value);
}

/** A browser's sign-in: the user, when they signed in (epoch ms), and the session's public id (an ID token's `sid`). */
export interface SignedIn {
  user: User;
  authTime: number;
  sid: string;
  /** How they signed in (RFC 8176): `pwd`, then `otp` (a code) or `hwk` + `user` (a passkey). */
  amr: string[];
}

/** RFC 8176 values of a sign-in: a password alone, a password and a code, a passkey. */
export const AMR = { password: ['pwd'], passwordAndCode: ['pwd', 'otp'], passkey: ['hwk', 'user'] } as const;

/** Whether a sign-in made this way passed a second factor. */
export const hasSecondFactorIn = (amr: readonly string[]) => amr.includes('otp') || amr.includes('hwk');

/** This browser's sign-in, or null. */
export async function sessionOf(ctx: AppContext, request: FastifyRequest, scope = loginCookies(ctx)): Promise<SignedIn | null> {
  const value = readCookies(request).get(scope.session);
  if (!value) return null;
  const hash = sessionHash(scope, value);
  const session = await findSession(ctx.store, hash, Date.now());
  const user = session ? await findUserById(ctx, session.userId) : null;
  if (!session || !user) return null;
  // A password-only session does not stand for a user who has, or must have, a second factor now
  // (it was made before the factor was added or the policy raised): they sign in again.
  if (!hasSecondFactorIn(session.amr) && (mustHaveSecondFactor(ctx, user) || (await hasSecondFactor(ctx, user)))) return null;
  // A session from before OpenID Connect has no public id: one derived from its hash stands in.
  return { user, authTime: session.createdAt, sid: session.sid ?? sha256(`sid:${hash}`).slice(0, 22), amr: session.amr };
}

/** The signed-in user of this browser, or null. */
export async function sessionUser(ctx: AppContext, request: FastifyRequest, scope = loginCookies(ctx)): Promise<User | null> {
  return (await sessionOf(ctx, request, scope))?.user ?? null;
}

/**
 * Signs the user in with a fresh session value (the old one, if any, is dropped: no fixation) and
 * a fresh CSRF binding: a form token obtained before signing in is worthless after.
 */
export async function startSession(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  userId: string,
  scope = loginCookies(ctx),
  amr: readonly string[] = AMR.password,
): Promise<void> {
  const old = readCookies(request).get(scope.session);
  const value = randomSecret(32);
  const now = Date.now();
  const ttl = ctx.config.auth.sessionTtl;
  await write(ctx.store, async (tx) => {
    if (old) await deleteSession(tx, sessionHash(scope, old));
    await insertSession(tx, { hash: sessionHash(scope, value), userId, sid: randomSecret(16), amr, expiresAt: now + ttl * 1000, createdAt: now });
  });
  setCookie(reply, scope, scope.session, value, ttl);
  await issueBinding(ctx, reply, scope);
}

/** Signs the browser out: the session row is deleted and the cookie cleared. */
export async function endSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, scope = loginCookies(ctx)): Promise<void> {
  const value = readCookies(request).get(scope.session);
  if (value) await write(ctx.store, (tx) => deleteSession(tx, sessionHash(scope, value)));
  setCookie(reply, scope, scope.session, '', 0);
}

/**
 * Signs this browser out and, when an ID token named another session of the same user (`sid`,
 * RP-initiated logout), ends that one too; a session of anyone else is never touched.
 */
export async function endSessions(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, named: { sid: string; userId: string } | null): Promise<void> {
  await endSession(ctx, request, reply);
  if (named) await write(ctx.store, (tx) => deleteSessionBySid(tx, named.sid, named.userId));
}
