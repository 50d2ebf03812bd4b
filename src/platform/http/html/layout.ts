import { assetUrl, type AssetName } from './assets.js';
import type { PageKind } from './headers.js';
import { html, type Html } from './template.js';

// The one layout of every page: the document, the stylesheet, and the frame of its kind — a card
// with the brand above the body, or the console's bar (`header`) above the section.

export interface LayoutOptions {
  kind: PageKind;
  /** The page's own title; the layout adds the site's name. */
  title: string;
  body: Html;
  /** The deployment's base path (asset URLs). */
  basePath: string;
  /** The console: the bar above the content. */
  header?: Html;
  /** A card page: the wider card (consent, account). The console: the narrow column (signed out). */
  wide?: boolean;
  narrow?: boolean;
  /** A card page's scripts, in order (the passkey buttons'); the page's CSP then allows this origin's scripts. */
  scripts?: readonly AssetName[];
}

export function layout(o: LayoutOptions): string {
  const card = o.kind === 'card';
  const head = html`<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${o.title} · gatehouse${card ? '' : ' admin'}</title>
<link rel="stylesheet" href="${assetUrl(o.basePath, 'console.css')}">
${card ? '' : html`<script src="${assetUrl(o.basePath, 'console.js')}" defer></script>\n`}${(card ? (o.scripts ?? []) : []).map((name) => html`<script src="${assetUrl(o.basePath, name)}" defer></script>\n`)}`;
  const body = card
    ? html`<body class="card-page">
<main${o.wide ? html` class="wide"` : ''}>
<p class="brand">gatehouse</p>
${o.body}
</main>
</body>`
    : html`<body class="console">
<a class="skip" href="#main">Skip to content</a>
${o.header ?? ''}
<main id="main"${o.narrow ? html` class="narrow"` : ''}>
${o.body}
</main>
</body>`;
  return `<!doctype html>
${html`<html lang="en">
<head>
${head}</head>
${body}
</html>`}
`;
}
