/**
 * Objects shaped the way Felis's operator writes them, for tests on both sides of the cluster
 * boundary: a MinecraftServer with its world claim named in `spec.storage.claimName` and the
 * node it last ran on in `status.nodeName`, and a game Pod with the operator's own labels.
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { MinecraftServer } from '../kube/servers.ts';

export interface FelisServerShape {
  desiredState?: 'Running' | 'Stopped';
  phase?: string;
  ready?: boolean;
  claimName?: string;
  nodeName?: string;
  statusNodeName?: string;
  annotations?: Record<string, string>;
}

/** A stopped server as Felis leaves it, with the fields Felis's CRD has beside the ones we read. */
export function felisServer(name: string, s: FelisServerShape = {}): MinecraftServer & { spec: Record<string, unknown> } {
  return {
    apiVersion: 'felis.lolicon.best/v1alpha1',
    kind: 'MinecraftServer',
    metadata: { name, labels: { 'felis.lolicon.best/managed-by': 'felis-operator' }, ...(s.annotations ? { annotations: { ...s.annotations } } : {}) },
    spec: {
      subdomain: name,
      displayName: name,
      image: 'ghcr.io/felismc/paper:1.21',
      javaMemory: '2G',
      autostartPolicy: 'ownerOnly',
      desiredState: s.desiredState ?? 'Stopped',
      ...(s.nodeName ? { nodeName: s.nodeName } : {}),
      storage: { size: '10Gi', ...(s.claimName ? { claimName: s.claimName } : {}) },
      idle: { autoStopEnabled: true, emptySecondsBeforeStop: 600 },
      rcon: { enabled: true, port: 25575 },
    },
    status: { phase: s.phase ?? 'Stopped', ready: s.ready ?? false, ...(s.statusNodeName ? { nodeName: s.statusNodeName } : {}) },
  };
}

/** The labels Felis's operator puts on a game Pod (a StatefulSet Pod `<server>-0`). */
export function felisGamePodLabels(server: string): Record<string, string> {
  return {
    'felis.lolicon.best/server': server,
    'felis.lolicon.best/component': 'server',
    'felis.lolicon.best/managed-by': 'felis-operator',
  };
}

/** A game Pod; `terminating` sets deletionTimestamp, as while it saves the world on its way down. */
export function felisGamePod(server: string, opts: { terminating?: boolean } = {}): V1Pod {
  return {
    metadata: {
      name: `${server}-0`,
      labels: felisGamePodLabels(server),
      ...(opts.terminating ? { deletionTimestamp: new Date(), deletionGracePeriodSeconds: 300 } : {}),
    },
    spec: { containers: [{ name: 'minecraft', image: 'ghcr.io/felismc/paper:1.21' }] },
  };
}
