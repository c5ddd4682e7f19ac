/**
 * What the end-to-end tests need from a cluster, whichever one is behind it: the embedded
 * emulation (`startCluster`, `npm test`) or the real v1.20 control plane of the cluster tier
 * (`startRealCluster`, `npm run test:cluster`). `EmbeddedCluster` satisfies it as it is.
 *
 * @module
 */

import type { KubeConfig, V1JobCondition } from '@kubernetes/client-node';
import type { PodBehaviour, RequestFault } from './faults.ts';
import type { PodRecord } from './records.ts';

export interface ClusterHarness {
  /** Where client-node talks to: the embedded server, or the counting proxy before the real one. */
  url: string;
  adminToken: string;
  /** A token for `system:serviceaccount:<ns>:<sa>` (the real tier has only minecraft/felis-world). */
  tokenFor(namespace: string, serviceAccount: string): string;
  /** A client-node KubeConfig: server = url, the token, namespace `minecraft`. */
  kubeConfig(token: string): KubeConfig;
  kubeconfigYaml(token: string): string;
  faults: {
    /** Fail the next matching API request (counted like any other). */
    failNext(m: RequestFault): void;
    /** Kubelet-side behaviour of matching Pods. */
    pod(selector: string, b: PodBehaviour): void;
    clear(): void;
  };
  /**
   * A new token for ServiceAccount `<namespace>/<serviceAccount>` minted for `audiences`, as
   * `kubectl create token --audience` does (the account is created when missing).
   */
  requestToken(namespace: string, serviceAccount: string, audiences: string[]): Promise<string>;
  /** Creates or replaces the RBAC objects (and ServiceAccounts) of a manifest; others stay. */
  applyRbac(yaml: string): Promise<void>;
  /** Deletes one RBAC object (namespace for Role and RoleBinding). */
  deleteRbac(kind: 'Role' | 'RoleBinding' | 'ClusterRole' | 'ClusterRoleBinding', name: string, namespace?: string): Promise<void>;
  /** Replace the function identity's Role with the one in this manifest. */
  setRbacManifest(path: string): Promise<void>;
  /** Request counts by `<verb> <resource>`, for one user or all. */
  counts(user?: string): Record<string, number>;
  resetCounts(): void;
  podRecord(opId: string): PodRecord | undefined;
  /**
   * Sets a Job's status conditions (leniently), and they stay. The real tier writes `jobs/status`
   * until the Job controller's own status writes no longer drop them, so await it.
   */
  setJobConditions(namespace: string, name: string, conditions: V1JobCondition[]): void | Promise<void>;
  close(): Promise<void>;
}
