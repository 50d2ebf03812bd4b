import { html, type Html } from '../platform/http/html/index.js';

// The body of the demo deployment's /demo/callback page (docs/oauth.md, the demo): what came back
// to the demo client, and how to redeem it.

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

export function demoCallbackPage(v: DemoCallbackView): { title: string; body: Html } {
  if (v.error)
    return {
      title: 'Authorization refused',
      body: html`<h1>No code this time</h1>
<p role="alert">gatehouse answered <code>${v.error}</code>${v.errorDescription ? html`: ${v.errorDescription}` : ''}.</p>
<p class="muted">This page is where the demo client lands after the consent page. Start again from the link in the start-up banner.</p>`,
    };
  return {
    title: 'Authorization code received',
    body: html`<h1>The demo app received a code</h1>
<p class="muted">This page stands in for the demo client's own callback. The code is valid for a few minutes and can be redeemed once.</p>
<dl class="values"><dt>code</dt><dd>${v.code ?? ''}</dd><dt>state</dt><dd>${v.state ?? '(none)'}</dd></dl>
<p><strong>1.</strong> Exchange it for tokens (as the client would, with its secret). The secret is not shown here: it is in <code>${v.secretFile ?? 'the demo credentials file'}</code>, readable only by the account gatehouse runs as, and the command reads it from there:</p>
<pre class="snippet">${v.exchange ?? ''}</pre>
<p><strong>2.</strong> Call the API with the access token of the answer:</p>
<pre class="snippet">${v.listZoos}</pre>`,
  };
}
