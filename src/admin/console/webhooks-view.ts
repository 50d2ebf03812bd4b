import type { DeliveryAttempt, Webhook } from '../../webhooks/webhooks.js';
import { csrfField, html, type Html } from '../../platform/http/html/index.js';
import { choices, errorSummary, field, notice, table, when, type Errors } from './components.js';

// The bodies of the Webhooks section: the list with the form that adds one, its secret shown
// once, and a webhook's delivery attempts.

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
