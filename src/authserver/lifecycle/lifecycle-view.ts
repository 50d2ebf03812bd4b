import { asSentence } from '../../contract/errors.js';
import { MIN_PASSWORD_LENGTH } from '../model/users.js';
import { hiddenFields, html, type Html } from '../../platform/http/html/index.js';
import type { CardView } from '../authorize/views.js';

// The bodies of the lifecycle pages (docs/users.md): sign-up, "check your mail", the confirmation
// of a mailed link, "forgot your password" and the new-password form. Plain forms, no script.

const messages = (v: { notice?: string; error?: string }) =>
  html`${v.notice ? html`<p class="notice" role="status">${v.notice}</p>` : ''}${v.error ? html`<p class="alert" role="alert">${v.error}</p>` : ''}`;

export interface SignUpView {
  action: string;
  csrf: string;
  signInUrl: string;
  /** An invitation's secret, carried by the form, and its address (fixed). */
  invite?: { token: string; email: string };
  username?: string;
  email?: string;
  error?: string;
  /** Per field: what is wrong. */
  fieldErrors?: Record<string, string>;
}

const fieldError = (v: SignUpView, name: string) => (v.fieldErrors?.[name] ? html`<p class="field-error" id="${name}-error">${asSentence(v.fieldErrors[name])}</p>` : '');
const describedBy = (v: SignUpView, name: string) => (v.fieldErrors?.[name] ? html` aria-describedby="${name}-error" aria-invalid="true"` : '');

const FIELD_WORDS: Record<string, string> = { username: 'the username', email: 'the e-mail address', password: 'the password' };

/**
 * The message above the form. When it only repeats what is said beside a field (the model names
 * the first wrong field), it says instead which fields to correct: each is then said once.
 */
function signUpMessage(v: SignUpView): string | undefined {
  const fields = Object.keys(v.fieldErrors ?? {}).filter((name) => name in FIELD_WORDS && !(name === 'email' && v.invite));
  const said = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();
  if (!v.error || !fields.some((name) => said(v.error!).startsWith(said(v.fieldErrors![name])))) return v.error;
  const words = fields.map((name) => FIELD_WORDS[name]);
  const list = words.length > 1 ? `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}` : words[0];
  return `Nothing was made: correct ${list} below.`;
}

export function signUpPage(v: SignUpView): CardView {
  return {
    title: 'Create your account',
    body: html`<h1>Create your account</h1>
${v.invite ? html`<p class="muted">You were invited as <strong>${v.invite.email}</strong>.</p>` : html`<p class="muted">We will send a link to your e-mail address to confirm it.</p>`}
${messages({ error: signUpMessage(v) })}
<form method="post" action="${v.action}" class="signin">
${hiddenFields({ csrf_token: v.csrf, invite: v.invite?.token })}
<div class="signin-field"><label class="field" for="username">Username</label>
<input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="128" value="${v.username ?? ''}"${describedBy(v, 'username')}>
${fieldError(v, 'username')}</div>
${v.invite
  ? html`<input type="hidden" name="email" value="${v.invite.email}">`
  : html`<div class="signin-field"><label class="field" for="email">E-mail address</label>
<input type="email" id="email" name="email" autocomplete="email" required maxlength="254" value="${v.email ?? ''}"${describedBy(v, 'email')}>
${fieldError(v, 'email')}</div>`}
<div class="signin-field"><label class="field" for="password">Password (at least ${MIN_PASSWORD_LENGTH} characters)</label>
<input type="password" id="password" name="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" required${describedBy(v, 'password')}>
${fieldError(v, 'password')}</div>
<div class="actions buttons"><button type="submit" class="primary">Create account</button></div>
</form>
<p class="target">Have an account? <a href="${v.signInUrl}">Sign in</a>.</p>`,
  };
}

/** After a sign-up, a reset request, an e-mail change: the mail is on its way (said the same whether or not one was sent). */
export function checkMailPage(v: { title: string; message: string; backUrl: string; backLabel: string }): CardView {
  return {
    title: v.title,
    body: html`<h1>${v.title}</h1>
<p role="status">${v.message}</p>
<p class="muted">No mail after a few minutes? Look in your spam folder. You can ask again in a while.</p>
<p class="target"><a href="${v.backUrl}">${v.backLabel}</a></p>`,
  };
}

/** A mailed link opened: a button confirms (a link scanner's GET changes nothing). */
export function confirmLinkPage(v: { title: string; message: string; action: string; csrf: string; token: string; button: string }): CardView {
  return {
    title: v.title,
    body: html`<h1>${v.title}</h1>
<p>${v.message}</p>
<form method="post" action="${v.action}">
${hiddenFields({ csrf_token: v.csrf, token: v.token })}
<div class="actions buttons"><button type="submit" class="primary">${v.button}</button></div>
</form>`,
  };
}

/** The end of a flow: what happened, and where to go. */
export function donePage(v: { title: string; message: string; link: { url: string; label: string }; alert?: boolean }): CardView {
  return {
    title: v.title,
    body: html`<h1>${v.title}</h1>
<p role="${v.alert ? 'alert' : 'status'}">${v.message}</p>
<div class="actions"><a class="button primary" href="${v.link.url}">${v.link.label}</a></div>`,
  };
}

export function resetRequestPage(v: { action: string; csrf: string; login?: string; error?: string; signInUrl: string }): CardView {
  return {
    title: 'Forgot your password?',
    body: html`<h1>Forgot your password?</h1>
<p class="muted">Enter your username or e-mail address. If it belongs to an account with an e-mail address, we will send a link to choose a new password.</p>
${messages(v)}
<form method="post" action="${v.action}" class="signin">
${hiddenFields({ csrf_token: v.csrf })}
<div class="signin-field"><label class="field" for="login">Username or e-mail address</label>
<input type="text" id="login" name="login" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="254" value="${v.login ?? ''}"></div>
<div class="actions buttons"><button type="submit" class="primary">Send the link</button></div>
</form>
<p class="target"><a href="${v.signInUrl}">Back to sign in</a></p>`,
  };
}

export function newPasswordPage(v: { action: string; csrf: string; token: string; username: string; error?: string }): CardView {
  return {
    title: 'Choose a new password',
    body: html`<h1>Choose a new password</h1>
<p class="muted">For <strong>${v.username}</strong>. Every device signed in to your account will be signed out.</p>
${messages(v)}
<form method="post" action="${v.action}" class="signin">
${hiddenFields({ csrf_token: v.csrf, token: v.token })}
<input type="text" name="username" value="${v.username}" autocomplete="username" hidden>
<div class="signin-field"><label class="field" for="password">New password (at least ${MIN_PASSWORD_LENGTH} characters)</label>
<input type="password" id="password" name="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" required autofocus></div>
<div class="actions buttons"><button type="submit" class="primary">Set the new password</button></div>
</form>`,
  };
}

export type { Html };
