import { csrfField, html, type Html } from '../../platform/http/html/index.js';

// The pieces the console's pages share, on the HTML kit: labelled fields with their hints and
// errors, the error summary above a refused form, times, tables that become cards on a phone, and
// the message and confirmation bodies.

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
  type?: 'text' | 'password' | 'email';
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
  require_par: 'Pushed requests',
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

export function messageBody(title: string, message: string, links: Html = html``): Html {
  return html`<div class="card"><h1>${title}</h1><p role="alert">${message}</p>${links}</div>`;
}

export function notice(text: string | undefined): Html {
  return text ? html`<p class="notice" role="status">${text}</p>` : html``;
}

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
