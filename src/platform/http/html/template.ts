// The one way to write HTML (docs/architecture.md, "How to add a page"): a tagged template that
// escapes every interpolated value. Only `Html` — made by this template, or by `trusted` for
// markup the program wrote itself — goes in as is, so escaping cannot be forgotten.

/** Escapes text for an element's content or a quoted attribute value (docs/security.md). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`=]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Markup that is safe as it is. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type Part = Html | string | number | null | undefined | false | Part[];

function render(part: Part): string {
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  if (part === null || part === undefined || part === false) return '';
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0];
  values.forEach((v, i) => (out += render(v) + strings[i + 1]));
  return new Html(out);
}

/** Markup the program wrote itself (never anything a request brought), passed through as is. */
export function trusted(markup: string): Html {
  return new Html(markup);
}
