import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isPrivateAddress, literalAddressProblem, webhookUrlProblem } from './address.js';

// One address in (or at the edge of) each IANA special-purpose range, IPv4 and IPv6.
const refused: [string, string][] = [
  ['0.0.0.0', 'this network 0.0.0.0/8'],
  ['0.255.255.255', 'this network 0.0.0.0/8'],
  ['10.0.0.1', 'private 10/8'],
  ['100.64.0.1', 'shared address space 100.64/10'],
  ['100.127.255.254', 'shared address space 100.64/10'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['169.254.169.254', 'link-local (cloud metadata)'],
  ['172.16.0.1', 'private 172.16/12'],
  ['172.31.255.254', 'private 172.16/12'],
  ['192.0.0.8', 'IETF protocol assignments 192.0.0/24'],
  ['192.0.0.170', 'NAT64 discovery'],
  ['192.0.2.1', 'TEST-NET-1'],
  ['192.31.196.1', 'AS112-v4'],
  ['192.52.193.1', 'AMT'],
  ['192.88.99.1', '6to4 relay anycast'],
  ['192.168.1.1', 'private 192.168/16'],
  ['192.175.48.1', 'direct delegation AS112'],
  ['198.18.0.1', 'benchmarking 198.18/15'],
  ['198.19.255.254', 'benchmarking 198.18/15'],
  ['198.51.100.1', 'TEST-NET-2'],
  ['203.0.113.1', 'TEST-NET-3'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved 240/4'],
  ['255.255.255.255', 'limited broadcast'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:10.0.0.1', 'IPv4-mapped private'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
  ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['::10.0.0.1', 'IPv4-compatible private'],
  ['::8.8.8.8', 'IPv4-compatible (deprecated) even of a public address'],
  ['::ffff:0:7f00:1', 'IPv4-translated (RFC 6145)'],
  ['64:ff9b::7f00:1', 'NAT64 64:ff9b::/96'],
  ['64:ff9b::8.8.8.8', 'NAT64 64:ff9b::/96, embedding a public address'],
  ['64:ff9b:1::a00:1', 'local-use NAT64 64:ff9b:1::/48'],
  ['100::1', 'discard-only 100::/64'],
  ['2001::1', 'Teredo 2001::/32'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
  ['2001:1::1', 'IETF protocol assignments 2001::/23'],
  ['2001:2::1', 'benchmarking 2001:2::/48'],
  ['2001:3::1', 'AMT 2001:3::/32'],
  ['2001:4:112::1', 'AS112-v6'],
  ['2001:10::1', 'ORCHID (deprecated)'],
  ['2001:20::1', 'ORCHIDv2'],
  ['2001:30::1', 'drone remote ID'],
  ['2001:db8::1', 'documentation'],
  ['2002:7f00:1::1', '6to4 2002::/16 (embedding 127.0.0.1)'],
  ['2002:808:808::1', '6to4 2002::/16 (embedding a public address)'],
  ['2620:4f:8000::1', 'direct delegation AS112'],
  ['3fff::1', 'documentation 3fff::/20'],
  ['5f00::1', 'segment routing 5f00::/16'],
  ['fc00::1', 'unique local'],
  ['fd12:3456::1', 'unique local'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local with a zone'],
  ['fec0::1', 'site-local (deprecated)'],
  ['ff02::1', 'multicast'],
  ['4000::1', 'outside 2000::/3 (IANA reserved)'],
  ['localhost', 'not an address'],
  ['', 'not an address'],
  ['1.2.3', 'not a dotted quad'],
];

const allowed = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '100.63.255.255', '100.128.0.1', '172.32.0.1', '192.0.3.1', '192.169.0.1', '198.20.0.1', '223.255.255.254',
  '::ffff:8.8.8.8', '2606:2800:220:1:248:1893:25c8:1946', '2a00:1450:4001:82b::200e', '2001:200::1', '2003::1', '2620:4f:8001::1'];

test('every IANA special-purpose address range is refused, IPv4 and IPv6, embedded IPv4 included', () => {
  for (const [address, what] of refused) {
    assert.equal(isPrivateAddress(address), true, `${address} (${what})`);

  }
});

test('global unicast addresses pass, IPv4-mapped ones as their IPv4 address', () => {
  for (const address of allowed) assert.equal(isPrivateAddress(address), false, address);
});

test('webhook URLs with a literal special-purpose address are refused when added and at connect time; allowPrivateNetworks allows them', () => {
  for (const host of ['[::127.0.0.1]', '[64:ff9b::a00:1]', '[2002:a00:1::1]', '[::ffff:169.254.169.254]', '0x7f.1', '2130706433'])
    assert.match(webhookUrlProblem(`https://${host}/hook`, false) ?? '', /loopback or private/, host);
  assert.match(literalAddressProblem(new URL('https://[64:ff9b::7f00:1]/'), false) ?? '', /not a public address/);
  assert.equal(literalAddressProblem(new URL('https://[64:ff9b::7f00:1]/'), true), null);
  assert.equal(webhookUrlProblem('https://[2002:a00:1::1]/hook', true), null);
  assert.equal(webhookUrlProblem('https://[2606:2800:220:1:248:1893:25c8:1946]/hook', false), null);
});
