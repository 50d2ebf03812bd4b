import type { FastifyReply } from 'fastify';

// The security headers, one set per kind of response, defined here only (docs/security.md):
// a card page (sign-in, consent, account, errors: no script but the passkey buttons' own files, forms post here and, for
// the consent page, to the client's redirect target), a console page (its own script, isolated
// from other windows), and an OAuth JSON answer (RFC 6749 §5.1: never cached). JSON elsewhere gets
// the program-wide policy of platform/http/headers.ts.

/** The two kinds of page: one card in the middle, or the admin console. */
export type PageKind = 'card' | 'console';

const CONSOLE_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const CARD_POLICY = "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * A page's Content-Security-Policy; `formTargets`: where a card page's forms may also lead;
 * `scripts`: the card page carries scripts of this origin (the passkey buttons), none inline.
 */
export function pageSecurityPolicy(kind: PageKind, formTargets: readonly string[] = [], scripts = false): string {
  if (kind === 'console') return CONSOLE_POLICY;
  const policy = scripts ? CARD_POLICY.replace("default-src 'none';", "default-src 'none'; script-src 'self';") : CARD_POLICY;
  if (formTargets.length === 0) return policy;
  return policy.replace("form-action 'self'", `form-action 'self'${formTargets.map((t) => ' ' + t).join('')}`);
}

/** The headers of every page of `kind` (and of the redirects between pages): no framing, no caching, no referrer. */
export function setPageHeaders(reply: FastifyReply, kind: PageKind, formTargets: readonly string[] = [], scripts = false): void {
  reply.header('content-security-policy', pageSecurityPolicy(kind, formTargets, scripts));
  reply.header('x-frame-options', 'DENY');
  reply.header('referrer-policy', 'no-referrer');
  setNoStore(reply);
  // The console only: a card page may be a client's sign-in pop-up, whose opener waits for it.
  if (kind === 'console') reply.header('cross-origin-opener-policy', 'same-origin');
}

/** RFC 6749 §5.1: token responses (and their errors) must not be cached. */
export function setNoStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store');
  reply.header('pragma', 'no-cache');
}
