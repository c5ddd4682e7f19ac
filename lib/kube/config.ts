/**
 * Where the functions find Kubernetes: the in-cluster service account when running in a Pod,
 * else KUBECONFIG (or ~/.kube/config). The local `npm start` passes its own KubeConfig instead.
 * @module
 */
import { KubeConfig } from '@kubernetes/client-node';

export function loadKubeConfig(env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const kc = new KubeConfig();
  if (env.KUBERNETES_SERVICE_HOST && !env.KUBECONFIG) kc.loadFromCluster();
  else kc.loadFromDefault();
  return kc;
}

/** The namespace the game servers live in: FELIS_NAMESPACE, else the context's, else `minecraft`. */
export function namespaceFrom(kc: KubeConfig, env: NodeJS.ProcessEnv = process.env): string {
  if (env.FELIS_NAMESPACE) return env.FELIS_NAMESPACE;
  const ctx = kc.getContextObject(kc.getCurrentContext());
  return ctx?.namespace || 'minecraft';
}
