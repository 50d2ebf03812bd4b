import { ApiError } from './errors.js';

// The one Accept parser of the program (RFC 9110 §12.5.1): what a client accepts, and how much.
// docs/api.md#415-media-types: 415 when "the requested return format is unsupported, for example XML when only JSON is offered".

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const part of header.toLowerCase().split(',')) {
    const [range, ...params] = part.split(';').map((s) => s.trim());
    if (!range) continue;
    const [type, subtype = ''] = range.split('/').map((s) => s.trim());
    const q = params.find((p) => p.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    ranges.push({ type, subtype, q: Number.isFinite(value) ? Math.min(Math.max(value, 0), 1) : 0 });
  }
  return ranges;
}

/** How much the client wants `type/subtype` (0 when not at all): the most specific matching range decides. */
export function acceptQuality(header: string | undefined, type: string, subtype: string): number {
  if (header === undefined || header.trim() === '') return 1;
  let best: { specificity: number; q: number } | null = null;
  for (const r of parseAccept(header)) {
    const exact = r.type === type && (r.subtype === subtype || (subtype === 'json' && r.subtype.endsWith('+json')));
    const specificity = exact ? 3 : r.type === type && r.subtype === '*' ? 2 : r.type === '*' && r.subtype === '*' ? 1 : 0;
    if (specificity === 0) continue;
    if (!best || specificity > best.specificity || (specificity === best.specificity && r.q > best.q)) best = { specificity, q: r.q };
  }
  return best?.q ?? 0;
}

export function acceptsJson(header: string | undefined): boolean {
  // The values nearly every client sends, answered without parsing.
  if (header === undefined || header === 'application/json' || header === '*/*') return true;
  return acceptQuality(header, 'application', 'json') > 0;
}

export function acceptsHtml(header: string | undefined): boolean {
  return acceptQuality(header, 'text', 'html') > 0;
}

/** Whether the client names this exact type (not through a wildcard): an attachment's own bytes. */
export function namesType(header: string | undefined, mediaType: string): boolean {
  if (!header) return false;
  const [type, subtype] = mediaType.toLowerCase().split('/');
  return parseAccept(header).some((r) => r.type === type && r.subtype === subtype && r.q > 0);
}

/**
 * A JSON error instead of an HTML page: when the client takes no HTML at all (`application/*`,
 * `application/json`), or names application/json above text/html. A browser asks for HTML.
 */
export function prefersJson(header: string | undefined): boolean {
  if (!header) return false;
  if (!acceptsHtml(header)) return true;
  const ranges = parseAccept(header);
  const named = (type: string, subtype: string) => ranges.find((r) => r.type === type && r.subtype === subtype)?.q ?? -1;
  const json = named('application', 'json');
  return json > 0 && json > named('text', 'html');
}

export function requireJsonAccept(header: string | undefined): void {
  if (!acceptsJson(header))
    throw new ApiError(415, 'Only application/json responses are offered', { accept: 'must allow application/json' });
}
