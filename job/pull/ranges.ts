/**
 * The addresses a pull never connects to, as our own explicit table: a library's names for ranges
 * change between versions, so `ipaddr.js` only parses and matches here. Every row is one IANA
 * special-purpose block (IPv4 and IPv6 registries) or a block that is not globally reachable; the
 * IPv6 forms that embed an IPv4 address (IPv4-mapped, 6to4) are judged by that IPv4 address, and
 * the forms that may translate to any IPv4 address (NAT64, Teredo, IPv4-compatible) are refused
 * outright. Pure: no I/O.
 * @module
 */
import ipaddr from 'ipaddr.js';

import type { Address } from '../../lib/protocol/pull-rules.ts';

export { type Address, parseAddress } from '../../lib/protocol/pull-rules.ts';

export interface RefusedRange {
  cidr: string;
  /** Said in the refusal: why this block is never a pull's destination. */
  reason: string;
}

export const REFUSED_V4: readonly RefusedRange[] = [
  { cidr: '0.0.0.0/8', reason: '"this network" (0.0.0.0/8)' },
  { cidr: '10.0.0.0/8', reason: 'private (10.0.0.0/8)' },
  { cidr: '100.64.0.0/10', reason: 'shared address space, carrier-grade NAT (100.64.0.0/10)' },
  { cidr: '127.0.0.0/8', reason: 'loopback (127.0.0.0/8)' },
  { cidr: '169.254.0.0/16', reason: 'link-local, cloud metadata (169.254.0.0/16)' },
  { cidr: '172.16.0.0/12', reason: 'private (172.16.0.0/12)' },
  { cidr: '192.0.0.0/24', reason: 'IETF protocol assignments (192.0.0.0/24)' },
  { cidr: '192.0.2.0/24', reason: 'documentation, TEST-NET-1 (192.0.2.0/24)' },
  { cidr: '192.31.196.0/24', reason: 'AS112 service (192.31.196.0/24)' },
  { cidr: '192.52.193.0/24', reason: 'AMT relay (192.52.193.0/24)' },
  { cidr: '192.88.99.0/24', reason: 'deprecated 6to4 relay anycast (192.88.99.0/24)' },
  { cidr: '192.168.0.0/16', reason: 'private (192.168.0.0/16)' },
  { cidr: '192.175.48.0/24', reason: 'AS112 direct delegation (192.175.48.0/24)' },
  { cidr: '198.18.0.0/15', reason: 'benchmarking (198.18.0.0/15)' },
  { cidr: '198.51.100.0/24', reason: 'documentation, TEST-NET-2 (198.51.100.0/24)' },
  { cidr: '203.0.113.0/24', reason: 'documentation, TEST-NET-3 (203.0.113.0/24)' },
  { cidr: '224.0.0.0/4', reason: 'multicast (224.0.0.0/4)' },
  { cidr: '255.255.255.255/32', reason: 'limited broadcast (255.255.255.255)' },
  { cidr: '240.0.0.0/4', reason: 'reserved (240.0.0.0/4)' },
];

/** Judged by the IPv4 address they carry, before the IPv6 table. */
export const EMBEDDING_V6: readonly { cidr: string; form: string; v4: (a: ipaddr.IPv6) => ipaddr.IPv4 }[] = [
  { cidr: '::ffff:0:0/96', form: 'IPv4-mapped', v4: (a) => a.toIPv4Address() },
  { cidr: '2002::/16', form: '6to4', v4: (a) => new ipaddr.IPv4([a.parts[1] >> 8, a.parts[1] & 0xff, a.parts[2] >> 8, a.parts[2] & 0xff]) },
];

export const REFUSED_V6: readonly RefusedRange[] = [
  { cidr: '::/128', reason: 'unspecified (::)' },
  { cidr: '::1/128', reason: 'loopback (::1)' },
  { cidr: '::/96', reason: 'deprecated IPv4-compatible (::/96)' },
  { cidr: '::ffff:0:0:0/96', reason: 'IPv4-translated, SIIT (::ffff:0:0:0/96)' },
  { cidr: '64:ff9b::/96', reason: 'NAT64 well-known prefix (64:ff9b::/96)' },
  { cidr: '64:ff9b:1::/48', reason: 'NAT64 local-use prefix (64:ff9b:1::/48)' },
  { cidr: '100::/64', reason: 'discard-only (100::/64)' },
  { cidr: '2001::/32', reason: 'Teredo (2001::/32)' },
  { cidr: '2001:2::/48', reason: 'benchmarking (2001:2::/48)' },
  { cidr: '2001:10::/28', reason: 'deprecated ORCHID (2001:10::/28)' },
  { cidr: '2001:20::/28', reason: 'ORCHIDv2 (2001:20::/28)' },
  { cidr: '2001::/23', reason: 'IETF protocol assignments (2001::/23)' },
  { cidr: '2001:db8::/32', reason: 'documentation (2001:db8::/32)' },
  { cidr: '3fff::/20', reason: 'documentation (3fff::/20)' },
  { cidr: '5f00::/16', reason: 'SRv6 segment identifiers (5f00::/16)' },
  { cidr: 'fc00::/7', reason: 'unique-local (fc00::/7)' },
  { cidr: 'fe80::/10', reason: 'link-local (fe80::/10)' },
  { cidr: 'fec0::/10', reason: 'deprecated site-local (fec0::/10)' },
  { cidr: 'ff00::/8', reason: 'multicast (ff00::/8)' },
  // Whatever the registry has not made global unicast yet is reserved: refused until it is.
  { cidr: '::/0', reason: 'reserved, not global unicast (outside 2000::/3)' },
];

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

type Parsed = { row: RefusedRange; range: [Address, number] };
const parsed = (rows: readonly RefusedRange[]): Parsed[] => rows.map((row) => ({ row, range: ipaddr.parseCIDR(row.cidr) }));
const V4 = parsed(REFUSED_V4);
const V6 = parsed(REFUSED_V6);
const EMBED = EMBEDDING_V6.map((e) => ({ ...e, range: ipaddr.IPv6.parseCIDR(e.cidr) }));

/** Why `a` is never a pull's destination, or null for a public address. */
export function refusedReason(a: Address): string | null {
  if (a.kind() === 'ipv4') {
    for (const p of V4) if (a.match(p.range)) return p.row.reason;
    return null;
  }
  const v6 = a as ipaddr.IPv6;
  for (const e of EMBED) {
    if (!v6.match(e.range)) continue;
    const inner = refusedReason(e.v4(v6));
    return inner === null ? null : `${e.form} form of ${inner}`;
  }
  for (const p of V6) {
    // The catch-all row applies only outside global unicast.
    if (p.row.cidr === '::/0' && v6.match(GLOBAL_UNICAST_V6)) continue;
    if (v6.match(p.range)) return p.row.reason;
  }
  return null;
}
