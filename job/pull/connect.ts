/**
 * The pull's connection: each hop's URL is checked (guard.ts), its host resolved here, every
 * address checked, and the request connects to exactly the first checked address — the `lookup`
 * it is given answers that address and nothing else, so no second resolution can change where the
 * packets go (an address literal is never resolved at all). TLS still names the host (SNI and the
 * certificate check). Our own agent, never the environment's proxy. Redirects are followed here,
 * at most `maxRedirects`, each one a new URL checked from the start.
 * @module
 */
import dns from 'node:dns';
import type http from 'node:http';
import type https from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkAddresses, checkUrl, type PullPolicy, PullRefused } from './guard.ts';
import { type Address, parseAddress } from './ranges.ts';

export const MAX_REDIRECTS = 5;
export const CONNECT_TIMEOUT_MS = 15_000;
export const IDLE_TIMEOUT_MS = 60_000;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const USER_AGENT = 'felis-world-pull';

/** The upstream failed us (no answer, an HTTP error, too many redirects): said to the caller. */
export class PullFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PullFailed';
  }
}

/** Every address of a name, in the resolver's order. */
export type Resolve = (host: string) => Promise<{ address: string; family: number }[]>;
/** `http.request`/`https.request` as the pull calls them; tests spy on it. */
export type Request = (tls: boolean, options: https.RequestOptions) => http.ClientRequest;

export interface ConnectOptions {
  policy: PullPolicy;
  resolve?: Resolve;
  request?: Request;
  connectTimeoutMs?: number;
  idleTimeoutMs?: number;
  maxRedirects?: number;
  signal?: AbortSignal;
}

export const systemResolve: Resolve = (host) => dns.promises.lookup(host, { all: true, order: 'verbatim' });
/**
 * node:http and node:https, loaded when a pull first connects: a static import is hoisted to the
 * top of the Job's bundle, and loading them (with the fetch machinery node:http's exports pull in)
 * cost every Job's start tens of milliseconds, whatever its op.
 */
const web = (tls: boolean): typeof https | typeof http => process.getBuiltinModule(tls ? 'node:https' : 'node:http');
const systemRequest: Request = (tls, options) => web(tls).request(options);

/** A lookup that can only answer `address`: whatever name Node asks it about. */
export function pinnedLookup(address: Address): LookupFunction {
  const ip = address.toString();
  const family = address.kind() === 'ipv4' ? 4 : 6;
  return ((_host: string, opts: { all?: boolean }, cb: (...a: unknown[]) => void) => {
    if (opts?.all) cb(null, [{ address: ip, family }]);
    else cb(null, ip, family);
  }) as unknown as LookupFunction;
}

export interface Opened {
  response: http.IncomingMessage;
  /** The URL that answered (after redirects). */
  url: URL;
  /** Ends the transfer early (a cancel, a cap): the socket is destroyed. */
  abort: (err: Error) => void;
}

/** Resolves and checks a hop's addresses; throws PullRefused before any packet goes to the host. */
export async function checkedAddress(url: URL, o: ConnectOptions): Promise<{ address: Address; tls: boolean; host: string; port: number; literal: boolean }> {
  const dest = checkUrl(url, o.policy);
  if (dest.literal) return { address: dest.literal, tls: dest.tls, host: dest.host, port: dest.port, literal: true };
  let found: { address: string; family: number }[];
  try {
    found = await (o.resolve ?? systemResolve)(dest.host);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new PullFailed(`${dest.host} cannot be resolved${code ? ` (${code})` : ''}`);
  }
  const addresses = found.map((f) => {
    const a = parseAddress(f.address);
    if (!a) throw new PullRefused(`${dest.host} resolves to ${JSON.stringify(f.address)}, which is not an address`);
    return a;
  });
  checkAddresses(dest.host, addresses, dest.port, o.policy, dest.hostAllowed);
  return { address: addresses[0], tls: dest.tls, host: dest.host, port: dest.port, literal: false };
}

/** One GET to the checked address; answers once the headers arrive. */
function getOnce(url: URL, target: Awaited<ReturnType<typeof checkedAddress>>, o: ConnectOptions): Promise<Opened> {
  const request = o.request ?? systemRequest;
  const connectMs = o.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
  const idleMs = o.idleTimeoutMs ?? IDLE_TIMEOUT_MS;
  return new Promise<Opened>((resolve, reject) => {
    const agent = new (web(target.tls).Agent)({ keepAlive: false });
    const req = request(target.tls, {
      method: 'GET',
      host: target.literal ? target.address.toString() : target.host,
      port: target.port,
      path: `${url.pathname}${url.search}`,
      agent,
      lookup: pinnedLookup(target.address),
      // SNI and the certificate name are the host's; SNI never carries an address.
      ...(target.tls && !target.literal ? { servername: target.host } : {}),
      headers: { host: url.host, 'user-agent': USER_AGENT, accept: '*/*', 'accept-encoding': 'identity' },
    });
    let settled = false;
    const fail = (err: Error) => {
      req.destroy(err);
      if (!settled) {
        settled = true;
        reject(err);
      }
    };
    let answer: http.IncomingMessage | undefined;
    // Once the answer is under way its stream carries the reason, so the reader sees it, not "aborted".
    const end = (err: Error) => (answer ? (answer.destroy(err), req.destroy(err)) : fail(err));
    const connectTimer = setTimeout(() => fail(new PullFailed(`${url.host} did not accept a connection within ${Math.round(connectMs / 1000)} s`)), connectMs);
    const onAbort = () => end(o.signal!.reason instanceof Error ? o.signal!.reason : new Error('aborted'));
    if (o.signal?.aborted) return onAbort();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    req.on('socket', (socket) => {
      socket.once(target.tls ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
      socket.setTimeout(idleMs, () => end(new PullFailed(`${url.host} sent nothing for ${Math.round(idleMs / 1000)} s`)));
    });
    req.on('error', (e) => {
      clearTimeout(connectTimer);
      if (!settled) {
        settled = true;
        reject(e instanceof PullFailed || e instanceof PullRefused || o.signal?.aborted ? e : new PullFailed(`${url.host}: ${describe(e)}`));
      }
    });
    req.on('response', (response) => {
      clearTimeout(connectTimer);
      settled = true;
      answer = response;
      response.on('end', () => o.signal?.removeEventListener('abort', onAbort));
      resolve({ response, url, abort: end });
    });
    req.end();
  });
}

function describe(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET') return 'connection reset';
  if (code === 'ETIMEDOUT') return 'connection timed out';
  return e instanceof Error ? e.message : String(e);
}

/**
 * GET `raw`, following redirects, every hop checked before it connects. Answers the final 2xx
 * response (its body unread); throws PullRefused for a URL or address the guard refuses, PullFailed
 * for an upstream failure (an HTTP status that is not 2xx, a redirect without a target, too many).
 */
export async function openPull(raw: string, o: ConnectOptions): Promise<Opened> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PullRefused('the URL cannot be parsed');
  }
  const max = o.maxRedirects ?? MAX_REDIRECTS;
  for (let hop = 0; ; hop++) {
    const target = await checkedAddress(url, o);
    const opened = await getOnce(url, target, o);
    const { response } = opened;
    const status = response.statusCode ?? 0;
    if (REDIRECTS.has(status)) {
      response.destroy();
      const location = response.headers.location;
      if (!location) throw new PullFailed(`${url.host} answered ${status} without a Location`);
      if (hop >= max) throw new PullFailed(`more than ${max} redirects`);
      try {
        url = new URL(location, url);
      } catch {
        throw new PullFailed(`${url.host} redirected to a URL that cannot be parsed`);
      }
      continue;
    }
    if (status < 200 || status > 299) {
      response.destroy();
      throw new PullFailed(`${url.origin} answered HTTP ${status}${response.statusMessage ? ` ${response.statusMessage}` : ''}`);
    }
    return opened;
  }
}
