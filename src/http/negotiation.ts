import { ApiError } from './errors.js';

// SPEC 415: "the requested return format is unsupported, for example XML when only JSON is offered".

function accepts(header: string, type: string, subtype: string): boolean {
  for (const part of header.split(',')) {
    const [range, ...params] = part.trim().toLowerCase().split(';');
    if (!range) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q !== undefined && Number(q.slice(2)) === 0) continue;
    const [t, s] = range.trim().split('/');
    if (t === '*' && s === '*') return true;
    if (t === type && (s === '*' || s === subtype || (subtype === 'json' && s?.endsWith('+json')))) return true;
  }
  return false;
}

export function acceptsJson(header: string | undefined): boolean {
  // The values nearly every client sends, answered without parsing.
  if (header === undefined || header === 'application/json' || header === '*/*') return true;
  return header.trim() === '' || accepts(header, 'application', 'json');
}

export function acceptsHtml(header: string | undefined): boolean {
  return !header || header.trim() === '' || accepts(header, 'text', 'html');
}

export function requireJsonAccept(header: string | undefined): void {
  if (!acceptsJson(header))
    throw new ApiError(415, 'Only application/json responses are offered', { accept: 'must allow application/json' });
}
