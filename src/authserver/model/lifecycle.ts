import type { AppContext } from '../../contract/context.js';
import { AlreadyExists, InvalidInput, NotApplicable, TooMany } from '../../contract/errors.js';
import { constantTimeEqual, hashPassword, newTimeOrderedId, randomSecret, sha256 } from '../../platform/crypto/secrets.js';
import { queueMail, type Mail } from '../../platform/mail/queue.js';
import { write, type WriteTx } from '../../platform/store/write-path.js';
import { emailChangeMail, emailChangeNoticeMail, emailChangedMail, inviteMail, passwordResetMail, resetMail, signupTakenMail, verifyMail } from '../mails.js';
import { deleteSessionsOfUser } from '../store/sessions.js';
import { deleteInvitation, endUserTokens, findLiveUserToken, findUserToken, insertUserToken, listOpenInvitations, useUserToken, type UserTokenPurpose, type UserTokenRow } from '../store/user-tokens.js';
import {
  findUserRecordById,
  findUserRecordByUsername,
  findUserRecordsByEmail,
  insertUser,
  isVerificationPending,
  listStaleUnverifiedUsers,
  markEmailVerified,
  updateUserPassword,
} from '../store/users.js';
import { emailProblem, passwordProblem, removeUser, usernameProblem, userEvent, userSubject, type User } from './users.js';
import { revokeAllOf } from '../tokens.js';

// The user's lifecycle by e-mail (docs/users.md): sign-up (auth.signup), the verification of an
// address, invitations, password reset, e-mail change. Each link carries a single-use secret
// `<selector>.<secret>` of which only the SHA-256 is stored (store/user-tokens.ts); each mail is
// queued in the transaction of its change (platform/mail/queue.ts), so it goes out exactly when
// the change was committed, and at most 5 a hour reach one address.

export const VERIFY_TTL_MS = 24 * 3_600_000;
export const RESET_TTL_MS = 3_600_000;
export const INVITE_TTL_MS = 7 * 24 * 3_600_000;
export const EMAIL_CHANGE_TTL_MS = 24 * 3_600_000;

const TTL: Record<UserTokenPurpose, number> = { verify: VERIFY_TTL_MS, reset: RESET_TTL_MS, invite: INVITE_TTL_MS, email: EMAIL_CHANGE_TTL_MS };

/** The pages the links lead to. */
export const lifecyclePaths = (ctx: AppContext) => {
  const base = ctx.config.authUrl;
  return { signup: `${base}/signup`, verify: `${base}/verify`, reset: `${base}/reset`, account: `${base}/account` };
};

async function issueToken(tx: WriteTx, purpose: UserTokenPurpose, who: { userId: string | null; email: string }, actor: string | null, now: number): Promise<string> {
  const id = newTimeOrderedId().replaceAll('-', '');
  const token = `${id}.${randomSecret(32)}`;
  await insertUserToken(tx, { id, hash: sha256(token), purpose, user_id: who.userId, email: who.email, created_by: actor, created_at: now, expires_at: now + TTL[purpose], used_at: null });
  return token;
}

/** The live token of `purpose` this link carries, or null (unknown, another purpose, used, expired, wrong secret): never says which. */
async function openToken(ctx: AppContext, token: string | undefined, purpose: UserTokenPurpose, now = Date.now()): Promise<UserTokenRow | null> {
  if (!token || token.length > 200) return null;
  const dot = token.indexOf('.');
  if (dot <= 0) return null;
  const row = await findUserToken(ctx.store, token.slice(0, dot));
  const hash = sha256(token);
  if (!row || !constantTimeEqual(row.hash, hash) || row.purpose !== purpose || row.used_at !== null || Number(row.expires_at) <= now) return null;
  return row;
}

/** Queues a mail; the address's hourly quota spent is TooMany (the change of this write is not made). */
async function send(ctx: AppContext, tx: WriteTx, mail: Mail): Promise<void> {
  if (!(await queueMail(tx, ctx.store, ctx.sealer, mail))) throw new TooMany(`${mail.to} has been sent 5 mails this hour; try again later`, 'email');
}

/** Like send, for the mails nobody waits for (a notice, the "address taken" mail): over the quota, not sent. */
async function sendIfAllowed(ctx: AppContext, tx: WriteTx, mail: Mail): Promise<boolean> {
  return queueMail(tx, ctx.store, ctx.sealer, mail);
}

function checkSignUpInput(username: string, email: string, password: string): void {
  const problems: Record<string, string> = {};
  const u = usernameProblem(username);
  if (u) problems.username = u;
  const e = emailProblem(email);
  if (e) problems.email = e;
  const p = passwordProblem(password);
  if (p) problems.password = p;
  if (Object.keys(problems).length) throw new InvalidInput(Object.values(problems)[0], problems);
}

/** Whether the deployment takes sign-ups, and how. */
export function signUpPolicy(ctx: AppContext): 'closed' | 'invite' | 'open' {
  return ctx.config.auth.signup;
}

export interface SignUpInput {
  username: string;
  email: string;
  password: string;
  /** The invitation link's secret (auth.signup invite, or open). */
  invite?: string;
}

/**
 * Makes an account at the sign-up page. With an invitation, its address (verified by the mail
 * that carried it) is the account's, and the account may sign in at once. Without one (open
 * sign-up), the account waits for the verification link; an address that is someone's already
 * gets a mail telling its owner and no account, with the same answer as a sign-up.
 * `user` is null when no account was made (the address was taken).
 */
export async function signUp(ctx: AppContext, input: SignUpInput, now = Date.now()): Promise<{ user: User | null; email: string }> {
  const policy = signUpPolicy(ctx);
  const invitation = input.invite !== undefined ? await openToken(ctx, input.invite, 'invite', now) : null;
  if (input.invite !== undefined && !invitation) throw new NotApplicable('this invitation is not valid: it was used, revoked or has expired', 'invite');
  if (policy === 'closed' || (policy === 'invite' && !invitation)) throw new NotApplicable('sign-up is closed on this gatehouse: ask an administrator for an invitation', 'signup');
  const email = invitation ? invitation.email! : input.email.trim();
  checkSignUpInput(input.username, email, input.password);
  const passwordHash = await hashPassword(input.password);
  const taken = () => new AlreadyExists(`the username "${input.username}" is taken: choose another`);
  try {
    return await write(ctx.store, (tx) => makeAccount(ctx, tx, input, email, passwordHash, invitation, now));
  } catch (e) {
    // Two sign-ups racing for one name: the unique index refuses the second (PostgreSQL), said as a taken name.
    if (!(e instanceof AlreadyExists) && !(e instanceof NotApplicable) && (await findUserRecordByUsername(ctx.store, input.username))) throw taken();
    throw e;
  }
}

async function makeAccount(ctx: AppContext, tx: WriteTx, input: SignUpInput, email: string, passwordHash: string, invitation: UserTokenRow | null, now: number): Promise<{ user: User | null; email: string }> {
  const paths = lifecyclePaths(ctx);
  {
    if (await findUserRecordByUsername(tx, input.username)) throw new AlreadyExists(`the username "${input.username}" is taken: choose another`);
    if (!invitation && (await findUserRecordsByEmail(tx, email, 1)).length) {
      await sendIfAllowed(ctx, tx, signupTakenMail(email, paths.account, paths.reset));
      return { user: null, email };
    }
    if (invitation && !(await useUserToken(tx, invitation.id, now))) throw new NotApplicable('this invitation is not valid: it was used, revoked or has expired', 'invite');
    const pending = !invitation && ctx.config.auth.requireVerifiedEmail;
    const user: User = { id: newTimeOrderedId(), username: input.username, admin: false, createdAt: now, email, emailVerified: invitation !== null, name: null, updatedAt: null };
    await insertUser(tx, { ...user, passwordHash, verificationPending: pending });
    userEvent(tx, 'user.created', user, `user:${user.id}`);
    // Over the address's quota the account is made all the same (a taken address is not told either): its next sign-in mails a new link.
    if (!invitation) await sendIfAllowed(ctx, tx, verifyMail(email, `${paths.verify}?token=${await issueToken(tx, 'verify', { userId: user.id, email }, null, now)}`));
    return { user, email };
  }
}

/** How long an account made by sign-up may wait for its verification before the sweeper removes it. */
export const UNVERIFIED_KEPT_MS = 7 * 86_400_000;

/**
 * Removes the accounts made by sign-up that never verified their address in UNVERIFIED_KEPT_MS
 * (the sweeper): their names are free again and the table does not grow with abandoned sign-ups.
 * At most 100 a round, each with its `user.removed`.
 */
export async function removeStaleSignUps(ctx: AppContext, now = Date.now()): Promise<number> {
  let removed = 0;
  for (const user of await listStaleUnverifiedUsers(ctx.store, now - UNVERIFIED_KEPT_MS, 100)) if (await removeUser(ctx, user.username, null)) removed++;
  return removed;
}

/** Mails a new verification link to a user whose address is not verified (the login page does it for them; an operator from the console). */
export async function resendVerification(ctx: AppContext, user: User, actor: string | null, now = Date.now()): Promise<'sent' | 'verified' | 'no-email'> {
  if (!user.email) return 'no-email';
  if (user.emailVerified) return 'verified';
  const email = user.email;
  await write(ctx.store, async (tx) => {
    await endUserTokens(tx, user.id, 'verify', now);
    await send(ctx, tx, verifyMail(email, `${lifecyclePaths(ctx).verify}?token=${await issueToken(tx, 'verify', { userId: user.id, email }, actor, now)}`));
  });
  return 'sent';
}

/** Whether this user may not sign in yet: made by sign-up, address not verified, and the deployment requires it. */
export async function mustVerifyFirst(ctx: AppContext, user: User): Promise<boolean> {
  return ctx.config.auth.requireVerifiedEmail && !user.emailVerified && (await isVerificationPending(ctx.store, user.id));
}

/**
 * Opens a verification link: a sign-up's address (`verified`) or a new address (`changed`, the
 * old address told). Null when the link is not valid (used, expired, unknown, or the address it
 * was mailed to is no longer the one it was for).
 */
export async function verifyEmailLink(ctx: AppContext, token: string | undefined, now = Date.now()): Promise<{ user: User; outcome: 'verified' | 'changed' } | null> {
  const row = (await openToken(ctx, token, 'verify', now)) ?? (await openToken(ctx, token, 'email', now));
  if (!row || !row.user_id || !row.email) return null;
  const email = row.email;
  return write(ctx.store, async (tx) => {
    const user = await findUserRecordById(tx, row.user_id!);
    if (!user) return null;
    if (row.purpose === 'verify' && user.email !== email) return null;
    if (!(await useUserToken(tx, row.id, now))) return null;
    await markEmailVerified(tx, user.id, email, now);
    const updated: User = { ...user, email, emailVerified: true, updatedAt: now };
    userEvent(tx, 'user.updated', updated, `user:${user.id}`);
    if (row.purpose === 'email') {
      await endUserTokens(tx, user.id, 'email', now);
      await endUserTokens(tx, user.id, 'reset', now);
      if (user.email && user.email.toLowerCase() !== email.toLowerCase()) await sendIfAllowed(ctx, tx, emailChangedMail(user.email, user.username, email));
      return { user: updated, outcome: 'changed' as const };
    }
    return { user: updated, outcome: 'verified' as const };
  });
}

/**
 * "Forgot your password?": mails a reset link to the account named by `login` (a user name, or an
 * e-mail address: every account with it). Says nothing of whether there was one; an account
 * without an address, or over its mail quota, gets nothing.
 */
export async function requestPasswordReset(ctx: AppContext, login: string, now = Date.now()): Promise<void> {
  const name = login.trim();
  if (!name || name.length > 254) return;
  // A user name and an address may both match (a user name may hold an @): each account named gets its link.
  const byName = await findUserRecordByUsername(ctx.store, name);
  const byEmail = name.includes('@') ? await findUserRecordsByEmail(ctx.store, name, 5) : [];
  const users = [...(byName ? [byName] : []), ...byEmail.filter((u) => u.id !== byName?.id)];
  for (const user of users) {
    if (!user.email) continue;
    const email = user.email;
    // A link mailed in the last minutes is still on its way or in the mailbox: no second one (a stranger's requests cannot spend the address's quota faster).
    const live = await findLiveUserToken(ctx.store, user.id, 'reset', now);
    if (live && Number(live.created_at) > now - RESET_COOLDOWN_MS) continue;
    await write(ctx.store, async (tx) => {
      const token = await issueToken(tx, 'reset', { userId: user.id, email }, null, now);
      // Over the quota, no link is left behind without its mail.
      if (!(await sendIfAllowed(ctx, tx, resetMail(email, user.username, `${lifecyclePaths(ctx).reset}?token=${token}`)))) throw new NothingSent();
    }).catch((e) => {
      if (!(e instanceof NothingSent)) throw e;
    });
  }
}

/** A write whose mail was over its quota: rolled back. */
class NothingSent extends Error {}

/**
 * No second reset link within this time of the last one: a stranger asking for someone's reset
 * makes at most 4 mails an hour, below the address's quota of 5, and the owner's own request
 * finds the link of the last 15 minutes in their mailbox, valid for the rest of its hour.
 */
export const RESET_COOLDOWN_MS = 15 * 60_000;

/** The user a reset link is for, while it is valid (the new-password form); it is not used up. */
export async function openResetLink(ctx: AppContext, token: string | undefined, now = Date.now()): Promise<User | null> {
  const row = await openToken(ctx, token, 'reset', now);
  return row?.user_id ? findUserRecordById(ctx.store, row.user_id) : null;
}

/**
 * Sets the new password of a reset link, once: every session of the user ends, every other reset
 * link with it, and the user is told by mail. Opening the mailed link proves the address, so a
 * sign-up waiting for its verification is verified too. Null when the link is not valid.
 */
export async function resetPassword(ctx: AppContext, token: string | undefined, password: string, now = Date.now()): Promise<User | null> {
  const row = await openToken(ctx, token, 'reset', now);
  if (!row?.user_id) return null;
  const problem = passwordProblem(password);
  if (problem) throw new InvalidInput(problem, { password: problem });
  const hash = await hashPassword(password);
  return write(ctx.store, async (tx) => {
    const user = await findUserRecordById(tx, row.user_id!);
    // A link mailed to an address the account no longer has opens nothing.
    if (!user || (user.email ?? '').toLowerCase() !== (row.email ?? '').toLowerCase() || !(await useUserToken(tx, row.id, now))) return null;
    await updateUserPassword(tx, user.id, hash);
    await deleteSessionsOfUser(tx, user.id);
    // A reset is a recovery: whatever someone else may have set going ends with it — the other
    // reset links, an e-mail change waiting for its link, and the applications' grants and tokens.
    await endUserTokens(tx, user.id, 'reset', now);
    await endUserTokens(tx, user.id, 'email', now);
    await revokeAllOf(ctx, tx, { subject: userSubject(user.id) }, 'password reset', `user:${user.id}`);
    let updated = user;
    if (row.email && !user.emailVerified) {
      await markEmailVerified(tx, user.id, row.email, now);
      updated = { ...user, emailVerified: true, updatedAt: now };
    }
    userEvent(tx, 'user.updated', updated, `user:${user.id}`);
    if (user.email) await sendIfAllowed(ctx, tx, passwordResetMail(user.email, user.username, lifecyclePaths(ctx).reset));
    return updated;
  });
}

/**
 * The account page's e-mail change: a link to the new address (the change is made when it is
 * opened) and a notice to the old one. `same` when the address is the user's already.
 */
export async function requestEmailChange(ctx: AppContext, user: User, newEmail: string, now = Date.now()): Promise<'sent' | 'same'> {
  const email = newEmail.trim();
  const problem = emailProblem(email);
  if (problem) throw new InvalidInput(problem, { email: problem });
  if (user.email && user.email.toLowerCase() === email.toLowerCase() && user.emailVerified) return 'same';
  await write(ctx.store, async (tx) => {
    await endUserTokens(tx, user.id, 'email', now);
    await send(ctx, tx, emailChangeMail(email, user.username, `${lifecyclePaths(ctx).verify}?token=${await issueToken(tx, 'email', { userId: user.id, email }, `user:${user.id}`, now)}`));
    if (user.email && user.email.toLowerCase() !== email.toLowerCase()) await sendIfAllowed(ctx, tx, emailChangeNoticeMail(user.email, user.username, email));
  });
  return 'sent';
}

/** The address a pending e-mail change waits on, if any (the account page says so). */
export async function pendingEmailChange(ctx: AppContext, user: User, now = Date.now()): Promise<string | null> {
  return (await findLiveUserToken(ctx.store, user.id, 'email', now))?.email ?? null;
}

export interface Invitation {
  id: string;
  email: string;
  createdBy: string | null;
  createdAt: number;
  expiresAt: number;
}

const invitationOf = (r: UserTokenRow): Invitation => ({ id: r.id, email: r.email!, createdBy: r.created_by, createdAt: Number(r.created_at), expiresAt: Number(r.expires_at) });

/** What an invitation looks like to operators (CLI, admin API). */
export function describeInvitation(i: Invitation): Record<string, unknown> {
  return { id: i.id, email: i.email, created_by: i.createdBy, created_at: new Date(i.createdAt).toISOString(), expires_at: new Date(i.expiresAt).toISOString() };
}

/**
 * Invites `email` (CLI `user invite`, the admin API, the console): a link to the sign-up page,
 * valid 7 days, once; the address counts as verified. Refused while sign-up is closed, and for an
 * address that is a user's already.
 */
export async function inviteUser(ctx: AppContext, email: string, actor: string | null, now = Date.now()): Promise<Invitation> {
  if (signUpPolicy(ctx) === 'closed') throw new NotApplicable('sign-up is closed (auth.signup: closed): set auth.signup to invite or open to send invitations', 'signup');
  const address = email.trim();
  const problem = emailProblem(address);
  if (problem) throw new InvalidInput(problem, { email: problem });
  return write(ctx.store, async (tx) => {
    if ((await findUserRecordsByEmail(tx, address, 1)).length) throw new AlreadyExists(`a user with the address ${address} exists already`);
    const token = await issueToken(tx, 'invite', { userId: null, email: address }, actor, now);
    await send(ctx, tx, inviteMail(address, `${lifecyclePaths(ctx).signup}?invite=${token}`));
    return { id: token.slice(0, token.indexOf('.')), email: address, createdBy: actor, createdAt: now, expiresAt: now + INVITE_TTL_MS };
  });
}

/** The invitation a sign-up link carries, while valid (the sign-up form shows its address). */
export async function openInvitation(ctx: AppContext, token: string | undefined, now = Date.now()): Promise<Invitation | null> {
  const row = await openToken(ctx, token, 'invite', now);
  return row ? invitationOf(row) : null;
}

export async function listInvitations(ctx: AppContext, now = Date.now()): Promise<Invitation[]> {
  return (await listOpenInvitations(ctx.store, now)).map(invitationOf);
}

/** Revokes an open invitation: its link stops working. False when there is no such open invitation. */
export async function revokeInvitation(ctx: AppContext, id: string): Promise<boolean> {
  return write(ctx.store, (tx) => deleteInvitation(tx, id));
}

/**
 * What a sign-in with the right password of an account still waiting for its verification
 * hears (the login page, the account page): a new link is mailed, unless the address had its
 * mails for this hour.
 */
export async function unverifiedSignIn(ctx: AppContext, user: User): Promise<string> {
  try {
    if ((await resendVerification(ctx, user, null)) === 'sent') return `Your e-mail address is not verified yet. We have sent a new link to ${user.email}: open it, then sign in.`;
  } catch (e) {
    if (!(e instanceof TooMany)) throw e;
  }
  return `Your e-mail address is not verified yet. Open the link we sent to ${user.email ?? 'you'}, then sign in.`;
}
