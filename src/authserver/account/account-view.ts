import { MIN_PASSWORD_LENGTH } from '../model/users.js';
import { hiddenFields, html, signInForm, type Html } from '../../platform/http/html/index.js';
import { PASSKEY_SCRIPTS, type CardView } from '../authorize/views.js';
import { recoveryCodeList, totpEnrolment } from '../authorize/factor-views.js';

// The bodies of {auth_url}/account (docs/oauth.md): signed out, the sign-in form; signed in, the
// authorized applications (each revocable), a password change and sign out. Plain forms, no script.

const messages = (v: { notice?: string; error?: string }) =>
  html`${v.notice ? html`<p class="notice" role="status">${v.notice}</p>` : ''}${v.error ? html`<p class="alert" role="alert">${v.error}</p>` : ''}`;

export interface AccountSignInView {
  action: string;
  csrf: string;
  username?: string;
  error?: string;
  notice?: string;
  /** "Forgot your password?"; "Create an account" when sign-up is open (docs/users.md). */
  resetUrl: string;
  signUpUrl?: string;
}

/** The account page for a browser without a session: sign in first. */
export function accountSignInPage(v: AccountSignInView): CardView {
  return {
    title: 'Your account',
    body: html`<h1>Your account</h1>
<p class="muted">Sign in to see the applications you authorized, take access back, or change your password.</p>
${messages(v)}
${signInForm({ action: v.action, hidden: { csrf_token: v.csrf, action: 'signin' }, username: v.username })}
<p class="links"><a href="${v.resetUrl}">Forgot your password?</a>${v.signUpUrl ? html`<a href="${v.signUpUrl}">Create an account</a>` : ''}</p>`,
  };
}

export interface AuthorizedApp {
  grantId: string;
  clientName: string;
  clientHost: string | null;
  clientId: string;
  scopes: string[];
  granted: string;
  expires: string;
  lastUsed: string;
}

/** A second factor as the account page lists it. */
export interface FactorItem {
  id: string;
  label: string;
  kind: 'totp' | 'passkey';
  added: string;
  lastUsed: string;
}

export interface TwoStepView {
  factors: FactorItem[];
  recoveryCodesLeft: number;
  /** No authenticator app yet: the set-up (secret, URI, QR code, the sealed form field). */
  enrolment?: { secret: string; uri: string; qr: Html; sealed: string };
  /** Made just now: shown this once. */
  recoveryCodes?: string[];
  /** The deployment requires a second factor of this user (the last one cannot be removed). */
  required: boolean;
  /** The passkey registration's form (options with a remembered challenge). */
  passkey?: Html;
}

export interface AccountView {
  action: string;
  csrf: string;
  username: string;
  /** The profile form's values: the user's, or what they typed when it comes back with an error. */
  profile: { name: string; email: string; emailVerified: boolean };
  /** A new address waiting for its link to be opened. */
  pendingEmail?: string | null;
  apps: AuthorizedApp[];
  twoStep: TwoStepView;
  notice?: string;
  error?: string;
}

/** The signed-in user's authorized applications (each revocable), sign out, change password. */
export function accountPage(v: AccountView): CardView {
  // The action is the pressed button's (name="action").
  const apps = v.apps.length
    ? html`<ul class="apps">
${v.apps.map(
  (a, i) => html`${i ? '\n' : ''}<li>
<p class="app-name">${a.clientName}${a.clientName === a.clientId ? '' : html` <span class="muted">(${a.clientId})</span>`}${a.clientHost ? html` <span class="muted">· ${a.clientHost}</span>` : ''}</p>
<ul class="scopes">${a.scopes.map((s) => html`<li>${s}</li>`)}</ul>
<dl><dt>Granted</dt><dd>${a.granted}</dd><dt>Expires</dt><dd>${a.expires}</dd><dt>Last used</dt><dd>${a.lastUsed}</dd></dl>
<form method="post" action="${v.action}">
${hiddenFields({ csrf_token: v.csrf, grant_id: a.grantId })}
<button type="submit" name="action" value="revoke" class="danger" aria-label="Revoke access of ${a.clientName}">Revoke access</button>
</form>
</li>`,
)}
</ul>`
    : html`<p class="muted">No application has access to your data.</p>`;
  return {
    title: 'Your account',
    wide: true,
    scripts: v.twoStep.passkey ? PASSKEY_SCRIPTS : undefined,
    body: html`<h1>Your account</h1>
<p class="muted">Signed in as <strong>${v.username}</strong>.</p>
${messages(v)}
<section aria-labelledby="apps-title">
<h2 id="apps-title">Applications with access</h2>
${apps}
</section>
${twoStepSection(v)}
<section class="block" aria-labelledby="profile-title">
<h2 id="profile-title">Your profile</h2>
<p class="muted">What applications you allow to know "Your identity" are told. A new e-mail address is used once you open the link we send to it.</p>
<form method="post" action="${v.action}">
${hiddenFields({ csrf_token: v.csrf })}
<label class="field" for="profile-name">Name</label>
<input type="text" id="profile-name" name="name" value="${v.profile.name}" autocomplete="name" maxlength="100">
<label class="field" for="profile-email">E-mail address${v.profile.email ? html` <span class="muted">(${v.profile.emailVerified ? 'verified' : 'not verified'})</span>` : ''}</label>
<input type="email" id="profile-email" name="email" value="${v.profile.email}" autocomplete="email" maxlength="254"${v.pendingEmail ? html` aria-describedby="profile-email-pending"` : ''}>
${v.pendingEmail ? html`<p class="muted small" id="profile-email-pending">Waiting for confirmation: <strong>${v.pendingEmail}</strong>. Open the link we sent there to make it your address.</p>` : ''}
<input type="text" name="username" value="${v.username}" autocomplete="username" hidden>
<label class="field" for="profile-password">Your password <span class="muted">(only to change or remove the e-mail address)</span></label>
<input type="password" id="profile-password" name="password" autocomplete="current-password">
<div class="actions"><button type="submit" name="action" value="profile">Save profile</button></div>
</form>
</section>
<section class="block" aria-labelledby="password-title">
<h2 id="password-title">Change your password</h2>
<form method="post" action="${v.action}">
${hiddenFields({ csrf_token: v.csrf })}
<input type="text" name="username" value="${v.username}" autocomplete="username" hidden>
<label class="field" for="current">Current password</label>
<input type="password" id="current" name="current_password" autocomplete="current-password" required>
<label class="field" for="new">New password (at least ${MIN_PASSWORD_LENGTH} characters)</label>
<input type="password" id="new" name="new_password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" required>
<div class="actions"><button type="submit" name="action" value="password" class="primary">Change password</button></div>
</form>
</section>
<section class="block" aria-labelledby="signout-title">
<h2 id="signout-title">Sign out</h2>
<form method="post" action="${v.action}">
${hiddenFields({ csrf_token: v.csrf })}
<div class="actions"><button type="submit" name="action" value="signout">Sign out</button></div>
</form>
</section>
${accountDataSections(v)}`,
  };
}

/** "Two-step sign-in": the factors (each removable with the password), recovery codes, the authenticator set-up. */
function twoStepSection(v: AccountView): Html {
  const t = v.twoStep;
  const factors = t.factors.length
    ? html`<ul class="apps factors">
${t.factors.map(
  (f, i) => html`${i ? '\n' : ''}<li>
<p class="app-name">${f.label}</p>
<dl><dt>Added</dt><dd>${f.added}</dd><dt>Last used</dt><dd>${f.lastUsed}</dd></dl>
<form method="post" action="${v.action}">
${hiddenFields({ csrf_token: v.csrf, factor_id: f.id })}
<input type="text" name="username" value="${v.username}" autocomplete="username" hidden>
<label class="field" for="remove-${f.id}">Your password, to remove it</label>
<input type="password" id="remove-${f.id}" name="password" autocomplete="current-password" required>
<div class="actions"><button type="submit" name="action" value="factor-remove" class="danger" aria-label="Remove ${f.label}">Remove</button></div>
</form>
</li>`,
)}
</ul>
<p class="muted">${t.recoveryCodesLeft} of 10 recovery codes left.</p>
<form method="post" action="${v.action}" class="inline-password">
${hiddenFields({ csrf_token: v.csrf })}
<input type="text" name="username" value="${v.username}" autocomplete="username" hidden>
<label class="field" for="recovery-password">Your password, for new recovery codes (the old ones stop working)</label>
<input type="password" id="recovery-password" name="password" autocomplete="current-password" required>
<div class="actions"><button type="submit" name="action" value="recovery-codes">New recovery codes</button></div>
</form>`
    : html`<p class="muted">${t.required ? 'This gatehouse requires a second factor: set one up below.' : 'Off. Add a code from an authenticator app to your password.'}</p>`;
  return html`<section class="block" aria-labelledby="two-step-title">
<h2 id="two-step-title">Two-step sign-in</h2>
${t.recoveryCodes?.length ? recoveryCodeList(t.recoveryCodes) : ''}
${factors}
${t.passkey ? html`<h3>Passkeys</h3>\n<p class="muted">Sign in with your device's screen lock or a security key instead of a password and code.</p>\n${t.passkey}` : ''}
${t.enrolment ? html`<h3>Add an authenticator app</h3>
${totpEnrolment({ action: v.action, hidden: { csrf_token: v.csrf, enrolment: t.enrolment.sealed }, secret: t.enrolment.secret, uri: t.enrolment.uri, qr: t.enrolment.qr, askPassword: v.username })}` : ''}
</section>`;
}

/** "Your data" (a copy of it, as a JSON file) and, last, "Delete your account" (the password again). */
function accountDataSections(v: AccountView): Html {
  return html`<section class="block" aria-labelledby="data-title">
<h2 id="data-title">Your data</h2>
<p class="muted">Download a copy of everything this gatehouse holds about you: your profile, the applications you authorized, your second factors (never their secrets) and your records, as one JSON file.</p>
<form method="post" action="${v.action}">
${hiddenFields({ csrf_token: v.csrf })}
<div class="actions"><button type="submit" name="action" value="export">Download my data</button></div>
</form>
</section>
<section class="block danger-zone" aria-labelledby="delete-title">
<h2 id="delete-title">Delete your account</h2>
<p>Your account, your sign-in, the access of every application you authorized and all your records are deleted. This cannot be undone.</p>
<form method="post" action="${v.action}">
${hiddenFields({ csrf_token: v.csrf })}
<input type="text" name="username" value="${v.username}" autocomplete="username" hidden>
<label class="field" for="delete-password">Your password, to delete your account</label>
<input type="password" id="delete-password" name="password" autocomplete="current-password" required>
<div class="actions"><button type="submit" name="action" value="delete-account" class="danger">Delete my account</button></div>
</form>
</section>`;
}

/** After the account was deleted (the browser is signed out): its records gone, or still going in the background. */
export function accountDeletedPage(v: { recordsPending: boolean }): CardView {
  return {
    title: 'Your account was deleted',
    body: html`<h1>Your account was deleted</h1>
<p class="notice" role="status">${v.recordsPending ? 'Your account is gone and no application can use it any more. Your records are being deleted: that takes a few minutes.' : 'Your account, its authorizations and your records are gone. No application can use them any more.'}</p>
<p class="muted">You are signed out.</p>`,
  };
}
