import { hiddenFields, html } from '../../platform/http/html/index.js';
import type { CardView } from './views.js';

// The pages of {auth_url}/device that only the device flow has (device.ts): where the user types
// the code, and the end of the flow. Its login and consent pages are /authorize's (views.ts).

export interface UserCodeView {
  action: string;
  csrf: string;
  /** What was typed, shown again with the error. */
  userCode?: string;
  error?: string;
}

export function userCodePage(v: UserCodeView): CardView {
  return {
    title: 'Connect a device',
    body: html`<h1>Connect a device</h1>
<p class="muted">Type the code your device or command line shows.</p>
${v.error ? html`<p class="alert" role="alert">${v.error}</p>` : ''}
<form method="post" action="${v.action}" class="signin">
${hiddenFields({ csrf_token: v.csrf, step: 'code' })}
<div class="signin-field"><label class="field" for="user_code">Code</label>
<input type="text" id="user_code" name="user_code" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" required autofocus placeholder="XXXX-XXXX" value="${v.userCode ?? ''}"></div>
<div class="actions buttons"><button type="submit" class="primary">Continue</button></div>
</form>`,
  };
}

/** After the decision: nothing more happens in the browser; the device gets its answer by polling. */
export function deviceDecidedPage(clientName: string, approved: boolean): CardView {
  return approved
    ? {
        title: 'Device connected',
        body: html`<h1>Device connected</h1>\n<p role="status"><strong class="client">${clientName}</strong> can now use what you allowed. Go back to your device: it continues on its own.</p>\n<p class="muted">You can close this page.</p>`,
      }
    : {
        title: 'Access denied',
        body: html`<h1>Access denied</h1>\n<p role="status"><strong class="client">${clientName}</strong> gets nothing. Your device will say that access was denied.</p>\n<p class="muted">You can close this page.</p>`,
      };
}
