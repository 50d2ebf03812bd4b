import type { Client } from '../../authserver/model/clients.js';
import type { User } from '../../authserver/model/users.js';
import type { GrantView } from '../../authserver/tokens.js';
import { html, type Html } from '../../platform/http/html/index.js';
import { notice, table, when } from './components.js';

// The body of the Grants section: the live grants, filtered by user or client, each revocable.

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
