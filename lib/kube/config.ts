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
