import { hiddenFields, html, signInForm, type AssetName, type Html } from '../../platform/http/html/index.js';

// The login, consent and error pages of {auth_url}/authorize (docs/oauth.md): bodies of card
// pages on the HTML kit; no script but the passkey button's files (factor-views.ts). Every reflected value is escaped by the template.

/** A card page's content: the page's own title, its body, and whether the card is the wide one. */
export interface CardView {
  title: string;
  body: Html;
  wide?: boolean;
  /** Scripts of this origin the page runs (the passkey buttons'); none inline. */
  scripts?: readonly AssetName[];
}

/** The scripts of a page with a passkey button (factor-views.ts `passkeyForm`): the WebAuthn library, then ours. */
export const PASSKEY_SCRIPTS: readonly AssetName[] = ['webauthn.js', 'passkeys.js'];

const alert = (error: string | undefined) => (error ? html`<p class="alert" role="alert">${error}</p>` : '');

export interface LoginView {
  action: string;
  /** The account page (authorized apps, sign out, password). */
  accountUrl: string;
  clientName: string;
  request: Record<string, string | undefined>;
  csrf: string;
  username?: string;
  error?: string;
  /** The passkey button's form (factor-views.ts), when the page offers one. */
  passkey?: Html;
  /** "Forgot your password?" (docs/users.md). */
  resetUrl: string;
  /** "Create an account", when sign-up is open. */
  signUpUrl?: string;
}

export function loginPage(v: LoginView): CardView {
  return {
    title: 'Sign in',
    scripts: v.passkey ? PASSKEY_SCRIPTS : undefined,
    body: html`<h1>Sign in</h1>
<p class="muted">to continue to <strong class="client">${v.clientName}</strong></p>
${alert(v.error)}
${signInForm({ action: v.action, hidden: { ...v.request, csrf_token: v.csrf, step: 'login' }, username: v.username })}
<p class="links"><a href="${v.resetUrl}">Forgot your password?</a>${v.signUpUrl ? html`<a href="${v.signUpUrl}">Create an account</a>` : ''}</p>
${v.passkey ?? ''}
<p class="target"><a href="${v.accountUrl}">Your account</a>: the applications you authorized.</p>`,
  };
}

export interface ScopeChoice {
  value: string;
  /** The scope in words ("Read your zoos"). */
  label: string;
  checked: boolean;
  /** Always granted with the request (OpenID Connect's `openid`): shown, not a choice. */
  fixed?: boolean;
}

/** One row of the consent page: a collection with its Read and Write choices (or a scope of its own, like admin). */
export interface ScopeGroup {
  title: string;
  read?: ScopeChoice;
  write?: ScopeChoice;
  other?: ScopeChoice;
  /** Choices said in words, one per line (the identity scopes of OpenID Connect: "Your identity"). */
  items?: ScopeChoice[];
  /** Said in words under the row (what `admin` amounts to). */
  warning?: string;
}

export interface ConsentView {
  action: string;
  accountUrl: string;
  clientName: string;
  /** The host of the client's home page, when it registered one. */
  clientHost: string | null;
  clientVerified: boolean;
  /** A client of a client ID metadata document: the host its document came from (it is never verified). */
  clientFrom?: string | null;
  clientId: string;
  username: string;
  groups: ScopeGroup[];
  validities: { seconds: number; label: string }[];
  chosenTtl: number;
  /** Where the browser goes after the choice; null: nowhere (the device flow). */
  redirectTarget: string | null;
  /** A warning above the choices (the device flow's). */
  notice?: string;
  request: Record<string, string | undefined>;
  csrf: string;
  error?: string;
}

export function consentPage(v: ConsentView): CardView {
  let n = 0;
  const none = html`<span class="tick none" aria-hidden="true"></span>`;
  const tick = (c: ScopeChoice | undefined, word: string) => {
    if (!c) return none;
    const id = `scope-${n++}`;
    return html`<label class="tick" for="${id}"><input type="checkbox" id="${id}" name="scope" value="${c.value}"${c.checked ? html` checked` : ''}> ${word}<span class="visually-hidden">: ${c.label} (${c.value})</span></label>`;
  };
  const item = (c: ScopeChoice) => {
    const id = `scope-${n++}`;
    // A choice that comes with the request (openid: the sign-in itself) is shown ticked and cannot be unticked.
    if (c.fixed) return html`<label class="tick" for="${id}"><input type="checkbox" id="${id}" checked disabled> ${c.label}</label>`;
    return html`<label class="tick" for="${id}"><input type="checkbox" id="${id}" name="scope" value="${c.value}"${c.checked ? html` checked` : ''}> ${c.label}</label>`;
  };
  const rows = v.groups.map(
    (g, i) =>
      html`${i ? '\n' : ''}${
        g.items
          ? html`<div class="perm perm-items"><span class="perm-name">${g.title}</span>${g.items.map(item)}</div>`
          : g.other
          ? html`<div class="perm"><span class="perm-name">${g.title}</span>${tick(g.other, 'Allow')}${none}${g.warning ? html`<p class="perm-warning">${g.warning}</p>` : ''}</div>`
          : html`<div class="perm"><span class="perm-name">${g.title}</span>${tick(g.read, 'Read')}${tick(g.write, 'Write')}</div>`
      }`,
  );
  const hasRead = v.groups.some((g) => g.read);
  const validities = v.validities.map(
    (o, i) => html`${i ? '\n' : ''}<label class="choice" for="ttl-${i}"><input type="radio" id="ttl-${i}" name="ttl" value="${o.seconds}"${o.seconds === v.chosenTtl ? html` checked` : ''}>
<span>${o.label}</span></label>`,
  );
  return {
    title: 'Authorize access',
    wide: true,
    body: html`<h1><strong class="client">${v.clientName}</strong>${v.clientFrom ? html` <span class="muted">(from ${v.clientFrom})</span>` : ''} wants to access your data</h1>
${v.clientHost ? html`<p class="muted">Home page: <strong class="client">${v.clientHost}</strong></p>` : ''}${
      v.clientFrom
        ? html`<p class="note">Not verified: this application describes itself in a document at ${v.clientFrom}, and only that address is known. Allow only if you trust ${v.clientFrom}.</p>`
        : v.clientVerified ? '' : html`<p class="note">The operator of this gatehouse has not verified this application. Allow only if you trust it.</p>`
    }
${v.notice ? html`<p class="note">${v.notice}</p>
` : ''}<p class="muted">Signed in as <strong>${v.username}</strong>. Choose what to allow and for how long.</p>
${alert(v.error)}
<form method="post" action="${v.action}">
${hiddenFields({ ...v.request, csrf_token: v.csrf, step: 'consent' })}
<fieldset>
<legend>Permissions</legend>
<div class="perms">
${rows}
</div>
</fieldset>
<fieldset>
<legend>Valid for</legend>
<div class="options">
${validities}
</div>
</fieldset>
<div class="actions sticky">
<button type="submit" name="decision" value="allow" class="primary">Allow</button>
${hasRead ? html`<button type="submit" name="decision" value="allow_read">Read only</button>` : ''}
<button type="submit" name="decision" value="deny">Deny</button>
</div>
</form>
<form method="post" action="${v.action}" class="switch">
${hiddenFields({ ...v.request, csrf_token: v.csrf, step: 'logout' })}
<button type="submit" class="link">Not ${v.username}? Sign in as someone else</button>
</form>
<p class="target">Client id <code>${v.clientId}</code>. ${v.redirectTarget === null ? 'After your choice, go back to your device.' : html`After your choice you will be sent to ${v.redirectTarget}.`} <a href="${v.accountUrl}">Your account</a> lists what you authorized and takes it back.</p>`,
  };
}

export function errorPage(title: string, message: string): CardView {
  return { title, body: html`<h1>${title}</h1>\n<p role="alert">${message}</p>\n<p class="muted">You can close this page. Nothing was shared with the application.</p>` };
}

const UNITS: readonly (readonly [number, string])[] = [
  [86400, 'day'],
  [3600, 'hour'],
  [60, 'minute'],
  [1, 'second'],
];

/**
 * A duration in words: 3600 → "1 hour", 7776000 → "90 days", 5400 → "90 minutes". Within 1% of a
 * whole number of a unit it is that number (a grant's validity measured between two instants,
 * 86399 s → "1 day"); otherwise above two minutes it is rounded up to the minute, hour or day
 * (847 s → "15 minutes": a wait is never shown shorter than it is).
 */
export function describeDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const words = (n: number, name: string) => `${n} ${name}${n === 1 ? '' : 's'}`;
  for (const [size, name] of UNITS.slice(0, 3)) {
    const n = Math.round(s / size);
    if (n >= 1 && Math.abs(s - n * size) <= size / 100) return words(n, name);
  }
  if (s < 120) return words(s, 'second');
  const [size, name] = s < 2 * 3600 ? UNITS[2] : s < 2 * 86400 ? UNITS[1] : UNITS[0];
  return words(Math.ceil(s / size), name);
}
