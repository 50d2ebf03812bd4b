import { GRANT_TYPES, ID_TOKEN_ALGS, type Client } from '../../authserver/model/clients.js';
import { csrfField, html, type Html } from '../../platform/http/html/index.js';
import { choices, errorSummary, field, notice, table, when, type Errors } from './components.js';

// The bodies of the Clients section: the list with the registration form, a client's page with
// its settings, and the secret shown once after registering or rotating.

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
  require_par: boolean;
  dpop_bound_access_tokens: boolean;
  post_logout_redirect_uris: string;
  id_token_signed_response_alg: string;
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
    require_par: client.requirePar,
    dpop_bound_access_tokens: client.dpopBound,
    post_logout_redirect_uris: client.postLogoutRedirectUris.join('\n'),
    id_token_signed_response_alg: client.idTokenSignedResponseAlg,
  };
}

export const EMPTY_CLIENT: ClientFormValues = { client_id: '', name: '', type: 'confidential', redirect_uris: '', grant_types: [], scope: '', token_type: 'bearer', origins: '', uri: '', verified: false, introspect: false, require_pkce: false, require_par: false, dpop_bound_access_tokens: false, post_logout_redirect_uris: '', id_token_signed_response_alg: 'RS256' };

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
${tick('require_par', 'Pushed requests', 'Require pushed authorization requests (RFC 9126): its authorization requests must come through /par', v.require_par, errors.require_par)}
${tick('dpop_bound_access_tokens', 'DPoP', 'Require a DPoP proof with every token request: its tokens are always bound to its key', v.dpop_bound_access_tokens, errors.dpop_bound_access_tokens)}
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
})}
${field({ name: 'post_logout_redirect_uris', label: 'Sign-out return addresses', value: v.post_logout_redirect_uris, multiline: true, hint: 'OpenID Connect: one per line; where the browser may go back after signing out (the redirect URI rules).', error: errors.post_logout_redirect_uris })}
${choices({
  name: 'id_token_signed_response_alg',
  legend: 'ID token signature',
  type: 'radio',
  options: ID_TOKEN_ALGS.map((alg) => ({ value: alg, label: alg === 'RS256' ? 'RS256 (RSA; what every library expects)' : 'ES256 (elliptic curve)' })),
  chosen: [v.id_token_signed_response_alg],
  error: errors.id_token_signed_response_alg,
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
  /** The clients that registered themselves (dynamic client registration). */
  registered?: ReadonlySet<string>;
}

/** A client that registered itself says so in the list, and whether the operator has verified it since. */
function registeredMark(c: Client, registered?: ReadonlySet<string>): Html | string {
  if (!registered?.has(c.id)) return '';
  return c.verified ? html` <span class="tag on">registered by itself, verified</span>` : html` <span class="tag warn">registered by itself, not verified</span>`;
}

export function clientsBody(v: ClientsView): Html {
  const rows = v.clients.map((c) => [
    html`<a href="${v.base}/clients/${encodeURIComponent(c.id)}"><code>${c.id}</code></a>`,
    html`${c.name}${registeredMark(c, v.registered)}`,
    html`${c.public ? 'public' : 'confidential'}`,
    html`${c.grantTypes.join(', ')}`,
    c.scope === null ? html`<span class="muted">every scope</span>` : html`<code>${c.scope}</code>`,
    when(c.createdAt),
  ]);
  return html`<h1>Clients</h1>
${notice(v.notice)}
${table('Registered clients', ['Client id', 'Name', 'Type', 'Grants', 'Scope', 'Registered'], rows, 'No client is registered yet.')}
<p>Applications that register themselves (dynamic client registration, <code>auth.registration</code>): <a href="${v.base}/registration-tokens">Registration tokens</a>.</p>
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
<dt>Pushed requests required</dt><dd>${c.requirePar ? 'yes' : 'no'}</dd>
<dt>DPoP required</dt><dd>${c.dpopBound ? 'yes' : 'no'}</dd>
<dt>ID token signature</dt><dd>${c.idTokenSignedResponseAlg}</dd>
<dt>Sign-out return addresses</dt><dd>${c.postLogoutRedirectUris.length ? c.postLogoutRedirectUris.map((u, i) => html`${i ? html`<br>` : ''}<code>${u}</code>`) : html`<span class="muted">none</span>`}</dd>
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
