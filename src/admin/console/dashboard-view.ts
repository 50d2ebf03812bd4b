import type { Maintenance } from '../../platform/store/settings.js';
import { html, type Html } from '../../platform/http/html/index.js';
import type { ListedMail, MailStatus } from '../../platform/mail/list.js';

// The dashboard's body: how many clients, users and grants, and the maintenance switch's state.

export interface DashboardView {
  base: string;
  clients: number;
  users: number;
  admins: number;
  grants: number;
  grantsCapped: boolean;
  maintenance: Maintenance;
  /** The mail outbox: how many in each status, and the mails failing or given up (newest first). */
  mail: Record<MailStatus, number>;
  troubled: ListedMail[];
}

const when = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace(/:\d\d\.\d+Z$/, ' UTC');

function mailCard(v: DashboardView): Html {
  if (v.troubled.length === 0) return html``;
  return html`<div class="card">
<h2>Mail not delivered</h2>
<p class="muted small">Failing mails are retried for 24 hours, then given up. The admin API lists them all: <code>GET ${v.base}/v1/mail</code>.</p>
<ul>
${v.troubled.map((m, i) => html`${i ? '\n' : ''}<li><strong>${m.status === 'failed' ? 'Given up' : `Retrying at ${when(m.next_at)}`}</strong>: ${m.kind} to ${m.recipient}, ${m.attempts} attempt${m.attempts === 1 ? '' : 's'}${m.last_error ? html` — <span class="muted">${m.last_error}</span>` : ''}</li>`)}
</ul>
</div>`;
}

export function dashboardBody(v: DashboardView): Html {
  return html`<h1>Dashboard</h1>
<ul class="stats">
<li><span class="n">${v.clients}</span> registered client${v.clients === 1 ? '' : 's'}<br><a href="${v.base}/clients">Clients</a></li>
<li><span class="n">${v.users}</span> user${v.users === 1 ? '' : 's'}, ${v.admins} admin${v.admins === 1 ? '' : 's'}<br><a href="${v.base}/users">Users</a></li>
<li><span class="n">${v.grants}${v.grantsCapped ? '+' : ''}</span> live grant${v.grants === 1 ? '' : 's'}<br><a href="${v.base}/grants">Grants</a></li>
<li><span class="n">${v.maintenance.on ? 'On' : 'Off'}</span> maintenance mode<br><a href="${v.base}/maintenance">Maintenance</a></li>
<li><span class="n">${v.mail.pending}</span> mail${v.mail.pending === 1 ? '' : 's'} waiting, ${v.mail.failed} given up<br><a href="${v.base}/invitations">Invitations</a></li>
</ul>
${mailCard(v)}
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
