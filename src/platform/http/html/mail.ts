import { html, type Html } from './template.js';

// The one shape of every mail gatehouse sends (docs/users.md): a plain-text part and an HTML part
// saying the same, the link (if any) on a line of its own in both, a button for it in the HTML,
// and a closing line saying why the mail came. Inline styles only: mail clients drop stylesheets.

export interface MailContent {
  /** The first line ("Hello alice,"). */
  greeting: string;
  /** The paragraphs before the link. */
  paragraphs: string[];
  /** The link and the words of its button. */
  link?: { url: string; label: string };
  /** Paragraphs after the link (how long it is valid, what to do if it was not you). */
  after: string[];
}

export interface MailParts {
  text: string;
  html: string;
}

const FONT = 'font-family:-apple-system,BlinkMacSystemFont,Segoe UI,Roboto,Helvetica,Arial,sans-serif';
const LINK = 'color:#2f5bd3';

/** A web address in a sentence ("sign in at https://…/account, or …"), without the punctuation after it. */
const URL_IN_TEXT = /https:\/\/[^\s<>"]*[^\s<>".,;:!?)]/g;

/** A paragraph's text with its web addresses as links (escaped like all text: the template does it). */
function withLinks(text: string): Html {
  const parts: (string | Html)[] = [];
  let at = 0;
  for (const m of text.matchAll(URL_IN_TEXT)) {
    parts.push(text.slice(at, m.index), html`<a href="${m[0]}" style="${LINK}">${m[0]}</a>`);
    at = m.index! + m[0].length;
  }
  parts.push(text.slice(at));
  return html`${parts}`;
}

export function mailParts(c: MailContent, title: string): MailParts {
  const text = [c.greeting, '', ...c.paragraphs.flatMap((p) => [p, '']), ...(c.link ? [c.link.url, ''] : []), ...c.after.flatMap((p) => [p, '']), '— gatehouse'].join('\n');
  const p = (s: string) => html`<p style="margin:0 0 16px;line-height:1.5">${withLinks(s)}</p>`;
  const body = html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head>
<body style="margin:0;padding:16px 8px;background:#f4f5f7;color:#1d2330;${FONT}">
<div style="max-width:560px;margin:0 auto;background:#ffffff;border:1px solid #d8dce3;border-radius:8px;padding:24px;overflow-wrap:break-word">
<p style="margin:0 0 24px;font-weight:700;letter-spacing:.02em;color:#3a4a6b">gatehouse</p>
${p(c.greeting)}
${c.paragraphs.map(p)}
${c.link ? html`<p style="margin:24px 0"><a href="${c.link.url}" style="display:inline-block;background:#2f5bd3;color:#ffffff;text-decoration:none;padding:12px 20px;border-radius:6px;font-weight:600">${c.link.label}</a></p>
<p style="margin:0 0 16px;line-height:1.5;font-size:14px;color:#4a5263">Or open this address:</p>
<p style="margin:0 0 24px;line-height:1.4;font-size:14px;word-break:break-all"><a href="${c.link.url}" style="${LINK}">${c.link.url}</a></p>` : ''}
${c.after.map(p)}
</div>
</body>
</html>
`;
  return { text, html: String(body) };
}
