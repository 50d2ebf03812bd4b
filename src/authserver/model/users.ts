import type { AppContext } from '../../contract/context.js';
import { AlreadyExists, InvalidInput } from '../../contract/errors.js';
import { decoyPasswordHash, hashPassword, newTimeOrderedId, verifyPassword } from '../../platform/crypto/secrets.js';
import { write, type WriteTx } from '../../platform/store/write-path.js';
import { deleteSessionsOfUser } from '../store/sessions.js';
import { deleteFactorsOfUser } from '../store/factors.js';
import { deleteUserTokensOfUser, endUserTokens } from '../store/user-tokens.js';
import {
  anyUser,
  deleteUser,
  findUserCredentials,
  findUserRecordById,
  findUserRecordByUsername,
  insertUser,
  listUserRecords,
  updateUserAdmin,
  updateUserPassword,
  updateUserProfile,
  type UserProfile,
  type UserRecord,
} from '../store/users.js';
import { revokeAllOf, revokeGrantsWithScope, type Revoked } from '../tokens.js';
import { ADMIN_SCOPE } from '../../contract/scope-name.js';

// Resource owners and their rules. A user's subject (the owner of what their tokens create) is
// `user:<id>`. The CLI, the demo and the admin API go through this module.

export type User = UserRecord;

export const userSubject = (userId: string) => `user:${userId}`;
export const clientSubject = (clientId: string) => `client:${clientId}`;

/** A username: what `usernameProblem` accepts, and what the admin API's schema documents. */
export const USERNAME = /^[A-Za-z0-9._@+-]{1,128}$/;
export const MIN_PASSWORD_LENGTH = 8;

export function usernameProblem(username: string): string | null {
  return USERNAME.test(username) ? null : 'a username is 1-128 letters, digits or . _ @ + -';
}

export function passwordProblem(password: string): string | null {
  return password.length < MIN_PASSWORD_LENGTH ? `the password must have at least ${MIN_PASSWORD_LENGTH} characters` : null;
}

/**
 * An e-mail address as gatehouse accepts one: a plain addr-spec in ASCII (an internationalised
 * domain in its xn-- form), no display name, comment, quotes or spaces, at most 254 characters.
 * Anything looser lets one mailbox be written many ways (`x<v@example.com>`), each a new address
 * to the quota and the "address taken" check while every mail reaches the same person.
 */
export const EMAIL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
export const MAX_EMAIL_LENGTH = 254;
export const MAX_NAME_LENGTH = 100;

export function emailProblem(email: string): string | null {
  return email.length <= MAX_EMAIL_LENGTH && email.indexOf('@') <= 64 && EMAIL.test(email) ? null : 'an e-mail address is name@domain, at most 254 characters';
}

export function nameProblem(name: string): string | null {
  return name.trim() !== '' && name.length <= MAX_NAME_LENGTH && !/[\u0000-\u001f\u007f]/.test(name) ? null : `a name is 1-${MAX_NAME_LENGTH} characters, no control characters`;
}

/** A profile change: a field absent stays; null clears it. */
export interface ProfileChanges {
  email?: string | null;
  emailVerified?: boolean;
  name?: string | null;
}

/** Checks a profile's values without changing anything (InvalidInput naming each bad field). */
export function checkProfile(changes: ProfileChanges): void {
  checkedProfile({ email: null, emailVerified: false, name: null }, changes);
}

/** `changes` over `current`, checked: an e-mail that changes is unverified unless said otherwise. */
function checkedProfile(current: UserProfile, changes: ProfileChanges): UserProfile {
  const problems: Record<string, string> = {};
  const email = changes.email === undefined ? current.email : changes.email === null || changes.email.trim() === '' ? null : changes.email.trim();
  const name = changes.name === undefined ? current.name : changes.name === null || changes.name.trim() === '' ? null : changes.name.trim();
  if (email !== null && email !== current.email) {
    const problem = emailProblem(email);
    if (problem) problems.email = problem;
  }
  if (name !== null && name !== current.name) {
    const problem = nameProblem(name);
    if (problem) problems.name = problem;
  }
  if (Object.keys(problems).length) throw new InvalidInput(Object.values(problems)[0], problems);
  const emailVerified = email === null ? false : (changes.emailVerified ?? (email === current.email ? current.emailVerified : false));
  return { email, emailVerified, name };
}

export async function createUser(
  ctx: AppContext,
  username: string,
  password: string,
  options: { admin?: boolean } & ProfileChanges = {},
  actor: string | null = null,
): Promise<User> {
  const problems: Record<string, string> = {};
  const u = usernameProblem(username);
  if (u) problems.username = u;
  const p = passwordProblem(password);
  if (p) problems.password = p;
  if (Object.keys(problems).length) throw new InvalidInput(Object.values(problems)[0], problems);
  const profile = checkedProfile({ email: null, emailVerified: false, name: null }, options);
  const user = { id: newTimeOrderedId(), username, admin: options.admin === true, createdAt: Date.now(), updatedAt: null, ...profile, passwordHash: await hashPassword(password) };
  try {
    await write(ctx.store, async (tx) => {
      if (await findUserRecordByUsername(tx, username)) throw new AlreadyExists(`a user named "${username}" already exists`);
      await insertUser(tx, user);
      userEvent(tx, 'user.created', user, actor);
    });
  } catch (e) {
    if (!(e instanceof AlreadyExists) && (await findUserRecordByUsername(ctx.store, username))) throw new AlreadyExists(`a user named "${username}" already exists`);
    throw e;
  }
  const { passwordHash: _, ...created } = user;
  return created;
}

/**
 * Changes a user's e-mail address, its verified mark or their name (the CLI, the admin API, the
 * console, the account page). Null when there is no such user.
 */
export async function updateProfile(ctx: AppContext, username: string, changes: ProfileChanges, actor: string | null = null): Promise<User | null> {
  return write(ctx.store, async (tx) => {
    const user = await findUserRecordByUsername(tx, username);
    if (!user) return null;
    const profile = checkedProfile(user, changes);
    const now = Date.now();
    await updateUserProfile(tx, user.id, profile, now);
    const updated = { ...user, ...profile, updatedAt: now };
    userEvent(tx, 'user.updated', updated, actor);
    return updated;
  });
}

/** Makes a user an admin (may be granted the `admin` scope) or not. Null when there is no such user. */
export async function setUserAdmin(ctx: AppContext, username: string, admin: boolean, actor: string | null = null): Promise<User | null> {
  return write(ctx.store, async (tx) => {
    const user = await findUserRecordByUsername(tx, username);
    if (!user) return null;
    await updateUserAdmin(tx, user.id, admin);
    // An admin no more: the grants that carry the admin scope end with their tokens.
    if (user.admin && !admin) await revokeGrantsWithScope(ctx, tx, userSubject(user.id), ADMIN_SCOPE, 'admin rights removed', actor);
    userEvent(tx, 'user.updated', { ...user, admin }, actor);
    return { ...user, admin };
  });
}

/**
 * Sets a new password (the rules of createUser). Every other sign-in session ends; the grants
 * the user gave to applications stay (revoke them on the account page or with `grant revoke`).
 * Null when there is no such user.
 */
export async function changePassword(ctx: AppContext, username: string, password: string, actor: string | null = null): Promise<User | null> {
  const problem = passwordProblem(password);
  if (problem) throw new InvalidInput(problem, { password: problem });
  const hash = await hashPassword(password);
  return write(ctx.store, async (tx) => {
    const user = await findUserRecordByUsername(tx, username);
    if (!user) return null;
    await updateUserPassword(tx, user.id, hash);
    await deleteSessionsOfUser(tx, user.id);
    // An e-mail change asked with the old password waits no more (docs/users.md): whoever asked it may not be the owner.
    await endUserTokens(tx, user.id, 'email', Date.now());
    userEvent(tx, 'user.updated', user, actor);
    return user;
  });
}

/** A user's event (docs/events.md, admin side): `data` is the user as operators see it. */
export function userEvent(tx: WriteTx, type: 'user.created' | 'user.updated' | 'user.removed', user: User, actor: string | null): void {
  tx.emit({ type, record_id: user.id, owner: userSubject(user.id), actor, data: type === 'user.removed' ? null : JSON.stringify(describeUser(user)) });
}

/** What a user looks like to operators (CLI output, admin API): never the password hash. */
export function describeUser(user: User): Record<string, unknown> {
  return {
    id: user.id,
    username: user.username,
    subject: userSubject(user.id),
    admin: user.admin,
    email: user.email,
    email_verified: user.emailVerified,
    name: user.name,
    created_at: new Date(user.createdAt).toISOString(),
  };
}

export function findUserById(ctx: AppContext, id: string): Promise<User | null> {
  return findUserRecordById(ctx.store, id);
}

export function findUserByUsername(ctx: AppContext, username: string): Promise<User | null> {
  return findUserRecordByUsername(ctx.store, username);
}

export function listUsers(ctx: AppContext): Promise<User[]> {
  return listUserRecords(ctx.store);
}

export function anyUserRegistered(ctx: AppContext): Promise<boolean> {
  return anyUser(ctx.store);
}

/**
 * Removes a user: the grants they gave and their tokens end, their sign-in sessions close. The
 * records they own stay (owned by their subject, which no new user can take: ids are never reused).
 */
export async function removeUser(
  ctx: AppContext,
  username: string,
  actor: string | null = null,
  /** More of the removal, committed with it (deleteAccount: the marker of the records' deletion). */
  alsoIn?: (tx: WriteTx, user: User) => Promise<void>,
): Promise<(Revoked & { user: User; sessions: number }) | null> {
  return write(ctx.store, async (tx) => {
    const user = await findUserRecordByUsername(tx, username);
    if (!user) return null;
    await deleteUser(tx, user.id);
    const sessions = await deleteSessionsOfUser(tx, user.id);
    await deleteFactorsOfUser(tx, user.id);
    await deleteUserTokensOfUser(tx, user.id);
    const revoked = await revokeAllOf(ctx, tx, { subject: userSubject(user.id) }, 'user removed', actor);
    await alsoIn?.(tx, user);
    userEvent(tx, 'user.removed', user, actor);
    return { ...revoked, sessions, user };
  });
}

/** The user whose password this is, or null; an unknown user costs the same argon2 work. */
export async function verifyUserCredentials(ctx: AppContext, username: string, password: string): Promise<User | null> {
  const found = await findUserCredentials(ctx.store, username);
  const ok = await verifyPassword(found?.passwordHash ?? (await decoyPasswordHash()), password);
  if (!found || !ok) return null;
  const { passwordHash: _, ...user } = found;
  return user;
}
