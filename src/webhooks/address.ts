import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

// Where a webhook (and any other outbound fetch to an address a client chose) may connect (SSRF):
// `https` only, and — unless the operator allows it with `events.webhooks.allowPrivateNetworks` —
// only to a global unicast address. The check is made on the address the connection actually uses
// (the `lookup` of the request), so a name that resolves to a public address when the webhook is
// added and to 127.0.0.1 when it is delivered (DNS rebinding) is refused too.

// IPv6 global unicast is 2000::/3; everything outside it (IPv4-compatible `::a.b.c.d`, NAT64
// `64:ff9b::/96` outside, discard `100::/64`, site-local, segment routing …) is not an Internet host.
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * The rule, in one place: the name of the IANA special-purpose range an IP address is in
 * (`loopback`, `private`, `6to4`, `rfc6052` (NAT64), `teredo`, `ipv4Compatible`, …), or null when it
 * is a global unicast address. An IPv4-mapped `::ffff:a.b.c.d` is judged as its IPv4 address.
 * Anything that is not an IP address literal is `invalid`. Ranges that embed an IPv4 address
 * (6to4, NAT64, Teredo) are refused whole: a gateway would relay to an address not checked here.
 */
export function specialPurposeRange(address: string): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    const family = net.isIP(address);
    if (family === 0) return 'invalid';
    // ipaddr.js reads any `::a.b.c.d` as IPv4-mapped (`::ffff:a.b.c.d`): the dotted tail is
    // rewritten as two hex groups first, so an IPv4-compatible address stays what it is.
    ip = ipaddr.parse(family === 6 ? address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, dottedToHex) : address);
  } catch {
    return 'invalid';
  }
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return specialPurposeRange(v6.toIPv4Address().toString());
    const range = v6.range();
    if (range !== 'unicast') return range;
    if (!v6.match(GLOBAL_UNICAST_V6)) return v6.parts.slice(0, 6).every((p) => p === 0) ? 'ipv4Compatible' : 'reserved';
    return null;
  }
  const range = (ip as ipaddr.IPv4).range();
  return range === 'unicast' ? null : range;
}

function dottedToHex(_: string, a: string, b: string, c: string, d: string): string {
  return `${((+a << 8) | +b).toString(16)}:${((+c << 8) | +d).toString(16)}`;
}

/** Whether an IP address is not a global unicast address (see `specialPurposeRange`). */
export function isPrivateAddress(address: string): boolean {
  return specialPurposeRange(address) !== null;
}

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

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** A `lookup` for https.request that refuses non-public addresses (unless allowed). */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const list = addresses as dns.LookupAddress[];
      const refused = allowPrivate ? [] : list.filter((a) => isPrivateAddress(a.address));
      if (refused.length) {
        const e: NodeJS.ErrnoException = new Error(`${hostname} resolves to a non-public address (${refused[0].address})`);
        e.code = 'EPRIVATEADDRESS';
        return callback(e, '');
      }
      if (options.all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

/** A literal IP host is connected to without a lookup: it is checked here instead. */
export function literalAddressProblem(url: URL, allowPrivate: boolean): string | null {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (allowPrivate || net.isIP(host) === 0) return null;
  return isPrivateAddress(host) ? `${host} is not a public address` : null;
}
