/**
 * The one rule for where Kubernetes is: inside a Pod (KUBERNETES_SERVICE_HOST) without an explicit
 * KUBECONFIG, the in-cluster service account; otherwise KUBECONFIG or ~/.kube/config. Kept apart
 * (types only) so the lazy client loader and the eager loader share it without loading client-node.
 * @module
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { reuseConnections } from './connections.ts';

export function configureFromEnv(kc: KubeConfig, env: NodeJS.ProcessEnv): KubeConfig {
  if (env.KUBERNETES_SERVICE_HOST && !env.KUBECONFIG) kc.loadFromCluster();
  else kc.loadFromDefault();
  return reuseConnections(kc);
}
