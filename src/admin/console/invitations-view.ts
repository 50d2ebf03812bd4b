import type { Invitation } from '../../authserver/model/lifecycle.js';
import { csrfField, html, type Html } from '../../platform/http/html/index.js';
import { errorSummary, field, notice, table, when, type Errors } from './components.js';

// The body of the Invitations section: the sign-up policy (auth.signup), the form that invites an
// address, and the open invitations, each revocable.

export interface InvitationsView {
  base: string;
  csrf: string;
  policy: 'closed' | 'invite' | 'open';
  signupUrl: string;
  invitations: Invitation[];
  /** Who invited, by subject: a user's name (null subject: the command line). */
  usernames: Map<string, string>;
  form: { email: string };
  errors: Errors;
  error?: string;
  notice?: string;
}

function invitedBy(subject: string | null, usernames: Map<string, string>, base: string): Html {
  if (subject === null) return html`<span class="muted">command line</span>`;
  if (subject.startsWith('user:')) {
    const id = subject.slice(5);
    const name = usernames.get(id);
    return name ? html`<a href="${base}/users/${id}">${name}</a>` : html`<code>${subject}</code>`;
  }
  if (subject.startsWith('client:')) return html`<span>admin API (<code>${subject.slice(7)}</code>)</span>`;
  return html`<code>${subject}</code>`;
}

function policyNote(v: InvitationsView): Html {
  if (v.policy === 'closed')
    return html`<p class="banner" role="note"><strong>Sign-up is closed.</strong> Nobody can make an account and no invitation can be sent: set <code>auth.signup: invite</code> (by invitation only) or <code>auth.signup: open</code> in the config to invite people.</p>`;
  if (v.policy === 'invite') return html`<p>Sign-up is by invitation (<code>auth.signup: invite</code>): only an address invited here, through the admin API or with <code>gatehouse user invite</code> can make an account, with the link mailed to it (valid 7 days, once).</p>`;
  return html`<p>Sign-up is open (<code>auth.signup: open</code>): anyone can make an account at <code>${v.signupUrl}</code>. An invitation spares its address the verification mail.</p>`;
}

export function invitationsBody(v: InvitationsView): Html {
  const rows = v.invitations.map((i) => [
    html`${i.email}`,
    invitedBy(i.createdBy, v.usernames, v.base),
    when(i.createdAt),
    when(i.expiresAt),
    html`<a class="button small-button" href="${v.base}/invitations/${i.id}/revoke">Revoke<span class="visually-hidden"> the invitation of ${i.email}</span>…</a>`,
  ]);
  return html`<h1>Invitations</h1>
${notice(v.notice)}
${policyNote(v)}
${
  v.policy === 'closed'
    ? ''
    : html`<section class="card" aria-labelledby="invite">
<h2 id="invite">Invite someone</h2>
${v.error ? errorSummary(v.error, v.errors) : ''}
<form method="post" action="${v.base}/invitations" novalidate>
${csrfField(v.csrf)}
${field({ name: 'email', label: 'E-mail address', type: 'email', value: v.form.email, required: true, hint: 'A link to the sign-up page is mailed to it; the account it makes has this address, verified.', error: v.errors.email })}
<div class="buttons"><button type="submit" class="primary">Send the invitation</button></div>
</form>
</section>`
}
${v.policy === 'closed' && v.error ? errorSummary(v.error, v.errors) : ''}
<h2>Open invitations</h2>
${table('Open invitations', ['Address', 'Invited by', 'Sent', 'Expires', ''], rows, 'No open invitation.')}`;
}
