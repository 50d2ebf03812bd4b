import { escapeHtml } from '../../authserver/authorize/views.js';
import { assetUrl } from './assets.js';

// The console's HTML: a tagged template that escapes every interpolated value (only `Html` made
// by the template itself goes in as is), the page layout, and the form pieces the pages share.

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Part = Html | string | number | null | undefined | false | Part[];

function render(part: Part): string {
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  if (part === null || part === undefined || part === false) return '';
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0];
  values.forEach((v, i) => (out += render(v) + strings[i + 1]));
  return new Html(out);
}

export type Section = 'dashboard' | 'clients' | 'users' | 'grants' | 'webhooks' | 'maintenance';

const SECTIONS: { id: Section; label: string; path: string }[] = [
  { id: 'dashboard', label: 'Dashboard', path: '' },
  { id: 'clients', label: 'Clients', path: '/clients' },
  { id: 'users', label: 'Users', path: '/users' },
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

export function csrfField(csrf: string): Html {
  return html`<input type="hidden" name="csrf_token" value="${csrf}">`;
}

/** A whole page. Without `chrome` (signed out, errors), no navigation. */
export function layout(base: string, title: string, body: Html, chrome?: Chrome): string {
  const header = chrome
    ? html`<header class="top"><div class="bar">
<a class="brand" href="${base}">gatehouse <span>admin</span></a>
<nav aria-label="Console"><ul>
${SECTIONS.map((s) => html`<li><a href="${base}${s.path}"${s.id === chrome.section ? html` aria-current="page"` : ''}>${s.label}</a></li>`)}
</ul></nav>
<form method="post" action="${base}/signout" class="who">${csrfField(chrome.csrf)}<span><span class="who-label">Signed in as </span><strong>${chrome.username}</strong></span> <button type="submit" class="small-button">Sign out</button></form>
</div></header>`
    : html`<header class="top"><div class="bar"><a class="brand" href="${base}">gatehouse <span>admin</span></a></div></header>`;
  const banner =
    chrome?.maintenance && chrome.section !== 'maintenance'
      ? html`<p class="banner" role="status"><strong>Maintenance mode is on:</strong> the API and the authorization server answer 503. <a href="${base}/maintenance">Maintenance</a></p>`
      : '';
  return `<!doctype html>
${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · gatehouse admin</title>
<link rel="stylesheet" href="${assetUrl(base, 'console.css')}">
<script src="${assetUrl(base, 'console.js')}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
${header}
<main id="main"${chrome ? '' : html` class="narrow"`}>
${banner}${body}
</main>
</body>
</html>`}
`;
}

/** Field errors by form field name. */
export type Errors = Record<string, string>;

function described(id: string, hint: string | undefined, error: string | undefined): Html {
  const ids = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`${ids ? html` aria-describedby="${ids}"` : ''}${error ? html` aria-invalid="true"` : ''}`;
}

function notes(id: string, hint: string | undefined, error: string | undefined): Html {
  return html`${hint ? html`<span class="hint" id="${id}-hint">${hint}</span>` : ''}${error ? html`<span class="field-error" id="${id}-error">${error}</span>` : ''}`;
}

export interface FieldOptions {
  name: string;
  label: string;
  value?: string;
  hint?: string;
  error?: string;
  type?: 'text' | 'password';
  required?: boolean;
  autocomplete?: string;
  multiline?: boolean;
  autofocus?: boolean;
}

export function field(o: FieldOptions): Html {
  const id = `f-${o.name}`;
  const common = html` id="${id}" name="${o.name}"${o.required ? html` required` : ''}${o.autofocus ? html` autofocus` : ''}${described(id, o.hint, o.error)}`;
  const control = o.multiline
    ? html`<textarea${common} rows="3" spellcheck="false" autocapitalize="none">${o.value ?? ''}</textarea>`
    : html`<input type="${o.type ?? 'text'}"${common} value="${o.type === 'password' ? '' : (o.value ?? '')}" autocomplete="${o.autocomplete ?? 'off'}" autocapitalize="none" spellcheck="false">`;
  return html`<div class="field"><label for="${id}">${o.label}</label>${control}${notes(id, o.hint, o.error)}</div>`;
}

export interface ChoicesOptions {
  name: string;
  legend: string;
  type: 'checkbox' | 'radio';
  options: { value: string; label: string }[];
  chosen: string[];
  hint?: string;
  error?: string;
}

export function choices(o: ChoicesOptions): Html {
  const id = `f-${o.name}`;
  return html`<fieldset class="field" id="${id}"${described(id, o.hint, o.error)}><legend>${o.legend}</legend>
<div class="choices">${o.options.map(
    (opt, i) =>
      html`<label class="choice" for="${id}-${i}"><input type="${o.type}" id="${id}-${i}" name="${o.name}" value="${opt.value}"${o.chosen.includes(opt.value) ? html` checked` : ''}> ${opt.label}</label>`,
  )}</div>${notes(id, o.hint, o.error)}</fieldset>`;
}

/** The summary above a refused form: what to fix, each linked to its field. */
export function errorSummary(message: string, errors: Errors): Html {
  const items = Object.entries(errors);
  return html`<div class="alert" role="alert"><strong>${message}</strong>${
    items.length ? html`<ul>${items.map(([name, text]) => html`<li><a href="#f-${name}">${label(name)}</a>: ${text}</li>`)}</ul>` : ''
  }</div>`;
}

const LABELS: Record<string, string> = {
  client_id: 'Client id',
  name: 'Name',
  redirect_uris: 'Redirect URIs',
  grant_types: 'Grants',
  scope: 'Scope',
  token_type: 'Token type',
  type: 'Type',
  client_secret: 'Client secret',
  username: 'Username',
  password: 'Password',
  url: 'URL',
  events: 'Event types',
  collections: 'Collections',
  introspect: 'Resource server',
  require_pkce: 'PKCE',
};

function label(name: string): string {
  return Object.hasOwn(LABELS, name) ? LABELS[name] : name;
}

export function when(ms: number | string | null): Html {
  if (ms === null) return html`<span class="muted">never</span>`;
  const d = new Date(ms);
  return html`<time datetime="${d.toISOString()}">${d.toISOString().slice(0, 16).replace('T', ' ')} UTC</time>`;
}

/** A table that becomes a list of cards on a narrow screen (each cell labelled by its column). */
export function table(caption: string, columns: string[], rows: Html[][], empty: string): Html {
  if (rows.length === 0) return html`<div class="table"><p class="empty">${empty}</p></div>`;
  return html`<div class="table"><table class="list"><caption class="visually-hidden">${caption}</caption>
<thead><tr>${columns.map((c) => html`<th scope="col">${c || html`<span class="visually-hidden">Actions</span>`}</th>`)}</tr></thead>
<tbody>${rows.map(
    (cells) => html`<tr>${cells.map((cell, i) => html`<td data-label="${columns[i]}"${columns[i] === '' ? html` class="actions"` : ''}>${cell}</td>`)}</tr>`,
  )}</tbody></table></div>`;
}
