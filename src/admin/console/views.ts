import type { Client } from '../../authserver/model/clients.js';
import { GRANT_TYPES } from '../../authserver/model/clients.js';
import type { User } from '../../authserver/model/users.js';
import type { GrantView } from '../../authserver/tokens.js';
import type { Maintenance } from '../../platform/store/settings.js';
import type { DeliveryAttempt, Webhook } from '../../webhooks/webhooks.js';
import { choices, csrfField, errorSummary, field, html, table, when, type Errors, type Html } from './html.js';

// The bodies of the console's pages (layout and form pieces in html.ts). Every value is escaped by
// the `html` template; every form that changes something posts with the CSRF token.

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
<form method="post" action="${v.base}/signin">
${csrfField(v.csrf)}${v.next ? html`<input type="hidden" name="next" value="${v.next}">` : ''}
${field({ name: 'username', label: 'Username', value: v.username, required: true, autocomplete: 'username', autofocus: !v.username })}
${field({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'current-password', autofocus: !!v.username })}
<div class="buttons"><button type="submit" class="primary">Sign in</button></div>
</form>
</div>
<p class="muted small">For admins of this gatehouse. Accounts are made admins with <code>gatehouse user admin NAME on</code>.</p>`;
}

export function messageBody(title: string, message: string, links: Html = html``): Html {
  return html`<div class="card"><h1>${title}</h1><p role="alert">${message}</p>${links}</div>`;
}

export function notice(text: string | undefined): Html {
  return text ? html`<p class="notice" role="status">${text}</p>` : html``;
}

// ——— Dashboard ———

export interface DashboardView {
  base: string;
  clients: number;
  users: number;
  admins: number;
  grants: number;
  grantsCapped: boolean;
  maintenance: Maintenance;
}

export function dashboardBody(v: DashboardView): Html {
  return html`<h1>Dashboard</h1>
<ul class="stats">
<li><span class="n">${v.clients}</span> registered client${v.clients === 1 ? '' : 's'}<br><a href="${v.base}/clients">Clients</a></li>
<li><span class="n">${v.users}</span> user${v.users === 1 ? '' : 's'}, ${v.admins} admin${v.admins === 1 ? '' : 's'}<br><a href="${v.base}/users">Users</a></li>
<li><span class="n">${v.grants}${v.grantsCapped ? '+' : ''}</span> live grant${v.grants === 1 ? '' : 's'}<br><a href="${v.base}/grants">Grants</a></li>
<li><span class="n">${v.maintenance.on ? 'On' : 'Off'}</span> maintenance mode<br><a href="${v.base}/maintenance">Maintenance</a></li>
</ul>
<div class="card">
<h2>What you can do here</h2>
<ul>
<li><a href="${v.base}/clients">Register a client</a>, change its redirect URIs, grants and scope, rotate its secret or delete it.</li>
<li><a href="${v.base}/users">Add a user</a>, make them an admin, set their password or remove them.</li>
<li><a href="${v.base}/grants">See and revoke the grants</a> users gave to applications.</li>
<li><a href="${v.base}/maintenance">Switch maintenance mode</a> on every instance.</li>
</ul>
<p class="muted small">Automation uses the admin API at <code>${v.base}/v1</code> with a token that has the <code>admin</code> scope.</p>
</div>`;
}

// ——— Clients ———

export interface ClientFormValues {
  client_id: string;
  name: string;
  type: 'confidential' | 'public';
  redirect_uris: string;
  grant_types: string[];
  scope: string;
  token_type: string;
  origins: string;
  uri: string;
  verified: boolean;
  introspect: boolean;
  require_pkce: boolean;
}

export function clientFormValues(client: Client): ClientFormValues {
  return {
    client_id: client.id,
    name: client.name,
    type: client.public ? 'public' : 'confidential',
    redirect_uris: client.redirectUris.join('\n'),
    grant_types: client.grantTypes,
    scope: client.scope ?? '',
    token_type: client.tokenType,
    origins: client.origins.join('\n'),
    uri: client.uri ?? '',
    verified: client.verified,
    introspect: client.introspect,
    require_pkce: client.requirePkce,
  };
}

export const EMPTY_CLIENT: ClientFormValues = { client_id: '', name: '', type: 'confidential', redirect_uris: '', grant_types: [], scope: '', token_type: 'bearer', origins: '', uri: '', verified: false, introspect: false, require_pkce: false };

/** A checkbox whose value is `yes` when ticked. */
const tick = (name: string, legend: string, label: string, on: boolean, error?: string) => choices({ name, legend, type: 'checkbox', options: [{ value: 'yes', label }], chosen: on ? ['yes'] : [], error });

/** The grant checkboxes: those the deployment offers, and any it has turned off that the client still holds (marked so). */
function grantOptions(enabled: readonly string[], chosen: string[]) {
  return GRANT_TYPES.filter((g) => enabled.includes(g) || chosen.includes(g)).map((g) => ({ value: g, label: enabled.includes(g) ? g : `${g} (turned off in this deployment: auth.grants)` }));
}

function clientFields(v: ClientFormValues, errors: Errors, knownScopes: string[], creating: boolean, enabledGrants: readonly string[]): Html {
  return html`${creating ? field({ name: 'client_id', label: 'Client id', value: v.client_id, required: true, hint: '1–128 letters, digits or . _ ~ -; it cannot change later.', error: errors.client_id }) : ''}
${field({ name: 'name', label: 'Name', value: v.name, hint: 'Shown to users on the consent page. Empty: the client id.', error: errors.name })}
${
  creating
    ? choices({
        name: 'type',
        legend: 'Type',
        type: 'radio',
        options: [
          { value: 'confidential', label: 'Confidential (has a secret)' },
          { value: 'public', label: 'Public (no secret: apps, SPAs)' },
        ],
        chosen: [v.type],
        error: errors.type ?? errors.client_secret,
      })
    : ''
}
${choices({ name: 'grant_types', legend: 'Grants', type: 'checkbox', options: grantOptions(enabledGrants, v.grant_types), chosen: v.grant_types, error: errors.grant_types })}
${field({ name: 'redirect_uris', label: 'Redirect URIs', value: v.redirect_uris, multiline: true, hint: 'One per line; absolute, no fragment; plain http only for 127.0.0.1, [::1] and localhost. Needed for authorization_code and implicit.', error: errors.redirect_uris })}
${field({ name: 'origins', label: 'Browser origins', value: v.origins, multiline: true, hint: 'One per line (https://app.example): pages that may call with its tokens (CORS), beside its redirect URIs\' origins.', error: errors.origins })}
${field({ name: 'uri', label: 'Home page', value: v.uri, hint: 'Shown to users (as its host) on the consent and account pages.', error: errors.uri })}
${choices({ name: 'verified', legend: 'Verified', type: 'checkbox', options: [{ value: 'yes', label: 'I vouch for this application (no "not verified" note on the consent page)' }], chosen: v.verified ? ['yes'] : [], error: errors.verified })}
${tick('introspect', 'Resource server', 'May introspect every client\'s tokens (any client may introspect its own; confidential clients only)', v.introspect, errors.introspect)}
${tick('require_pkce', 'PKCE', 'Require a PKCE challenge (S256) with every authorization code request (public clients always must)', v.require_pkce, errors.require_pkce)}
${field({ name: 'scope', label: 'Scope', value: v.scope, hint: `Space-separated. Empty: the client may ask for every collection scope (admin only when named here). Known: ${knownScopes.join(' ')}`, error: errors.scope })}
${choices({
  name: 'token_type',
  legend: 'Token type',
  type: 'radio',
  options: [
    { value: 'bearer', label: 'Bearer' },
    { value: 'mac', label: 'MAC' },
  ],
  chosen: [v.token_type],
  error: errors.token_type,
})}`;
}

export interface ClientsView {
  base: string;
  csrf: string;
  clients: Client[];
  form: ClientFormValues;
  errors: Errors;
  error?: string;
  notice?: string;
  knownScopes: string[];
  /** The grants the deployment offers (auth.grants). */
  enabledGrants: readonly string[];
}

export function clientsBody(v: ClientsView): Html {
  const rows = v.clients.map((c) => [
    html`<a href="${v.base}/clients/${encodeURIComponent(c.id)}"><code>${c.id}</code></a>`,
    html`${c.name}`,
    html`${c.public ? 'public' : 'confidential'}`,
    html`${c.grantTypes.join(', ')}`,
    c.scope === null ? html`<span class="muted">every scope</span>` : html`<code>${c.scope}</code>`,
    when(c.createdAt),
  ]);
  return html`<h1>Clients</h1>
${notice(v.notice)}
${table('Registered clients', ['Client id', 'Name', 'Type', 'Grants', 'Scope', 'Registered'], rows, 'No client is registered yet.')}
<section class="card" aria-labelledby="register">
<h2 id="register">Register a client</h2>
${v.error ? errorSummary(v.error, v.errors) : ''}
<form method="post" action="${v.base}/clients" novalidate>
${csrfField(v.csrf)}
${clientFields(v.form, v.errors, v.knownScopes, true, v.enabledGrants)}
<div class="buttons"><button type="submit" class="primary">Register the client</button></div>
<p class="hint">A confidential client gets a generated 256-bit secret, shown once on the next page.</p>
</form>
</section>`;
}

export function clientProps(c: Client): Html {
  return html`<dl class="props">
<dt>Client id</dt><dd><code>${c.id}</code></dd>
<dt>Name</dt><dd>${c.name}</dd>
<dt>Type</dt><dd>${c.public ? 'public' : 'confidential'}</dd>
<dt>Grants</dt><dd>${c.grantTypes.join(', ')}</dd>
<dt>Redirect URIs</dt><dd>${c.redirectUris.length ? c.redirectUris.map((u, i) => html`${i ? html`<br>` : ''}<code>${u}</code>`) : html`<span class="muted">none</span>`}</dd>
<dt>Scope</dt><dd>${c.scope === null ? html`<span class="muted">every scope</span>` : html`<code>${c.scope}</code>`}</dd>
<dt>Token type</dt><dd>${c.tokenType}</dd>
<dt>Browser origins</dt><dd>${c.origins.length ? c.origins.map((o, i) => html`${i ? html`<br>` : ''}<code>${o}</code>`) : html`<span class="muted">only its redirect URIs'</span>`}</dd>
<dt>Home page</dt><dd>${c.uri ? html`<code>${c.uri}</code>` : html`<span class="muted">none</span>`}</dd>
<dt>Verified</dt><dd>${c.verified ? 'yes' : 'no'}</dd>
<dt>Resource server</dt><dd>${c.introspect ? 'yes: may introspect every client\'s tokens' : 'no'}</dd>
<dt>PKCE required</dt><dd>${c.requirePkce || c.public ? 'yes' : 'no'}</dd>
<dt>Registered</dt><dd>${when(c.createdAt)}</dd>
</dl>`;
}

export interface SecretView {
  base: string;
  client: Client;
  secret: string | null;
  rotated: boolean;
}

/** The page after registering or rotating: the secret, this once. */
export function secretBody(v: SecretView): Html {
  const id = encodeURIComponent(v.client.id);
  return html`<p class="crumbs"><a href="${v.base}/clients">Clients</a></p>
<h1>${v.rotated ? 'New secret for' : 'Client registered:'} <code>${v.client.id}</code></h1>
${
  v.secret === null
    ? html`<p class="notice" role="status">The client is registered. It is public: it has no secret.</p>`
    : html`<div class="card">
<h2>Client secret</h2>
<p><strong>Copy it now: it is shown this once.</strong> gatehouse keeps only its hash${v.rotated ? '; the previous secret no longer works' : ''}.</p>
<code class="secret" id="client-secret">${v.secret}</code>
<div class="buttons"><button type="button" class="primary" data-copy="client-secret" hidden>Copy the secret</button> <span id="client-secret-status" role="status" class="small"></span></div>
</div>`
}
<div class="card">
<h2>The client</h2>
${clientProps(v.client)}
</div>
<p><a class="button" href="${v.base}/clients/${id}">Done: to the client's page</a></p>`;
}

export interface ClientView {
  base: string;
  csrf: string;
  client: Client;
  form: ClientFormValues;
  errors: Errors;
  error?: string;
  notice?: string;
  knownScopes: string[];
  /** The grants the deployment offers (auth.grants). */
  enabledGrants: readonly string[];
}

export function clientBody(v: ClientView): Html {
  const id = encodeURIComponent(v.client.id);
  return html`<p class="crumbs"><a href="${v.base}/clients">Clients</a></p>
<div class="head"><h1>Client <code>${v.client.id}</code></h1></div>
${notice(v.notice)}
<div class="two">
<section class="card" aria-labelledby="edit">
<h2 id="edit">Settings</h2>
${v.error ? errorSummary(v.error, v.errors) : ''}
<form method="post" action="${v.base}/clients/${id}" novalidate>
${csrfField(v.csrf)}
${clientFields(v.form, v.errors, v.knownScopes, false, v.enabledGrants)}
<div class="buttons"><button type="submit" class="primary">Save changes</button></div>
</form>
</section>
<div class="stack">
<section class="card" aria-labelledby="now">
<h2 id="now">As registered</h2>
${clientProps(v.client)}
</section>
${
  v.client.public
    ? ''
    : html`<section class="card" aria-labelledby="rotate">
<h2 id="rotate">Secret</h2>
<p>A new secret replaces the current one at once on every instance; tokens already issued stay valid.</p>
<a class="button" href="${v.base}/clients/${id}/secret">Rotate the secret…</a>
</section>`
}
<section class="card" aria-labelledby="delete">
<h2 id="delete">Delete</h2>
<p>Ends the client's grants and tokens; its credentials stop working.</p>
<a class="button" href="${v.base}/clients/${id}/delete">Delete the client…</a>
</section>
</div>
</div>`;
}

// ——— Confirmation ———

export interface ConfirmView {
  csrf: string;
  title: string;
  text: string;
  details?: Html;
  action: string;
  button: string;
  cancel: string;
  hidden?: Record<string, string>;
}

export function confirmBody(v: ConfirmView): Html {
  return html`<div class="card confirm">
<h1>${v.title}</h1>
<p>${v.text}</p>
${v.details ?? ''}
<form method="post" action="${v.action}">
${csrfField(v.csrf)}${Object.entries(v.hidden ?? {}).map(([k, val]) => html`<input type="hidden" name="${k}" value="${val}">`)}
<div class="buttons"><button type="submit" class="danger">${v.button}</button> <a class="button" href="${v.cancel}">Cancel</a></div>
</form>
</div>`;
}

// ——— Users ———

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
    html`<code>user:${u.id}</code>`,
    when(u.createdAt),
  ]);
  return html`<h1>Users</h1>
${notice(v.notice)}
${table('Users', ['Username', 'Admin', 'Subject', 'Added'], rows, 'No user yet.')}
<section class="card" aria-labelledby="add">
<h2 id="add">Add a user</h2>
${v.error ? errorSummary(v.error, v.errors) : ''}
<form method="post" action="${v.base}/users" novalidate>
${csrfField(v.csrf)}
<div class="row">
${field({ name: 'username', label: 'Username', value: v.form.username, required: true, hint: '1–128 letters, digits or . _ @ + -', error: v.errors.username })}
${field({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'new-password', hint: 'At least 8 characters.', error: v.errors.password })}
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
<section class="card" aria-labelledby="pw">
<h2 id="pw">Password</h2>
${v.error ? errorSummary(v.error, v.errors) : ''}
<form method="post" action="${v.base}/users/${u.id}/password" novalidate>
${csrfField(v.csrf)}
${field({ name: 'password', label: 'New password', type: 'password', required: true, autocomplete: 'new-password', hint: `At least 8 characters. ${v.self ? 'Your other sessions end.' : 'Their sign-in sessions end; the grants they gave stay.'}`, error: v.errors.password })}
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

// ——— Grants ———

export interface GrantsView {
  base: string;
  grants: GrantView[];
  capped: boolean;
  usernames: Map<string, string>;
  users: User[];
  clients: Client[];
  filter: { user?: string; client?: string };
  error?: string;
  notice?: string;
}

export function who(subject: string, usernames: Map<string, string>, base: string): Html {
  if (subject.startsWith('user:')) {
    const id = subject.slice(5);
    const name = usernames.get(id);
    return name ? html`<a href="${base}/users/${id}">${name}</a>` : html`<code>${subject}</code>`;
  }
  if (subject.startsWith('client:')) return html`the client itself`;
  return html`<code>${subject}</code>`;
}

export function grantsBody(v: GrantsView): Html {
  const rows = v.grants.map((g) => [
    who(g.subject, v.usernames, v.base),
    html`<a href="${v.base}/clients/${encodeURIComponent(g.client_id)}"><code>${g.client_id}</code></a>`,
    html`<code>${g.scope}</code>`,
    when(g.created_at),
    when(g.expires_at),
    when(g.last_used_at),
    html`<a class="button small-button" href="${v.base}/grants/${g.id}/revoke">Revoke<span class="visually-hidden"> the grant to ${g.client_id}</span>…</a>`,
  ]);
  const filtered = v.filter.user !== undefined || v.filter.client !== undefined;
  return html`<h1>Grants</h1>
${notice(v.notice)}
${v.error ? html`<p class="alert" role="alert">${v.error}</p>` : ''}
<form method="get" action="${v.base}/grants" class="filters card" role="search" aria-label="Filter the grants">
<div class="field"><label for="f-user">User</label><select id="f-user" name="user"><option value="">Any user</option>${v.users.map(
    (u) => html`<option value="${u.username}"${v.filter.user === u.username ? html` selected` : ''}>${u.username}</option>`,
  )}</select></div>
<div class="field"><label for="f-client">Client</label><select id="f-client" name="client"><option value="">Any client</option>${v.clients.map(
    (c) => html`<option value="${c.id}"${v.filter.client === c.id ? html` selected` : ''}>${c.id}</option>`,
  )}</select></div>
<div class="buttons"><button type="submit">Filter</button>${filtered ? html` <a href="${v.base}/grants">Clear</a>` : ''}</div>
</form>
<p class="muted small">Live grants (not revoked, not expired)${v.capped ? `, the first ${v.grants.length}` : ''}: ${v.grants.length}.</p>
${table('Live grants', ['User', 'Client', 'Scope', 'Granted', 'Expires', 'Last used', ''], rows, filtered ? 'No live grant matches.' : 'No live grant.')}`;
}

// ——— Maintenance ———

export function maintenanceBody(base: string, csrf: string, m: Maintenance, message?: string): Html {
  return html`<h1>Maintenance</h1>
${notice(message)}
<div class="card">
<p class="state">Maintenance mode is ${m.on ? html`<span class="tag warn">on</span>` : html`<span class="tag">off</span>`}${m.on && m.since ? html` since ${when(m.since)}` : ''}.</p>
<p class="muted">When it is on, every instance answers the resource API and the authorization server with 503 and <code>Retry-After</code> within a second; <code>/health</code>, the admin API and this console keep answering.</p>
<form method="post" action="${base}/maintenance">
${csrfField(csrf)}<input type="hidden" name="enabled" value="${m.on ? 'off' : 'on'}">
<button type="submit" class="${m.on ? 'primary' : 'danger'}">${m.on ? 'Turn maintenance mode off' : 'Turn maintenance mode on'}</button>
</form>
</div>`;
}

// ——— Webhooks ———

export interface WebhooksView {
  base: string;
  csrf: string;
  webhooks: Webhook[];
  form: { url: string; events: string[]; collections: string[] };
  eventTypes: readonly string[];
  collections: string[];
  errors: Errors;
  error?: string;
  notice?: string;
}

const everything = (list: string[], what: string) => (list.length ? html`${list.join(', ')}` : html`<span class="muted">${what}</span>`);

export function webhooksBody(v: WebhooksView): Html {
  const rows = v.webhooks.map((w) => [
    html`<a href="${v.base}/webhooks/${w.id}"><code>${w.url}</code></a>`,
    everything(w.events, 'every type'),
    everything(w.collections, 'every collection'),
    when(w.createdAt),
    html`<a href="${v.base}/webhooks/${w.id}/delete">Delete…</a>`,
  ]);
  return html`<h1>Webhooks</h1>
${notice(v.notice)}
<p>Each event is POSTed to the URL, signed per Standard Webhooks, and retried for 24 hours until it is accepted (<code>docs/events.md</code>).</p>
${table('Webhooks', ['URL', 'Events', 'Collections', 'Added', ''], rows, 'No webhook yet.')}
<section class="card" aria-labelledby="add">
<h2 id="add">Add a webhook</h2>
${v.error ? errorSummary(v.error, v.errors) : ''}
<form method="post" action="${v.base}/webhooks" novalidate>
${csrfField(v.csrf)}
${field({ name: 'url', label: 'URL', value: v.form.url, hint: 'https only; loopback and private addresses are refused unless events.webhooks.allowPrivateNetworks', error: v.errors.url, required: true })}
${choices({ name: 'events', legend: 'Event types', type: 'checkbox', options: v.eventTypes.map((t) => ({ value: t, label: t })), chosen: v.form.events, hint: 'None ticked: every type.', error: v.errors.events })}
${choices({ name: 'collections', legend: 'Collections', type: 'checkbox', options: v.collections.map((c) => ({ value: c, label: c })), chosen: v.form.collections, hint: 'None ticked: every collection, and the admin events.', error: v.errors.collections })}
<div class="buttons"><button type="submit" class="primary">Add the webhook</button></div>
<p class="hint">Its signing secret is shown once on the next page.</p>
</form>
</section>`;
}

export function webhookProps(w: Webhook): Html {
  return html`<dl class="props">
<dt>URL</dt><dd><code>${w.url}</code></dd>
<dt>Events</dt><dd>${everything(w.events, 'every type')}</dd>
<dt>Collections</dt><dd>${everything(w.collections, 'every collection')}</dd>
<dt>Added</dt><dd>${when(w.createdAt)}</dd>
</dl>`;
}

/** After adding: the secret, this once. */
export function webhookSecretBody(base: string, w: Webhook, secret: string): Html {
  return html`<p class="crumbs"><a href="${base}/webhooks">Webhooks</a></p>
<h1>Webhook added</h1>
<div class="card">
<h2>Signing secret</h2>
<p><strong>Copy it now: it is shown this once.</strong> Your receiver verifies every delivery with it.</p>
<code class="secret" id="webhook-secret">${secret}</code>
<div class="buttons"><button type="button" class="primary" data-copy="webhook-secret" hidden>Copy the secret</button> <span id="webhook-secret-status" role="status" class="small"></span></div>
</div>
<div class="card"><h2>The webhook</h2>${webhookProps(w)}</div>
<p><a class="button" href="${base}/webhooks/${w.id}">Done: to its deliveries</a></p>`;
}

export function webhookBody(base: string, w: Webhook, attempts: DeliveryAttempt[], pending: number): Html {
  const rows = attempts.map((a) => [
    when(a.time),
    html`<code>${a.event_id}</code>`,
    html`${String(a.attempt)}`,
    a.status_code === null ? html`<span class="muted">none</span>` : html`${String(a.status_code)}`,
    html`${String(a.duration_ms)} ms`,
    html`<strong>${a.outcome}</strong>${a.error ? html`<br><span class="small">${a.error}</span>` : ''}`,
  ]);
  return html`<p class="crumbs"><a href="${base}/webhooks">Webhooks</a></p>
<div class="head"><h1>Webhook</h1></div>
<div class="card">${webhookProps(w)}<p>${String(pending)} ${pending === 1 ? 'delivery is' : 'deliveries are'} waiting. <a href="${base}/webhooks/${w.id}/delete">Delete the webhook…</a></p></div>
<h2>Delivery attempts, newest first</h2>
${table('Delivery attempts', ['Time', 'Event', 'Attempt', 'Status', 'Duration', 'Outcome'], rows, 'Nothing delivered yet.')}`;
}
