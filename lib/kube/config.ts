/**
 * Where the functions find Kubernetes: the in-cluster service account when running in a Pod,
 * else KUBECONFIG (or ~/.kube/config). The local `npm start` passes its own KubeConfig instead.
 * @module
 */
import { KubeConfig } from '@kubernetes/client-node';
import { configureFromEnv } from './config-rule.ts';

export function loadKubeConfig(env: NodeJS.ProcessEnv = process.env): KubeConfig {
  return configureFromEnv(new KubeConfig(), env);
}
