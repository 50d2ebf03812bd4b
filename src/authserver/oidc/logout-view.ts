import { hiddenFields, html } from '../../platform/http/html/index.js';
import type { CardView } from '../authorize/views.js';

// The pages of RP-initiated logout ({auth_url}/logout): the question, and the answer when no
// application is waiting for the browser.

export function logoutPage(v: { action: string; username: string; clientName: string | null; fields: Record<string, string | undefined>; csrf: string }): CardView {
  return {
    title: 'Sign out',
    body: html`<h1>Sign out of gatehouse?</h1>
<p class="muted">${v.clientName ? html`<strong class="client">${v.clientName}</strong> asks to sign you out. ` : ''}You are signed in as <strong>${v.username}</strong>.</p>
<form method="post" action="${v.action}">
${hiddenFields({ ...v.fields, csrf_token: v.csrf, step: 'confirm' })}
<div class="actions">
<button type="submit" name="decision" value="logout" class="primary">Sign out</button>
<button type="submit" name="decision" value="stay">Stay signed in</button>
</div>
</form>
<p class="target">Signing out ends your gatehouse session in this browser. The applications you authorized keep their access until it expires or you revoke it on your account page.</p>`,
  };
}

export function signedOutPage(signedOut: boolean): CardView {
  return signedOut
    ? { title: 'Signed out', body: html`<h1>You are signed out</h1>\n<p>Your gatehouse session in this browser has ended. You can close this page.</p>` }
    : { title: 'Still signed in', body: html`<h1>You are still signed in</h1>\n<p>Nothing was changed. You can close this page.</p>` };
}
