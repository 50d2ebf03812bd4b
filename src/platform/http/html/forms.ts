import { html, type Html } from './template.js';

// Form pieces every page shares: hidden fields (the CSRF token first among them) and the one
// sign-in form of the login page, the account page and the console.

export function hiddenFields(fields: Record<string, string | undefined>): Html {
  return html`${Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v], i) => html`${i ? '\n' : ''}<input type="hidden" name="${k}" value="${v}">`)}`;
}

export function csrfField(csrf: string): Html {
  return hiddenFields({ csrf_token: csrf });
}

export interface SignInFormOptions {
  action: string;
  /** The CSRF token and whatever else the POST must carry (the authorization request, a step, a target). */
  hidden: Record<string, string | undefined>;
  /** Kept after a refusal; the password field then has the focus. */
  username?: string;
  /** Prefix of the fields' ids, where a page's other fields share one (the console's `f-`). */
  idPrefix?: string;
}

/** Username and password, labelled, with the autocomplete hints password managers read. No script. */
export function signInForm(o: SignInFormOptions): Html {
  const id = (name: string) => `${o.idPrefix ?? ''}${name}`;
  return html`<form method="post" action="${o.action}" class="signin">
${hiddenFields(o.hidden)}
<div class="signin-field"><label class="field" for="${id('username')}">Username</label>
<input type="text" id="${id('username')}" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required${o.username ? '' : html` autofocus`} value="${o.username ?? ''}"></div>
<div class="signin-field"><label class="field" for="${id('password')}">Password</label>
<input type="password" id="${id('password')}" name="password" autocomplete="current-password" required${o.username ? html` autofocus` : ''}></div>
<div class="actions buttons"><button type="submit" class="primary">Sign in</button></div>
</form>`;
}
