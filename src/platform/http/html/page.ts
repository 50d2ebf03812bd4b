import type { FastifyReply, FastifyRequest } from 'fastify';
import { namesType, prefersJson } from '../negotiation.js';
import { setPageHeaders } from './headers.js';
import { layout, type LayoutOptions } from './layout.js';

// Answering with a page, and the one decision between an HTML page and the JSON error body.

/** What a refused request is, for a client that takes JSON rather than the page. */
export interface Problem {
  error: string;
  detail?: Record<string, string>;
}

export interface PageAnswer extends LayoutOptions {
  /** 200 unless said. */
  status?: number;
  /** A refusal's JSON error body (status ≥ 400, a client that prefers JSON); the title when absent. */
  problem?: Problem;
  /** Where a card page's forms may also lead (the consent page: the client's redirect target). */
  formTargets?: readonly string[];
}

/** Sends a page with its kind's headers; a refusal goes as the JSON error body to a client that prefers JSON. */
export function sendPage(reply: FastifyReply, page: PageAnswer): FastifyReply {
  const status = page.status ?? 200;
  setPageHeaders(reply, page.kind, page.formTargets, (page.scripts?.length ?? 0) > 0);
  if (status >= 400 && !errorAnswer(reply.request, status, 'unless-json').page)
    return reply.code(status).type('application/json; charset=utf-8').send({ error: page.problem?.error ?? page.title, detail: page.problem?.detail ?? {} });
  return reply.code(status).type('text/html; charset=utf-8').send(layout(page));
}

/**
 * How an error meets its client (docs/api.md, errors): as a page or as the JSON error body, and
 * the status a page shows. `'unless-json'`: a page unless the client takes no HTML or ranks JSON
 * above it (the pages' own URLs). `'browsers'`: a page only for a client that names text/html and
 * prefers it (URLs that are mostly JSON endpoints: curl and API clients accept any type, or say nothing).
 * An unknown URL meets the JSON-only Accept rule (415) before the router says 404: a page says 404.
 */
export function errorAnswer(request: FastifyRequest, status: number, pagesFor: 'unless-json' | 'browsers'): { page: boolean; status: number } {
  const accept = request.headers.accept;
  const page = !prefersJson(accept) && (pagesFor === 'unless-json' || namesType(accept, 'text/html'));
  return { page, status: status === 415 && request.is404 ? 404 : status };
}
