import { csrfField, html, type Html } from '../../platform/http/html/index.js';

// The console's bar above every signed-in page (its sections, who is signed in, sign out), and
// the banner that says maintenance mode is on.

export type Section = 'dashboard' | 'clients' | 'users' | 'invitations' | 'grants' | 'webhooks' | 'maintenance';

const SECTIONS: { id: Section; label: string; path: string }[] = [
  { id: 'dashboard', label: 'Dashboard', path: '' },
  { id: 'clients', label: 'Clients', path: '/clients' },
  { id: 'users', label: 'Users', path: '/users' },
  { id: 'invitations', label: 'Invitations', path: '/invitations' },
  { id: 'grants', label: 'Grants', path: '/grants' },
  { id: 'webhooks', label: 'Webhooks', path: '/webhooks' },
  { id: 'maintenance', label: 'Maintenance', path: '/maintenance' },
];

/** What the signed-in chrome shows: who, the section, the form token, the maintenance switch. */
export interface Chrome {
  base: string;
  username: string;
  csrf: string;
  section: Section | null;
  maintenance: boolean;
}

/** The bar above a page: signed in, the sections and who; signed out (no `chrome`), the brand alone. */
export function consoleHeader(base: string, chrome?: Chrome): Html {
  if (!chrome) return html`<header class="top"><div class="bar"><a class="brand" href="${base}">gatehouse <span>admin</span></a></div></header>`;
  return html`<header class="top"><div class="bar">
<a class="brand" href="${base}">gatehouse <span>admin</span></a>
<nav aria-label="Console"><ul>
${SECTIONS.map((s) => html`<li><a href="${base}${s.path}"${s.id === chrome.section ? html` aria-current="page"` : ''}>${s.label}</a></li>`)}
</ul></nav>
<form method="post" action="${base}/signout" class="who">${csrfField(chrome.csrf)}<span><span class="who-label">Signed in as </span><strong>${chrome.username}</strong></span> <button type="submit" class="small-button">Sign out</button></form>
</div></header>`;
}

/** Above every section but Maintenance while maintenance mode is on. */
export function maintenanceBanner(chrome: Chrome): Html {
  return chrome.maintenance && chrome.section !== 'maintenance'
    ? html`<p class="banner" role="status"><strong>Maintenance mode is on:</strong> the API and the authorization server answer 503. <a href="${chrome.base}/maintenance">Maintenance</a></p>`
    : html``;
}
