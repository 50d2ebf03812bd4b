import { MIN_PASSWORD_LENGTH, type User } from '../../authserver/model/users.js';
import { csrfField, html, type Html } from '../../platform/http/html/index.js';
import { errorSummary, field, notice, table, when, type Errors } from './components.js';

// The bodies of the Users section: the list with the form that adds a user, and a user's page
// (admin rights, password, removal).

/** Whether an address is verified: a word, not a colour alone. */
function verifiedMark(verified: boolean): Html {
  return verified ? html`<span class="tag on">verified</span>` : html`<span class="tag warn">unverified</span>`;
}

export interface UsersView {
  base: string;
  csrf: string;
  users: User[];
  form: { username: string; admin: boolean };
  errors: Errors;
  error?: string;
  notice?: string;
}

export function usersBody(v: UsersView): Html {
  const rows = v.users.map((u) => [
    html`<a href="${v.base}/users/${u.id}">${u.username}</a>`,
    u.admin ? html`<span class="tag on">admin</span>` : html`<span class="muted">no</span>`,
    // One element: on a phone the cell is a grid of its label and its content.
    u.email ? html`<span>${u.email} ${verifiedMark(u.emailVerified)}</span>` : html`<span class="muted">none</span>`,
    html`<code>user:${u.id}</code>`,
    when(u.createdAt),
  ]);
  return html`<h1>Users</h1>
${notice(v.notice)}
${table('Users', ['Username', 'Admin', 'E-mail', 'Subject', 'Added'], rows, 'No user yet.')}
<section class="card" aria-labelledby="add">
<h2 id="add">Add a user</h2>
${v.error ? errorSummary(v.error, v.errors) : ''}
<form method="post" action="${v.base}/users" novalidate>
${csrfField(v.csrf)}
<div class="row">
${field({ name: 'username', label: 'Username', value: v.form.username, required: true, hint: '1–128 letters, digits or . _ @ + -', error: v.errors.username })}
${field({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'new-password', hint: `At least ${MIN_PASSWORD_LENGTH} characters.`, error: v.errors.password })}
</div>
<div class="field"><label class="choice" for="f-admin"><input type="checkbox" id="f-admin" name="admin" value="on"${v.form.admin ? html` checked` : ''}> Admin (may sign in here and be granted the admin scope)</label></div>
<div class="buttons"><button type="submit" class="primary">Add the user</button></div>
</form>
</section>`;
}

export interface UserView {
  base: string;
  csrf: string;
  user: User;
  self: boolean;
  grants: number;
  errors: Errors;
  error?: string;
  /** Which form the error is about. */
  failed?: 'password' | 'profile';
  /** The profile form's values when it comes back with an error. */
  profile?: { name: string; email: string; emailVerified: boolean };
  notice?: string;
}

export function userBody(v: UserView): Html {
  const u = v.user;
  return html`<p class="crumbs"><a href="${v.base}/users">Users</a></p>
<h1>User ${u.username}</h1>
${notice(v.notice)}
<div class="two">
<section class="card" aria-labelledby="about">
<h2 id="about">About</h2>
<dl class="props">
<dt>Username</dt><dd>${u.username}</dd>
<dt>Id</dt><dd><code>${u.id}</code></dd>
<dt>Subject</dt><dd><code>user:${u.id}</code></dd>
<dt>Name</dt><dd>${u.name ?? html`<span class="muted">none</span>`}</dd>
<dt>E-mail</dt><dd>${u.email ? html`${u.email} ${verifiedMark(u.emailVerified)}` : html`<span class="muted">none</span>`}${
  u.email && !u.emailVerified
    ? html`<form method="post" action="${v.base}/users/${u.id}/verification" class="after">${csrfField(v.csrf)}<button type="submit" class="small-button">Resend verification link</button></form>`
    : ''
}</dd>
<dt>Admin</dt><dd>${u.admin ? 'yes' : 'no'}</dd>
<dt>Added</dt><dd>${when(u.createdAt)}</dd>
<dt>Live grants</dt><dd><a href="${v.base}/grants?user=${encodeURIComponent(u.username)}">${v.grants}</a></dd>
</dl>
</section>
<div class="stack">
<section class="card" aria-labelledby="admin">
<h2 id="admin">Admin rights</h2>
${
  v.self
    ? html`<p class="muted">You are signed in as this user: take your own admin rights away with the CLI (<code>gatehouse user admin ${u.username} off</code>) or as another admin.</p>`
    : html`<p>${u.admin ? 'This user is an admin. Taking the right away also ends the grants that carry the admin scope.' : 'This user is not an admin.'}</p>
<form method="post" action="${v.base}/users/${u.id}/admin">${csrfField(v.csrf)}<input type="hidden" name="admin" value="${u.admin ? 'off' : 'on'}">
<button type="submit"${u.admin ? '' : html` class="primary"`}>${u.admin ? 'Remove admin rights' : 'Make admin'}</button></form>`
}
</section>
<section class="card" aria-labelledby="profile">
<h2 id="profile">Profile</h2>
${v.error && v.failed === 'profile' ? errorSummary(v.error, v.errors) : ''}
<form method="post" action="${v.base}/users/${u.id}/profile" novalidate>
${csrfField(v.csrf)}
${field({ name: 'name', label: 'Name', value: v.profile?.name ?? u.name ?? '', autocomplete: 'off', hint: 'Shown to applications granted the profile scope. Empty: none.', error: v.errors.name })}
${field({ name: 'email', label: 'E-mail address', type: 'email', value: v.profile?.email ?? u.email ?? '', autocomplete: 'off', hint: 'Shown to applications granted the email scope. Empty: none.', error: v.errors.email })}
<div class="field"><label class="choice" for="f-email-verified"><input type="checkbox" id="f-email-verified" name="email_verified" value="on"${(v.profile?.emailVerified ?? u.emailVerified) ? html` checked` : ''}> The address is verified</label></div>
<div class="buttons"><button type="submit">Save the profile</button></div>
</form>
</section>
<section class="card" aria-labelledby="pw">
<h2 id="pw">Password</h2>
${v.error && v.failed !== 'profile' ? errorSummary(v.error, v.errors) : ''}
<form method="post" action="${v.base}/users/${u.id}/password" novalidate>
${csrfField(v.csrf)}
${field({ name: 'password', label: 'New password', type: 'password', required: true, autocomplete: 'new-password', hint: `At least ${MIN_PASSWORD_LENGTH} characters. ${v.self ? 'Your other sessions end.' : 'Their sign-in sessions end; the grants they gave stay.'}`, error: v.errors.password })}
<div class="buttons"><button type="submit">Set the password</button></div>
</form>
</section>
<section class="card" aria-labelledby="del">
<h2 id="del">Remove</h2>
${
  v.self
    ? html`<p class="muted">You cannot remove yourself here.</p>`
    : html`<p>Ends their grants, tokens and sessions. Records they own stay.</p><a class="button" href="${v.base}/users/${u.id}/delete">Remove the user…</a>`
}
</section>
</div>
</div>`;
}
