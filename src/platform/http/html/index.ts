// The HTML and response kit: every page of gatehouse is written and sent through these, and only
// these (checked by test/architecture.test.ts). docs/architecture.md, "How to add a page".
export { escapeHtml, html, trusted, Html, type Part } from './template.js';
export { layout, type LayoutOptions } from './layout.js';
export { sendPage, errorAnswer, type PageAnswer, type Problem } from './page.js';
export { pageSecurityPolicy, setPageHeaders, setNoStore, type PageKind } from './headers.js';
export { csrfField, hiddenFields, signInForm, type SignInFormOptions } from './forms.js';
export { ASSETS, ASSETS_PATH, assetUrl, type AssetName } from './assets.js';
export { mailParts, type MailContent, type MailParts } from './mail.js';
