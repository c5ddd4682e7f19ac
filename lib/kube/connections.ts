/**
 * Kept-alive connections to the Kubernetes API. client-node (2.x) builds a new undici Agent for
 * every request whose cluster has any TLS setting (a CA, a client certificate, or even
 * insecure-skip-tls-verify), so each API call opens a fresh connection, with a TLS handshake, and
 * the old Agents linger until their sockets time out. A warm file read makes two or three API
 * calls, and on a busy node those handshakes were most of its time.
 *
 * `reuseConnections` makes a KubeConfig hand out one Agent per distinct set of connection
 * settings (server, CA, client certificate and key, verification), so calls share a pool of
 * kept-alive connections. Credentials that ride in headers (bearer tokens, re-read from their file
 * by client-node on every request) are untouched; settings that change (a rotated CA or client
 * certificate file) give a new Agent, and the oldest one is closed once more than a few exist.
 * Types only from client-node, so the lazy loader can use it without loading the package.
 * @module
 */
import { createHash } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';

/** Distinct connection settings kept at once; a rotation adds one, the oldest is closed. */
const MAX_AGENTS = 4;

interface Closable {
  close?(): Promise<unknown>;
}

type MakeDispatcher = (cluster: { name?: string; server?: string } | null, agentOptions: Record<string, unknown>) => Closable | undefined;

const patched = new WeakSet<KubeConfig>();

/** The TLS settings a dispatcher is built from, as one digest (they may hold key material). */
function settingsKey(cluster: { name?: string; server?: string } | null, o: Record<string, unknown>): string {
  const h = createHash('sha256');
  h.update(`${cluster?.name ?? ''}\n${cluster?.server ?? ''}\n`);
  for (const k of Object.keys(o).sort()) {
    const v = o[k];
    if (v === undefined) continue;
    h.update(`${k}=`);
    if (Buffer.isBuffer(v) || typeof v === 'string') h.update(v);
    else if (Array.isArray(v)) for (const x of v) h.update(Buffer.isBuffer(x) || typeof x === 'string' ? x : JSON.stringify(x));
    else h.update(JSON.stringify(v) ?? '');
    h.update('\n');
  }
  return h.digest('hex');
}

/** Makes `kc` reuse one connection pool per set of connection settings; returns `kc`. */
export function reuseConnections(kc: KubeConfig): KubeConfig {
  if (patched.has(kc)) return kc;
  // A private method of client-node's KubeConfig; lib/kube/connections.test.ts fails if it moves.
  const target = kc as unknown as { createDispatcher?: MakeDispatcher };
  const original = target.createDispatcher;
  if (typeof original !== 'function') return kc;
  patched.add(kc);
  const agents = new Map<string, Closable | undefined>();
  target.createDispatcher = (cluster, agentOptions) => {
    const key = settingsKey(cluster, agentOptions);
    if (agents.has(key)) return agents.get(key);
    const made = original.call(kc, cluster, agentOptions);
    agents.set(key, made);
    if (agents.size > MAX_AGENTS) {
      const [oldKey, old] = agents.entries().next().value!;
      agents.delete(oldKey);
      // close() lets requests in flight on it finish, then ends its idle connections.
      void old?.close?.().catch(() => {});
    }
    return made;
  };
  return kc;
}
