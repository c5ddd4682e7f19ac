/**
 * The operator's pull rules as the functions pass them to a pull Job's env (`FELIS_PULL_ALLOW`,
 * `FELIS_PULL_DENY`: host names, addresses or CIDRs; `FELIS_PULL_PORTS`: port numbers; all
 * comma-separated). Read here by both sides: a function stops when its routes load (moments after
 * it first listens) on a rule the Job could not read, so a mistyped rule is said once, at start,
 * not as a crashed Job on every pull. Not read before listening: ipaddr.js would weigh on every
 * function's start-up path.
 * Pure: no I/O.
 * @module
 */
import ipaddr from 'ipaddr.js';

export type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** A rule list that cannot be read: the operator's mistake. */
export class PolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PolicyError';
  }
}

/** Parses an address as a resolver or a URL gives it (IPv6 without brackets or zone); undefined when it is none. */
export function parseAddress(s: string): Address | undefined {
  const bare = s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare);
  if (bare.includes(':') && ipaddr.IPv6.isValid(bare)) {
    const a = ipaddr.IPv6.parse(bare);
    // A zone names an interface of this host: never a destination on the internet.
    return a.zoneId ? undefined : a;
  }
  return undefined;
}

const HOST_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i;

export interface PullRules {
  /** Host names, lower case, without a trailing dot. */
  hosts: Set<string>;
  /** Networks; a single address is a /32 or /128. */
  nets: [Address, number][];
}

/** Reads `FELIS_PULL_ALLOW` or `FELIS_PULL_DENY` (`what`, when given, heads the error); empty items are skipped. */
export function readPullRules(v: string | undefined, what?: string): PullRules {
  const said = what ? `${what}: ` : '';
  const hosts = new Set<string>();
  const nets: [Address, number][] = [];
  for (const raw of (v ?? '').split(',')) {
    const item = raw.trim();
    if (item === '') continue;
    if (item.includes('/')) {
      if (!ipaddr.isValidCIDR(item)) throw new PolicyError(`${said}${JSON.stringify(item)} is not a CIDR`);
      nets.push(ipaddr.parseCIDR(item));
      continue;
    }
    const a = parseAddress(item);
    if (a) {
      nets.push([a, a.kind() === 'ipv4' ? 32 : 128]);
      continue;
    }
    if (!HOST_NAME.test(item)) throw new PolicyError(`${said}${JSON.stringify(item)} is neither a host name nor an address (a rule has no port: an allowed host may use any port)`);
    hosts.add(item.toLowerCase().replace(/\.$/, ''));
  }
  return { hosts, nets };
}

/** Reads `FELIS_PULL_PORTS`: the ports besides 80 and 443 any public address may use (`what`, when given, heads the error, as for the rules). */
export function readPullPorts(v: string | undefined, what?: string): number[] {
  const said = what ? `${what}: ` : '';
  const ports: number[] = [];
  for (const raw of (v ?? '').split(',')) {
    const p = raw.trim();
    if (p === '') continue;
    if (!/^\d{1,5}$/.test(p) || Number(p) < 1 || Number(p) > 65535) throw new PolicyError(`${said}${JSON.stringify(p)} is not a port`);
    ports.push(Number(p));
  }
  return ports;
}

/** Reads the rules of a pull Job's env as the Job will; throws naming the variable of the first it could not read. */
export function checkPullEnv(env: Readonly<Record<string, string | undefined>>): void {
  const read = (name: string, f: () => unknown) => {
    try {
      f();
    } catch (e) {
      throw new Error(`invalid configuration ${name}: ${(e as Error).message}`);
    }
  };
  read('FELIS_PULL_ALLOW', () => readPullRules(env.FELIS_PULL_ALLOW));
  read('FELIS_PULL_DENY', () => readPullRules(env.FELIS_PULL_DENY));
  read('FELIS_PULL_PORTS', () => readPullPorts(env.FELIS_PULL_PORTS));
}
