import { mailParts } from '../platform/http/html/index.js';
import type { Mail } from '../platform/mail/queue.js';

// What each mail of the user's lifecycle says (docs/users.md, "What each mail says"). Every link
// mail says how long the link works and what to do when the reader asked for nothing.

const NOT_YOU = 'If you did not ask for this, you can ignore this mail: nothing changes.';

function mail(kind: string, to: string, subject: string, content: Parameters<typeof mailParts>[0], link?: string): Mail {
  return { kind, to, subject, link, ...mailParts(content, subject) };
}

/** To an address nobody has proved yet: nothing the person who typed it chose (their user name) is in it. */
export const verifyMail = (to: string, link: string) =>
  mail('verify', to, 'Confirm your e-mail address', {
    greeting: 'Hello,',
    paragraphs: ['Please confirm that this is your e-mail address to finish setting up your gatehouse account.'],
    link: { url: link, label: 'Confirm my address' },
    after: ['The link works once, for 24 hours.', 'If you did not make an account, you can ignore this mail: without the confirmation, the account cannot be used.'],
  }, link);

export const signupTakenMail = (to: string, signInUrl: string, resetUrl: string) =>
  mail('signup-taken', to, 'Someone tried to sign up with your address', {
    greeting: 'Hello,',
    paragraphs: [
      'Someone tried to make a new gatehouse account with this e-mail address. You already have an account with it, so no new one was made.',
      `If it was you, sign in at ${signInUrl}, or, if you forgot your password, ask for a new one at ${resetUrl}.`,
    ],
    after: ['If it was not you, you can ignore this mail: nothing changed.'],
  });

export const inviteMail = (to: string, link: string) =>
  mail('invite', to, 'You are invited to gatehouse', {
    greeting: 'Hello,',
    paragraphs: ['You are invited to make an account. Choose your username and password with the link below.'],
    link: { url: link, label: 'Make my account' },
    after: ['The invitation works once, for 7 days.', 'If you do not want an account, ignore this mail.'],
  }, link);

export const resetMail = (to: string, username: string, link: string) =>
  mail('reset', to, 'Reset your password', {
    greeting: `Hello ${username},`,
    paragraphs: ['Someone (we hope you) asked to reset the password of your gatehouse account. Choose a new password with the link below.'],
    link: { url: link, label: 'Choose a new password' },
    after: ['The link works once, for 1 hour. Setting a new password signs you out everywhere.', NOT_YOU],
  }, link);

export const passwordResetMail = (to: string, username: string, resetUrl: string) =>
  mail('password-reset', to, 'Your password was changed', {
    greeting: `Hello ${username},`,
    paragraphs: ['The password of your gatehouse account was just reset with a link mailed to this address, and every sign-in session was ended.'],
    after: [`If this was not you, ask for a new password at ${resetUrl} at once and tell your administrator.`],
  });

export const emailChangeMail = (to: string, username: string, link: string) =>
  mail('email-change', to, 'Confirm your new e-mail address', {
    greeting: `Hello ${username},`,
    paragraphs: ['You asked to use this address for your gatehouse account. Confirm it with the link below; until then, your account keeps its old address.'],
    link: { url: link, label: 'Confirm my new address' },
    after: ['The link works once, for 24 hours.', NOT_YOU],
  }, link);

export const emailChangeNoticeMail = (to: string, username: string, next: string) =>
  mail('email-change-notice', to, 'A change of your e-mail address was asked', {
    greeting: `Hello ${username},`,
    paragraphs: [`Someone signed in to your gatehouse account asked to change its e-mail address to ${next}. It changes only when the link mailed to that address is opened.`],
    after: ['If this was not you, change your password at once (or ask for a new one with "Forgot your password?"): that cancels the change. Then tell your administrator.'],
  });

export const emailChangedMail = (to: string, username: string, next: string) =>
  mail('email-changed', to, 'Your e-mail address was changed', {
    greeting: `Hello ${username},`,
    paragraphs: [`The e-mail address of your gatehouse account is now ${next}. Mail about your account goes there from now on.`],
    after: ['If this was not you, tell your administrator at once.'],
  });
