/**
 * A client-node KubeConfig (and the same as kubeconfig YAML) for one server and bearer token: what
 * the embedded cluster, the cluster tier and the benchmark hand to the code under test. With `caPem`
 * (the embedded cluster's CA) the server's certificate is verified against it; without one (the
 * cluster tier's plain-HTTP counting proxy) TLS verification is skipped.
 *
 * @module
 */
import { KubeConfig } from '@kubernetes/client-node';
import { dump } from 'js-yaml';

export function tokenKubeConfig(server: string, token: string, name: string, namespace = 'minecraft', caPem?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [caPem ? { name, server, caData: Buffer.from(caPem).toString('base64'), skipTLSVerify: false } : { name, server, skipTLSVerify: true }],
    users: [{ name: `${name}-user`, token }],
    contexts: [{ name, cluster: name, user: `${name}-user`, namespace }],
    currentContext: name,
  });
  return kc;
}

export function tokenKubeconfigYaml(server: string, token: string, name: string, namespace = 'minecraft', caPem?: string): string {
  return dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: caPem ? { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } : { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: `${name}-user`, user: { token } }],
    contexts: [{ name, context: { cluster: name, user: `${name}-user`, namespace } }],
    'current-context': name,
  });
}
