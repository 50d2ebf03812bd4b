import net from 'node:net';
import { isPrivateAddress } from '../platform/http/outbound.js';

// Where a webhook may deliver. The SSRF rule itself (which addresses are not the Internet's, the
// lookup that checks the address a connection actually uses) is shared with every other outbound
// fetch to an address a client chose: src/platform/http/outbound.ts.

export { guardedLookup, isPrivateAddress, literalAddressProblem, specialPurposeRange } from '../platform/http/outbound.js';

/** Why a webhook URL is refused when added or changed, or null. */
export function webhookUrlProblem(text: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute https URL';
  }
  if (url.protocol !== 'https:') return 'must use https';
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.hash) return 'must not have a fragment';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && (host === 'localhost' || host.endsWith('.localhost') || (net.isIP(host) !== 0 && isPrivateAddress(host))))
    return 'must not point at a loopback or private address (events.webhooks.allowPrivateNetworks allows it)';
  return null;
}
