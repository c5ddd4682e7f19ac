/**
 * Test fixtures on the cluster side, written with the admin identity the way Felis's operator or
 * API would: MinecraftServers in a given state, PVCs, game Pods, holder Jobs.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type V1Job } from '@kubernetes/client-node';
import type { ClusterHarness } from '../../cluster/harness.ts';
import { jobFinished } from '../../lib/kube/job-facts.ts';
import { worldClaim } from '../../lib/maintenance/contracts.ts';
import { type FelisServerShape, felisGamePodLabels, felisServer } from '../../lib/testing/felis-fixtures.ts';

const mc = { group: 'felis.lolicon.best', version: 'v1alpha1', namespace: 'minecraft', plural: 'minecraftservers' };
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export interface ServerState {
  desiredState?: string;
  phase?: string;
  ready?: boolean;
  annotations?: Record<string, string | null>;
}

export const STOPPED: ServerState = { desiredState: 'Stopped', phase: 'Stopped', ready: false };
export const RUNNING: ServerState = { desiredState: 'Running', phase: 'Running', ready: true };

export function admin(cluster: ClusterHarness) {
  const kc = cluster.kubeConfig(cluster.adminToken);
  return { custom: kc.makeApiClient(CustomObjectsApi), core: kc.makeApiClient(CoreV1Api), batch: kc.makeApiClient(BatchV1Api) };
}

export async function createServer(cluster: ClusterHarness, name: string, state: ServerState = STOPPED, withVolume = true): Promise<void> {
  const a = admin(cluster);
  await a.custom.createNamespacedCustomObject({
    ...mc,
    body: { apiVersion: 'felis.lolicon.best/v1alpha1', kind: 'MinecraftServer', metadata: { name }, spec: { desiredState: state.desiredState ?? 'Stopped' } },
  });
  await setServer(cluster, name, state);
  if (withVolume) {
    await a.core.createNamespacedPersistentVolumeClaim({
      namespace: 'minecraft',
      body: { metadata: { name: `world-${name}-0` }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    });
  }
}

/** Sets spec.desiredState, annotations (null removes) and status, as the operator would. */
export async function setServer(cluster: ClusterHarness, name: string, state: ServerState): Promise<void> {
  const a = admin(cluster);
  const meta = state.annotations ? { metadata: { annotations: state.annotations } } : {};
  if (state.desiredState !== undefined || state.annotations) {
    await a.custom.patchNamespacedCustomObject({ ...mc, name, body: { ...meta, ...(state.desiredState !== undefined ? { spec: { desiredState: state.desiredState } } : {}) } }, merge);
  }
  if (state.phase !== undefined || state.ready !== undefined) {
    await a.custom.patchNamespacedCustomObjectStatus({ ...mc, name, body: { status: { phase: state.phase, ready: state.ready } } }, merge);
  }
}

export async function getServer(cluster: ClusterHarness, name: string): Promise<{ metadata: { annotations?: Record<string, string>; resourceVersion: string }; spec: { desiredState?: string } }> {
  return (await admin(cluster).custom.getNamespacedCustomObject({ ...mc, name })) as never;
}

/** A Job as Felis's backup/restore executors label it, running a host command in the embedded kubelet. */
export function holderJob(name: string, server: string, managedBy: string, command: string[], extraLabels: Record<string, string> = {}, annotations?: Record<string, string>): V1Job {
  const labels = { 'app.kubernetes.io/managed-by': managedBy, 'felis.lolicon.best/server': server, ...extraLabels };
  return {
    metadata: { name, labels, ...(annotations ? { annotations } : {}) },
    spec: {
      backoffLimit: 0,
      ttlSecondsAfterFinished: 600,
      template: { metadata: { labels }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'felis-test/holder', command }] } },
    },
  };
}

export async function createJob(cluster: ClusterHarness, job: V1Job): Promise<void> {
  await admin(cluster).batch.createNamespacedJob({ namespace: 'minecraft', body: job });
}

/**
 * A MinecraftServer exactly as Felis's operator leaves one (its spec fields, status written through
 * the status subresource), with its world claim at `spec.storage.claimName` when given.
 */
export async function createFelisServer(cluster: ClusterHarness, name: string, shape: FelisServerShape): Promise<string> {
  const a = admin(cluster);
  const { status, ...body } = felisServer(name, shape);
  await a.custom.createNamespacedCustomObject({ ...mc, body });
  await a.custom.patchNamespacedCustomObjectStatus({ ...mc, name, body: { status } }, merge);
  const claim = worldClaim(body, name);
  await a.core.createNamespacedPersistentVolumeClaim({
    namespace: 'minecraft',
    body: { metadata: { name: claim }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
  });
  return claim;
}

const HOLD_FINALIZER = 'felis-test.example/hold';

/**
 * A game Pod with Felis's operator labels, left terminating: deleted, but held by a finalizer, so
 * it carries deletionTimestamp as a Pod still saving the world on its way down does. Returns the
 * function that lets it go.
 */
export async function terminatingGamePod(cluster: ClusterHarness, server: string): Promise<() => Promise<void>> {
  const a = admin(cluster);
  const name = `${server}-0`;
  await a.core.createNamespacedPod({
    namespace: 'minecraft',
    body: {
      metadata: { name, labels: felisGamePodLabels(server), finalizers: [HOLD_FINALIZER] },
      spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'minecraft', image: 'felis-test/game', command: ['sh', '-c', 'sleep 30'] }] },
    },
  });
  await a.core.deleteNamespacedPod({ namespace: 'minecraft', name });
  const pod = await a.core.readNamespacedPod({ namespace: 'minecraft', name });
  if (!pod.metadata?.deletionTimestamp) throw new Error('the game Pod is not terminating');
  return async () => {
    await a.core.patchNamespacedPod({ namespace: 'minecraft', name, body: { metadata: { finalizers: null } } }, merge);
  };
}

/** A restore Job template whose Job runs 5 s: long enough to hold the world while a test looks. */
const RESTORE_TEMPLATE =
  'apiVersion: batch/v1\nkind: Job\nspec:\n  backoffLimit: 0\n  ttlSecondsAfterFinished: 600\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: restore\n          image: felis-test/restore\n          command: ["sh", "-c", "sleep 5"]\n';

/**
 * A restore Job template (by default the 5-second one above) in a temp file. The stack may read it
 * at any time while it runs, so the file stays until the test process exits.
 */
export function restoreTemplateFile(yaml: string = RESTORE_TEMPLATE): string {
  const dir = mkdtempSync(join(tmpdir(), 'felis-tpl-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'restore.yaml');
  writeFileSync(file, yaml);
  return file;
}

/**
 * A stopped server and its finished safety-backup Job `snap-<server>`, whose restore chain waits
 * to be settled (the Job is kept: no TTL). Fails if the Job does not finish within `timeoutMs`.
 */
export async function createPendingChain(cluster: ClusterHarness, server: string, timeoutMs: number): Promise<V1Job> {
  await createServer(cluster, server, STOPPED);
  const name = `snap-${server}`;
  const snapshot = holderJob(
    name,
    server,
    'felis-backup',
    ['true'],
    { 'felis.lolicon.best/then-restore': 'pending' },
    {
      'felis.lolicon.best/restore-ref': `s3://backups/${server}/7.tar.zst`,
      'felis.lolicon.best/restore-backup-id': '7',
    },
  );
  delete snapshot.spec!.ttlSecondsAfterFinished;
  await createJob(cluster, snapshot);
  const batch = admin(cluster).batch;
  const end = Date.now() + timeoutMs;
  for (;;) {
    const job = await batch.readNamespacedJob({ name, namespace: 'minecraft' });
    if (jobFinished(job)) return job;
    if (Date.now() > end) throw new Error(`the backup Job ${name} did not finish within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
