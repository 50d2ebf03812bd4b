import { html, signInForm, type Html } from '../../platform/http/html/index.js';
import { otpForm, recoveryCodeList, totpEnrolment } from '../../authserver/authorize/factor-views.js';

// The console's sign-in page: the kit's sign-in form (the login page's and the account page's
// too), with the console's own words around it.

export interface SignInView {
  base: string;
  csrf: string;
  next?: string;
  username?: string;
  error?: string;
  info?: string;
}

export function signInBody(v: SignInView): Html {
  return html`<div class="card">
<h1>Sign in to the admin console</h1>
${v.info && !v.error ? html`<p class="muted">${v.info}</p>` : ''}
${v.error ? html`<p class="alert" role="alert">${v.error}</p>` : ''}
${signInForm({ action: `${v.base}/signin`, hidden: { csrf_token: v.csrf, next: v.next }, username: v.username, idPrefix: 'f-' })}
</div>
<p class="muted small">For admins of this gatehouse. Accounts are made admins with <code>gatehouse user admin NAME on</code>.</p>`;
}

export interface SecondStepView {
  base: string;
  hidden: Record<string, string | undefined>;
  username: string;
  /** A set-up the policy asks for (`auth.mfa`), else the code form. */
  enrolment?: { secret: string; uri: string; qr: Html; sealed: string };
  error?: string;
  /** No authenticator app (a passkey only, which the console does not take): a recovery code. */
  recoveryOnly?: boolean;
}

/** The second step of the console's sign-in: the code, or setting up an authenticator app. */
export function secondStepBody(v: SecondStepView): Html {
  const action = `${v.base}/signin`;
  const form = v.enrolment
    ? totpEnrolment({ action, hidden: { ...v.hidden, enrolment: v.enrolment.sealed }, secret: v.enrolment.secret, uri: v.enrolment.uri, qr: v.enrolment.qr, idPrefix: 'f-' })
    : otpForm({ action, hidden: v.hidden, idPrefix: 'f-', recoveryOnly: v.recoveryOnly });
  return html`<div class="card">
<h1>${v.enrolment ? 'Set up two-step sign-in' : 'Two-step sign-in'}</h1>
<p class="muted">${v.enrolment ? html`This gatehouse asks admins for a code from an authenticator app at every sign-in.` : html`Signing in as <strong>${v.username}</strong>.`}</p>
${v.error ? html`<p class="alert" role="alert">${v.error}</p>` : ''}
${form}
</div>`;
}

export function recoveryCodesBody(v: { codes: string[]; continueUrl: string }): Html {
  return html`<div class="card">
<h1>Two-step sign-in is on</h1>
${recoveryCodeList(v.codes)}
<p><a class="button primary" href="${v.continueUrl}">Continue to the console</a></p>
</div>`;
}
