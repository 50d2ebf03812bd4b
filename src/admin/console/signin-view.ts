import { html, signInForm, type Html } from '../../platform/http/html/index.js';

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
