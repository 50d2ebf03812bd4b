import type { RegistrationPolicy, RegistrationToken } from '../../authserver/model/registration.js';
import { csrfField, html, type Html } from '../../platform/http/html/index.js';
import { errorSummary, field, notice, table, when, type Errors } from './components.js';

// The bodies of the console's registration tokens (part of the Clients section): the policy
// (auth.registration), the form that makes an initial access token, the live ones, and the token
// shown once after it was made.

export interface RegistrationTokensView {
  base: string;
  csrf: string;
  policy: RegistrationPolicy;
  registerUrl: string;
  tokens: RegistrationToken[];
  form: { ttl: string; uses: string };
  errors: Errors;
  error?: string;
  notice?: string;
}

function policyNote(v: RegistrationTokensView): Html {
  if (v.policy === 'closed')
    return html`<p class="banner" role="note"><strong>Dynamic client registration is closed</strong> (<code>auth.registration: closed</code>): applications cannot register themselves, and these tokens register nothing until it is set to <code>token</code>.</p>`;
  if (v.policy === 'open') return html`<p>Registration is open (<code>auth.registration: open</code>): any application can register itself at <code>${v.registerUrl}</code> without a token.</p>`;
  return html`<p>Registration needs an initial access token (<code>auth.registration: token</code>): the application sends it as <code>Authorization: Bearer …</code> to <code>${v.registerUrl}</code>. Clients registered this way are not verified.</p>`;
}

export function registrationTokensBody(v: RegistrationTokensView): Html {
  const rows = v.tokens.map((t) => [
    html`<code>${t.id}</code>`,
    when(t.createdAt),
    when(t.expiresAt),
    html`${String(t.usesLeft)}`,
    html`<a class="button small-button" href="${v.base}/registration-tokens/${t.id}/revoke">Revoke<span class="visually-hidden"> the token ${t.id}</span>…</a>`,
  ]);
  return html`<p class="crumbs"><a href="${v.base}/clients">Clients</a></p>
<h1>Registration tokens</h1>
${notice(v.notice)}
${policyNote(v)}
<section class="card" aria-labelledby="make">
<h2 id="make">Make a registration token</h2>
${v.error ? errorSummary(v.error, v.errors) : ''}
<form method="post" action="${v.base}/registration-tokens" novalidate>
${csrfField(v.csrf)}
${field({ name: 'ttl', label: 'Valid for (seconds)', value: v.form.ttl, hint: '60 to 2592000 (30 days); empty: a day.', error: v.errors.ttl })}
${field({ name: 'uses', label: 'Registrations', value: v.form.uses, hint: 'How many clients it may register; empty: one.', error: v.errors.uses })}
<div class="buttons"><button type="submit" class="primary">Make the token</button></div>
</form>
</section>
<h2>Live registration tokens</h2>
${table('Live registration tokens', ['Id', 'Made', 'Expires', 'Uses left', ''], rows, 'No live registration token.')}`;
}

/** The page after making a token: the token, this once. */
export function registrationTokenMadeBody(base: string, token: string, made: RegistrationToken): Html {
  return html`<p class="crumbs"><a href="${base}/registration-tokens">Registration tokens</a></p>
<h1>Registration token made</h1>
<div class="card">
<h2>Initial access token</h2>
<p><strong>Copy it now: it is shown this once.</strong> gatehouse keeps only its hash. It registers ${String(made.usesLeft)} client${made.usesLeft === 1 ? '' : 's'} until ${when(made.expiresAt)}.</p>
<code class="secret" id="registration-token">${token}</code>
<div class="buttons"><button type="button" class="primary" data-copy="registration-token" hidden>Copy the token</button> <span id="registration-token-status" role="status" class="small"></span></div>
</div>
<p><a class="button" href="${base}/registration-tokens">Done</a></p>`;
}
