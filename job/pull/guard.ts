/**
 * The pull's SSRF guard, as pure decisions: which URLs a pull may fetch and which addresses it may
 * connect to. The connection (connect.ts) asks `checkUrl` before it resolves anything and
 * `checkAddresses` with every address the name resolved to, before any packet goes to the host;
 * a redirect is a new URL and is asked again from the start.
 *
 * The operator's rules (`FELIS_PULL_ALLOW`, `FELIS_PULL_DENY`: host names or CIDRs, comma-separated;
 * `FELIS_PULL_PORTS`: ports besides 80 and 443): deny wins over allow; an allowed host or address
 * skips the special-purpose table and may use any port. A host rule matches the URL's host name
 * exactly (any case); it says nothing about the addresses the name resolves to, beyond allowing them.
 * @module
 */
import type ipaddr from 'ipaddr.js';
import { type Address, PolicyError, parseAddress, readPullPorts, readPullRules } from '../../lib/protocol/pull-rules.ts';
import { refusedReason } from './ranges.ts';

export { PolicyError };

export const DEFAULT_PORTS: readonly number[] = [80, 443];

export interface PullPolicy {
  allowHosts: ReadonlySet<string>;
  allowNets: readonly [Address, number][];
  denyHosts: ReadonlySet<string>;
  denyNets: readonly [Address, number][];
  /** Ports any public address may use. */
  ports: ReadonlySet<number>;
}

/** A refusal of the guard: `reason` is said to the caller as it is. */
export class PullRefused extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(reason);
    this.reason = reason;
    this.name = 'PullRefused';
  }
}

/** The policy from the Job's env; throws PolicyError for a rule it cannot read. */
export function policyFromEnv(env: Record<string, string | undefined>): PullPolicy {
  const allow = readPullRules(env.FELIS_PULL_ALLOW, 'FELIS_PULL_ALLOW');
  const deny = readPullRules(env.FELIS_PULL_DENY, 'FELIS_PULL_DENY');
  const ports = new Set([...DEFAULT_PORTS, ...readPullPorts(env.FELIS_PULL_PORTS, 'FELIS_PULL_PORTS')]);
  return { allowHosts: allow.hosts, allowNets: allow.nets, denyHosts: deny.hosts, denyNets: deny.nets, ports };
}

/** What connect.ts needs of a URL the guard let through. */
export interface Destination {
  url: URL;
  /** The host name without brackets, lower case: the Host header, TLS SNI and certificate name. */
  host: string;
  port: number;
  tls: boolean;
  /** The host is an address: it is connected to as it is, never resolved. */
  literal?: Address;
  /** The operator allowed the host by name: any address and port. */
  hostAllowed: boolean;
}

const inNets = (a: Address, nets: readonly [Address, number][]): boolean => nets.some((n) => a.kind() === n[0].kind() && a.match(n));

/** Mapped IPv4 addresses are matched by the operator's IPv4 rules too. */
function forms(a: Address): Address[] {
  if (a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress()) return [a, (a as ipaddr.IPv6).toIPv4Address()];
  return [a];
}

/** The checks that need no resolver: scheme, userinfo, host rules, port. Throws PullRefused. */
export function checkUrl(raw: string | URL, policy: PullPolicy): Destination {
  let url: URL;
  try {
    url = typeof raw === 'string' ? new URL(raw) : raw;
  } catch {
    throw new PullRefused('the URL cannot be parsed');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new PullRefused(`scheme ${url.protocol.replace(/:$/, '')} is not allowed: only http and https`);
  if (url.username !== '' || url.password !== '') throw new PullRefused('a URL with credentials (user:password@) is not allowed');
  const tls = url.protocol === 'https:';
  const port = url.port === '' ? (tls ? 443 : 80) : Number(url.port);
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
  if (host === '') throw new PullRefused('the URL has no host');
  const literal = parseAddress(host);
  const named = literal === undefined;
  if (named && policy.denyHosts.has(host)) throw new PullRefused(`host ${host} is denied by the operator (FELIS_PULL_DENY)`);
  const hostAllowed = named && policy.allowHosts.has(host);
  if (literal) checkAddresses(literal, [literal], port, policy);
  else if (!hostAllowed && !policy.ports.has(port) && policy.allowNets.length === 0) throw portRefused(port, policy);
  return { url, host, port, tls, hostAllowed, ...(literal ? { literal } : {}) };
}

function portRefused(port: number, policy: PullPolicy): PullRefused {
  return new PullRefused(`port ${port} is not allowed: only ${[...policy.ports].sort((a, b) => a - b).join(', ')} (FELIS_PULL_PORTS), or an address the operator allows`);
}

/**
 * Every address the host resolved to must be allowed: one refused address refuses the whole name
 * (a resolver that answers a public and a private address is not trusted with either). Throws
 * PullRefused naming the address and why.
 */
export function checkAddresses(host: string | Address, addresses: readonly Address[], port: number, policy: PullPolicy, hostAllowed = false): void {
  if (addresses.length === 0) throw new PullRefused(`${String(host)} resolved to no address`);
  let allAllowed = true;
  for (const a of addresses) {
    const fs = forms(a);
    if (fs.some((f) => inNets(f, policy.denyNets))) throw new PullRefused(`${a.toString()} is denied by the operator (FELIS_PULL_DENY)`);
    if (hostAllowed || fs.some((f) => inNets(f, policy.allowNets))) continue;
    allAllowed = false;
    const why = refusedReason(a);
    if (why !== null) throw new PullRefused(`${typeof host === 'string' ? `${host} resolves to ` : ''}${a.toString()}, which is ${why}: not a public address`);
  }
  if (!allAllowed && !policy.ports.has(port)) throw portRefused(port, policy);
}
