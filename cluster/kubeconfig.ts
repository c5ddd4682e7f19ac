/**
 * A client-node KubeConfig (and the same as kubeconfig YAML) for one server and bearer token: what
 * the embedded cluster, the cluster tier and the benchmark hand to the code under test.
 *
 * @module
 */
import { KubeConfig } from '@kubernetes/client-node';
import { dump } from 'js-yaml';

export function tokenKubeConfig(server: string, token: string, name: string, namespace = 'minecraft'): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name, server, skipTLSVerify: true }],
    users: [{ name: `${name}-user`, token }],
    contexts: [{ name, cluster: name, user: `${name}-user`, namespace }],
    currentContext: name,
  });
  return kc;
}

export function tokenKubeconfigYaml(server: string, token: string, name: string, namespace = 'minecraft'): string {
  return dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: `${name}-user`, user: { token } }],
    contexts: [{ name, context: { cluster: name, user: `${name}-user`, namespace } }],
    'current-context': name,
  });
}
