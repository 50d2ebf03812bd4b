import dns from 'node:dns';
import net from 'node:net';

// Where a webhook may deliver (SSRF): `https` only, and — unless the operator allows it with
// `events.webhooks.allowPrivateNetworks` — never to loopback, private, link-local, shared or
// otherwise non-public addresses. The check is made on the address the connection actually uses
// (the `lookup` of the request), so a name that resolves to a public address when the webhook is
// added and to 127.0.0.1 when it is delivered (DNS rebinding) is refused too.

const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 3],
] as const)
  blocked.addSubnet(prefix, bits, 'ipv4');
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(prefix, bits, 'ipv6');

/** Whether an IP address is not a public unicast address (loopback, private, link-local, …). */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return blocked.check(mapped[1], 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return true;
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
