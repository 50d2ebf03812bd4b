import type { Maintenance } from '../../platform/store/settings.js';
import { csrfField, html, type Html } from '../../platform/http/html/index.js';
import { notice, when } from './components.js';

// The body of the Maintenance section: the switch, and what it does.

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
