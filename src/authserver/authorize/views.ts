import { createHash } from 'node:crypto';

// The login, consent and error pages of {auth_url}/authorize: plain server-rendered HTML, one
// inline stylesheet allowed by its hash, no script at all. Everything reflected is escaped.

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`=]/g, (c) => `&#${c.charCodeAt(0)};`);
}

const CSS = `
:root{color-scheme:light dark;--bg:#f4f5f7;--card:#fff;--text:#1c2230;--muted:#5b6475;--line:#d9dde5;--accent:#2453d6;--accent-text:#fff;--danger:#b42318;--focus:#2453d6}
@media (prefers-color-scheme:dark){:root{--bg:#12151c;--card:#1c212b;--text:#e8ebf1;--muted:#a3abbb;--line:#343b4a;--accent:#6d93ff;--accent-text:#0b0e14;--danger:#ff8a80;--focus:#9db6ff}}
*{box-sizing:border-box}
a{color:var(--accent);text-underline-offset:2px}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;padding:1.5rem;background:var(--bg);color:var(--text);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{width:100%;max-width:28rem;background:var(--card);border:1px solid var(--line);border-radius:14px;padding:2rem;box-shadow:0 8px 30px rgba(0,0,0,.06)}
.brand{margin:0 0 1.25rem;font-size:.85rem;font-weight:600;letter-spacing:.06em;text-transform:uppercase;color:var(--muted)}
h1{margin:0 0 .5rem;font-size:1.35rem;line-height:1.3}
p{margin:0 0 1rem}
.muted{color:var(--muted);font-size:.95rem}
strong.client{overflow-wrap:anywhere}
form{margin:0}
label.field{display:block;margin:1rem 0 .35rem;font-weight:600}
input[type=text],input[type=password]{width:100%;padding:.65rem .75rem;font:inherit;color:inherit;background:transparent;border:1px solid var(--line);border-radius:8px}
fieldset{margin:1.25rem 0 0;padding:0;border:0}
legend{padding:0;margin-bottom:.5rem;font-weight:600}
.choice{display:flex;gap:.65rem;align-items:flex-start;padding:.6rem .75rem;border:1px solid var(--line);border-radius:8px;margin-bottom:.5rem;cursor:pointer}
.choice input{margin:.3rem 0 0;width:1.05rem;height:1.05rem;accent-color:var(--accent);flex:none}
.choice span{display:block}
.choice code{display:block;font-size:.8rem;color:var(--muted)}
.options{display:grid;grid-template-columns:repeat(4,minmax(0,1fr));gap:.5rem}
.perms{border:1px solid var(--line);border-radius:8px}
.perm{display:grid;grid-template-columns:minmax(0,1fr) 5.5rem 5.5rem;align-items:center;gap:.5rem;padding:.45rem .75rem;border-top:1px solid var(--line)}
.perm:first-child{border-top:0}
.perm-name{font-weight:600;overflow-wrap:anywhere}
.perm-warning{grid-column:1/-1;margin:0;font-size:.9rem;color:var(--danger)}
.tick{display:flex;align-items:center;gap:.4rem;cursor:pointer}
.tick input{width:1.05rem;height:1.05rem;margin:0;accent-color:var(--accent)}
.vh{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.actions.sticky button{flex:1 1 5.5rem;padding:.65rem .5rem}
.actions.sticky{position:sticky;bottom:0;z-index:1;background:var(--card);margin:1rem -.25rem 0;padding:.75rem .25rem;border-top:1px solid var(--line)}
.options .choice{margin:0;align-items:center}
.options .choice input{margin:0}
.actions{display:flex;gap:.75rem;margin-top:1.5rem;flex-wrap:wrap}
button{flex:1 1 8rem;padding:.7rem 1rem;font:inherit;font-weight:600;border-radius:8px;cursor:pointer;border:1px solid var(--line);background:transparent;color:var(--text)}
button.primary{background:var(--accent);border-color:var(--accent);color:var(--accent-text)}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.switch{margin-top:1rem}
button.link{flex:none;padding:0;border:0;background:none;color:var(--accent);font-weight:500;font-size:.9rem;text-decoration:underline;text-underline-offset:2px}
.alert{margin:0 0 1rem;padding:.65rem .75rem;border-radius:8px;border:1px solid var(--danger);color:var(--danger)}
.target{margin-top:1.25rem;font-size:.85rem;color:var(--muted);overflow-wrap:anywhere}
dl.values{margin:0 0 1rem;display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.25rem .75rem}
dl.values dt{font-weight:600}
dl.values dd{margin:0;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem;overflow-wrap:anywhere}
section.block{margin-top:1.75rem;padding-top:1.25rem;border-top:1px solid var(--line)}
h2{margin:0 0 .75rem;font-size:1.05rem}
ul.apps{list-style:none;margin:0;padding:0}
ul.apps>li{padding:.85rem .9rem;border:1px solid var(--line);border-radius:10px;margin-bottom:.65rem}
ul.apps .app-name{font-weight:600;overflow-wrap:anywhere}
ul.apps ul.scopes{margin:.35rem 0 .5rem;padding-left:1.1rem;font-size:.92rem}
ul.apps dl{margin:0 0 .6rem;display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.1rem .75rem;font-size:.88rem;color:var(--muted)}
ul.apps dd{margin:0}
ul.apps button{flex:none;padding:.45rem .9rem;font-size:.9rem}
button.danger{border-color:var(--danger);color:var(--danger)}
.note{margin:0 0 1rem;padding:.5rem .75rem;border-left:3px solid var(--muted);font-size:.92rem;color:var(--muted)}
.notice{margin:0 0 1rem;padding:.65rem .75rem;border-radius:8px;border:1px solid var(--line)}
main.wide{max-width:36rem}
pre.snippet{margin:0 0 1rem;padding:.75rem;border:1px solid var(--line);border-radius:8px;font-size:.8rem;line-height:1.45;white-space:pre-wrap;overflow-wrap:anywhere}
@media (max-width:30rem){main{padding:1.25rem;border-radius:10px}body{padding:.75rem;align-items:flex-start}.options{grid-template-columns:repeat(2,minmax(0,1fr))}.perm{grid-template-columns:minmax(0,1fr) 4.5rem 4.5rem}}
`.trim();

const CSS_HASH = `sha256-${createHash('sha256').update(CSS).digest('base64')}`;

/** The CSP of the pages: nothing but the stylesheet; forms post here (and redirect to `formTargets`). */
export function pageSecurityPolicy(formTargets: string[] = []): string {
  return [
    "default-src 'none'",
    `style-src '${CSS_HASH}'`,
    `form-action 'self'${formTargets.map((t) => ' ' + t).join('')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

function layout(title: string, body: string, wide = false): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · gatehouse</title>
<style>${CSS}</style>
</head>
<body>
<main${wide ? ' class="wide"' : ''}>
<p class="brand">gatehouse</p>
${body}
</main>
</body>
</html>
`;
}

function hiddenFields(fields: Record<string, string | undefined>): string {
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v!)}">`)
    .join('\n');
}

export interface LoginView {
  action: string;
  /** The account page (authorized apps, sign out, password). */
  accountUrl: string;
  clientName: string;
  request: Record<string, string | undefined>;
  csrf: string;
  username?: string;
  error?: string;
}

export function loginPage(v: LoginView): string {
  return layout(
    'Sign in',
    `<h1>Sign in</h1>
<p class="muted">to continue to <strong class="client">${escapeHtml(v.clientName)}</strong></p>
${v.error ? `<p class="alert" role="alert">${escapeHtml(v.error)}</p>` : ''}
<form method="post" action="${escapeHtml(v.action)}">
${hiddenFields({ ...v.request, csrf_token: v.csrf, step: 'login' })}
<label class="field" for="username">Username</label>
<input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus value="${escapeHtml(v.username ?? '')}">
<label class="field" for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<div class="actions"><button type="submit" class="primary">Sign in</button></div>
</form>
<p class="target"><a href="${escapeHtml(v.accountUrl)}">Your account</a>: the applications you authorized.</p>`,
  );
}

export interface ScopeChoice {
  value: string;
  /** The scope in words ("Read your zoos"). */
  label: string;
  checked: boolean;
}

/** One row of the consent page: a collection with its Read and Write choices (or a scope of its own, like admin). */
export interface ScopeGroup {
  title: string;
  read?: ScopeChoice;
  write?: ScopeChoice;
  other?: ScopeChoice;
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
  clientId: string;
  username: string;
  groups: ScopeGroup[];
  validities: { seconds: number; label: string }[];
  chosenTtl: number;
  redirectTarget: string;
  request: Record<string, string | undefined>;
  csrf: string;
  error?: string;
}

export function consentPage(v: ConsentView): string {
  let n = 0;
  const tick = (c: ScopeChoice | undefined, word: string) => {
    if (!c) return '<span class="tick none" aria-hidden="true"></span>';
    const id = `scope-${n++}`;
    return `<label class="tick" for="${id}"><input type="checkbox" id="${id}" name="scope" value="${escapeHtml(c.value)}"${c.checked ? ' checked' : ''}> ${word}<span class="vh">: ${escapeHtml(c.label)} (${escapeHtml(c.value)})</span></label>`;
  };
  const rows = v.groups
    .map((g) =>
      g.other
        ? `<div class="perm"><span class="perm-name">${escapeHtml(g.title)}</span>${tick(g.other, 'Allow')}<span class="tick none" aria-hidden="true"></span>${g.warning ? `<p class="perm-warning">${escapeHtml(g.warning)}</p>` : ''}</div>`
        : `<div class="perm"><span class="perm-name">${escapeHtml(g.title)}</span>${tick(g.read, 'Read')}${tick(g.write, 'Write')}</div>`,
    )
    .join('\n');
  const hasRead = v.groups.some((g) => g.read);
  const validities = v.validities
    .map(
      (o, i) => `<label class="choice" for="ttl-${i}"><input type="radio" id="ttl-${i}" name="ttl" value="${o.seconds}"${o.seconds === v.chosenTtl ? ' checked' : ''}>
<span>${escapeHtml(o.label)}</span></label>`,
    )
    .join('\n');
  return layout(
    'Authorize access',
    `<h1><strong class="client">${escapeHtml(v.clientName)}</strong> wants to access your data</h1>
${v.clientHost ? `<p class="muted">Home page: <strong class="client">${escapeHtml(v.clientHost)}</strong></p>` : ''}${v.clientVerified ? '' : '<p class="note">The operator of this gatehouse has not verified this application. Allow only if you trust it.</p>'}
<p class="muted">Signed in as <strong>${escapeHtml(v.username)}</strong>. Choose what to allow and for how long.</p>
${v.error ? `<p class="alert" role="alert">${escapeHtml(v.error)}</p>` : ''}
<form method="post" action="${escapeHtml(v.action)}">
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
${hasRead ? '<button type="submit" name="decision" value="allow_read">Read only</button>' : ''}
<button type="submit" name="decision" value="deny">Deny</button>
</div>
</form>
<form method="post" action="${escapeHtml(v.action)}" class="switch">
${hiddenFields({ ...v.request, csrf_token: v.csrf, step: 'logout' })}
<button type="submit" class="link">Not ${escapeHtml(v.username)}? Sign in as someone else</button>
</form>
<p class="target">Client id <code>${escapeHtml(v.clientId)}</code>. After your choice you will be sent to ${escapeHtml(v.redirectTarget)}. <a href="${escapeHtml(v.accountUrl)}">Your account</a> lists what you authorized and takes it back.</p>`,
    true,
  );
}

export interface DemoCallbackView {
  code?: string;
  state?: string;
  error?: string;
  errorDescription?: string;
  /** Where the client's secret is (the page never shows the secret itself). */
  secretFile?: string;
  /** A ready-to-paste command that redeems the code (it reads the secret from `secretFile`). */
  exchange?: string;
  /** The command that lists the zoos with the token it gives. */
  listZoos: string;
}

/** The demo deployment's redirect target: what came back, and how to redeem it. */
export function demoCallbackPage(v: DemoCallbackView): string {
  if (v.error)
    return layout(
      'Authorization refused',
      `<h1>No code this time</h1>
<p role="alert">gatehouse answered <code>${escapeHtml(v.error)}</code>${v.errorDescription ? `: ${escapeHtml(v.errorDescription)}` : ''}.</p>
<p class="muted">This page is where the demo client lands after the consent page. Start again from the link in the start-up banner.</p>`,
    );
  return layout(
    'Authorization code received',
    `<h1>The demo app received a code</h1>
<p class="muted">This page stands in for the demo client's own callback. The code is valid for a few minutes and can be redeemed once.</p>
<dl class="values"><dt>code</dt><dd>${escapeHtml(v.code ?? '')}</dd><dt>state</dt><dd>${escapeHtml(v.state ?? '(none)')}</dd></dl>
<p><strong>1.</strong> Exchange it for tokens (as the client would, with its secret). The secret is not shown here: it is in <code>${escapeHtml(v.secretFile ?? 'the demo credentials file')}</code>, readable only by the account gatehouse runs as, and the command reads it from there:</p>
<pre class="snippet">${escapeHtml(v.exchange ?? '')}</pre>
<p><strong>2.</strong> Call the API with the access token of the answer:</p>
<pre class="snippet">${escapeHtml(v.listZoos)}</pre>`,
  );
}

export interface AccountSignInView {
  action: string;
  csrf: string;
  username?: string;
  error?: string;
  notice?: string;
}

/** The account page for a browser without a session: sign in first. */
export function accountSignInPage(v: AccountSignInView): string {
  return layout(
    'Your account',
    `<h1>Your account</h1>
<p class="muted">Sign in to see the applications you authorized, take access back, or change your password.</p>
${v.notice ? `<p class="notice" role="status">${escapeHtml(v.notice)}</p>` : ''}${v.error ? `<p class="alert" role="alert">${escapeHtml(v.error)}</p>` : ''}
<form method="post" action="${escapeHtml(v.action)}">
${hiddenFields({ csrf_token: v.csrf, action: 'signin' })}
<label class="field" for="username">Username</label>
<input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus value="${escapeHtml(v.username ?? '')}">
<label class="field" for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<div class="actions"><button type="submit" class="primary">Sign in</button></div>
</form>`,
  );
}

export interface AuthorizedApp {
  grantId: string;
  clientName: string;
  clientHost: string | null;
  clientId: string;
  scopes: string[];
  granted: string;
  expires: string;
  lastUsed: string;
}

export interface AccountView {
  action: string;
  csrf: string;
  username: string;
  apps: AuthorizedApp[];
  notice?: string;
  error?: string;
}

/** The signed-in user's authorized applications (each revocable), sign out, change password. */
export function accountPage(v: AccountView): string {
  // The action is the pressed button's (name="action"), as DESIGN names them.
  const hidden = (_action: string, extra: Record<string, string> = {}) => hiddenFields({ csrf_token: v.csrf, ...extra });
  const apps = v.apps.length
    ? `<ul class="apps">
${v.apps
  .map(
    (a) => `<li>
<p class="app-name">${escapeHtml(a.clientName)}${a.clientName === a.clientId ? '' : ` <span class="muted">(${escapeHtml(a.clientId)})</span>`}${a.clientHost ? ` <span class="muted">· ${escapeHtml(a.clientHost)}</span>` : ''}</p>
<ul class="scopes">${a.scopes.map((s) => `<li>${escapeHtml(s)}</li>`).join('')}</ul>
<dl><dt>Granted</dt><dd>${escapeHtml(a.granted)}</dd><dt>Expires</dt><dd>${escapeHtml(a.expires)}</dd><dt>Last used</dt><dd>${escapeHtml(a.lastUsed)}</dd></dl>
<form method="post" action="${escapeHtml(v.action)}">
${hidden('revoke', { grant_id: a.grantId })}
<button type="submit" name="action" value="revoke" class="danger" aria-label="Revoke access of ${escapeHtml(a.clientName)}">Revoke access</button>
</form>
</li>`,
  )
  .join('\n')}
</ul>`
    : '<p class="muted">No application has access to your data.</p>';
  return layout(
    'Your account',
    `<h1>Your account</h1>
<p class="muted">Signed in as <strong>${escapeHtml(v.username)}</strong>.</p>
${v.notice ? `<p class="notice" role="status">${escapeHtml(v.notice)}</p>` : ''}${v.error ? `<p class="alert" role="alert">${escapeHtml(v.error)}</p>` : ''}
<section aria-labelledby="apps-title">
<h2 id="apps-title">Applications with access</h2>
${apps}
</section>
<section class="block" aria-labelledby="password-title">
<h2 id="password-title">Change your password</h2>
<form method="post" action="${escapeHtml(v.action)}">
${hidden('password')}
<input type="text" name="username" value="${escapeHtml(v.username)}" autocomplete="username" hidden>
<label class="field" for="current">Current password</label>
<input type="password" id="current" name="current_password" autocomplete="current-password" required>
<label class="field" for="new">New password (at least 8 characters)</label>
<input type="password" id="new" name="new_password" autocomplete="new-password" minlength="8" required>
<div class="actions"><button type="submit" name="action" value="password" class="primary">Change password</button></div>
</form>
</section>
<section class="block" aria-labelledby="signout-title">
<h2 id="signout-title">Sign out</h2>
<form method="post" action="${escapeHtml(v.action)}">
${hidden('signout')}
<div class="actions"><button type="submit" name="action" value="signout">Sign out</button></div>
</form>
</section>`,
    true,
  );
}

export function errorPage(title: string, message: string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1>\n<p role="alert">${escapeHtml(message)}</p>\n<p class="muted">You can close this page. Nothing was shared with the application.</p>`);
}

/** 3600 → "1 hour", 7776000 → "90 days". */
export function describeDuration(seconds: number): string {
  const units: [number, string][] = [
    [86400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
    [1, 'second'],
  ];
  for (const [size, name] of units)
    if (seconds % size === 0) {
      const n = seconds / size;
      return `${n} ${name}${n === 1 ? '' : 's'}`;
    }
  return `${seconds} seconds`;
}
