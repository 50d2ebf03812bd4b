import dns from 'node:dns';
import net from 'node:net';
import https from 'node:https';
import ipaddr from 'ipaddr.js';

// Where an outbound fetch to an address a client chose may connect (SSRF): webhooks
// (src/webhooks) and client ID metadata documents (src/authserver/model/client-metadata-document.ts).
// `https` only, and — unless the operator allows it (`events.webhooks.allowPrivateNetworks`,
// `auth.allowPrivateMetadataHosts`) — only to a global unicast address. The check is made on the address the connection actually uses
// (the `lookup` of the request), so a name that resolves to a public address when the webhook is
// added and to 127.0.0.1 when it is fetched (DNS rebinding) is refused too.

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

/**
 * Why a bounded fetch gave nothing usable. `message`: a sentence safe to show whoever asked (an
 * unauthenticated caller may have chosen the URL): never a resolved address, a port or an errno.
 * `detail`: the whole reason, for the log.
 */
export class OutboundFetchFailed extends Error {
  constructor(
    message: string,
    readonly detail: string = message,
  ) {
    super(message);
  }
}

const NOT_ALLOWED = 'its address is not allowed';
const NOT_FETCHED = 'it could not be fetched';

export interface BoundedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface BoundedFetch {
  /** Loopback, private and other special-purpose addresses allowed (tests, a host on the same network). */
  allowPrivate: boolean;
  /** The body is read up to this many bytes; one more and the fetch fails (the rest is never read). */
  maxBytes: number;
  /** The whole exchange (lookup, connection, TLS, answer, body) within this time. */
  timeoutMs: number;
  accept: string;
  userAgent: string;
}

/**
 * A GET to a client-chosen https URL under the SSRF rule: the resolved address checked (the
 * guarded lookup; a literal IP checked here), no redirect followed (a 3xx is answered as it came,
 * for the caller to refuse), the body streamed and given up past `maxBytes`, everything within
 * `timeoutMs`. TLS is trusted as Node trusts it (its CAs plus NODE_EXTRA_CA_CERTS). Throws
 * OutboundFetchFailed with a sentence saying why.
 */
export function fetchBounded(url: URL, options: BoundedFetch): Promise<BoundedResponse> {
  if (url.protocol !== 'https:') return Promise.reject(new OutboundFetchFailed('the URL is not https'));
  const literal = literalAddressProblem(url, options.allowPrivate);
  if (literal) return Promise.reject(new OutboundFetchFailed(NOT_ALLOWED, literal));
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (message: string, detail = message) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      req.destroy();
      reject(new OutboundFetchFailed(message, detail));
    };
    const req = https.request(url, {
      method: 'GET',
      // No connection kept for another fetch: each one is looked up (and checked) again.
      agent: false,
      lookup: guardedLookup(options.allowPrivate) as never,
      headers: { accept: options.accept, 'user-agent': options.userAgent, connection: 'close' },
    });
    const deadline = setTimeout(() => fail(`no complete answer within ${options.timeoutMs / 1000} s`), options.timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'EPRIVATEADDRESS' ? fail(NOT_ALLOWED, e.message) : fail(NOT_FETCHED, `could not be fetched (${e.message})`)));
    req.on('response', (res) => {
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > options.maxBytes) return fail(`it is larger than ${options.maxBytes} bytes`);
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBytes) return fail(`it is larger than ${options.maxBytes} bytes`);
        chunks.push(chunk);
      });
      res.on('error', (e) => fail(NOT_FETCHED, `the answer broke off (${e.message})`));
      res.on('end', () => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      });
    });
    req.end();
  });
}
