/**
 * client-node, loaded on first use. It is most of a function bundle (megabytes of generated API
 * classes), and a Knative service woken from zero should answer its probe before paying for it:
 * the function bundles keep it in a chunk of its own that only this dynamic import reaches.
 * @module
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { configureFromEnv } from './config-rule.ts';
import { reuseConnections } from './connections.ts';

export type ClientNode = typeof import('./client-parts.ts');

let loading: Promise<ClientNode> | undefined;

/** The client-node module; one import however many callers ask. */
export function loadClientNode(): Promise<ClientNode> {
  return (loading ??= import('./client-parts.ts'));
}

/**
 * Where the functions find Kubernetes: the in-cluster service account when running in a Pod,
 * else KUBECONFIG (or ~/.kube/config) — `configureFromEnv` — without a static import of client-node.
 */
export async function kubeConfigFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<KubeConfig> {
  const { KubeConfig } = await loadClientNode();
  return configureFromEnv(new KubeConfig(), env);
}

/** Runs `make` once, on first call, and shares its promise; a failure is retried on the next call. */
export function once<T>(make: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () =>
    (p ??= make().catch((err: unknown) => {
      p = undefined;
      throw err;
    }));
}

/**
 * API clients over `kc`, made by `make` on first call (see `once`) with the config's connections
 * kept alive (./connections.ts); client-node itself and that config come along for the callers'
 * own requests.
 */
export function lazyClients<T extends object>(kc: KubeConfig | Promise<KubeConfig>, make: (k: ClientNode, kc: KubeConfig) => T): () => Promise<T & { k: ClientNode; kc: KubeConfig }> {
  return once(async () => {
    const [k, loaded] = await Promise.all([loadClientNode(), kc]);
    const config = reuseConnections(loaded);
    return { ...make(k, config), k, kc: config };
  });
}
