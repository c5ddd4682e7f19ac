/**
 * What the node does when it comes back after the service stopped or crashed, before the API
 * server answers anyone: every Pod process recorded in the journal that still runs is ended (its
 * process group), and every Pod of this node that had started a container and is not finished is
 * marked Failed with reason `NodeRestarted`. A Pod cannot be resumed (its process and its log are
 * gone), and an op that may have half-run must not be run a second time; the Job controller then
 * sees a failed Pod and settles the Job, and the holder rules keep the world held until it has.
 *
 * Pods that were bound but had not started a container yet, and Pods not yet scheduled, are left
 * alone: the kubelet runs them as usual. A Pod being deleted has its deletion finished.
 *
 * @module
 */

import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type Registry, rfc3339 } from '../registry.ts';
import type { KObject } from '../store.ts';
import type { ProcessJournal } from './journal.ts';
import { endRecordedProcesses } from './processes.ts';

type Any = any;
type Log = { info(...a: unknown[]): void; warn(...a: unknown[]): void };

export const NODE_RESTARTED = 'NodeRestarted';

export interface NodeRestartResult {
  /** Pids of the previous run's processes that were still alive and were killed. */
  killed: number[];
  /** Pids that did not go away within the wait (should be empty). */
  survivors: number[];
  /** `namespace/name` of the Pods marked Failed. */
  failedPods: string[];
}

const terminal = (p: KObject) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

/** A container was started (or is being started): its process may have run, even briefly. */
function startedAContainer(pod: KObject): boolean {
  return (pod.status?.containerStatuses ?? []).some((c: Any) => c?.containerID || c?.state?.running || c?.state?.terminated || c?.lastState?.terminated);
}

/** The status of a Pod whose node restarted under it: Failed, each unfinished container 137. */
export function nodeRestartedStatus(pod: KObject, now = rfc3339()): Any {
  const status: Any = JSON.parse(JSON.stringify(pod.status ?? {}));
  status.phase = 'Failed';
  status.reason = NODE_RESTARTED;
  status.message = 'The node restarted while the Pod ran; its containers were ended and are not restarted';
  status.containerStatuses = (status.containerStatuses ?? []).map((c: Any) => {
    if (c?.state?.terminated) return { ...c, ready: false, started: false };
    return {
      ...c,
      ready: false,
      started: false,
      state: {
        terminated: {
          exitCode: 137,
          reason: 'ContainerStatusUnknown',
          message: 'The container could not be located when the node restarted',
          startedAt: c?.state?.running?.startedAt ?? null,
          finishedAt: now,
          ...(c?.containerID ? { containerID: c.containerID } : {}),
        },
      },
    };
  });
  status.conditions = (status.conditions ?? []).map((c: Any) =>
    c?.type === 'Ready' || c?.type === 'ContainersReady' || c?.type === 'PodReadyToStartContainers'
      ? { ...c, status: 'False', reason: c.type === 'PodReadyToStartContainers' ? undefined : 'PodFailed', lastTransitionTime: now }
      : c,
  );
  return status;
}

/**
 * Ends the previous run's Pod processes and marks their Pods failed. Call it after the store is
 * loaded and before the kubelet, the controllers and the API server start.
 */
export async function recoverNode(registry: Registry, journal: ProcessJournal, nodeName: string, logger: Log): Promise<NodeRestartResult> {
  const records = journal.list();
  const { killed, survivors } = await endRecordedProcesses(records);
  if (killed.length) logger.warn({ pids: killed }, 'node restart: ended Pod processes left by the previous run');
  if (survivors.length) logger.warn({ pids: survivors }, 'node restart: Pod processes did not end after SIGKILL');
  const recorded = new Set(records.map((r) => r.podUid));
  const podsDef = registry.byResource('pods');
  const failedPods: string[] = [];
  for (const pod of registry.store.list('pods')) {
    if (pod.spec?.nodeName !== nodeName) continue;
    const ns = pod.metadata.namespace!;
    const name = pod.metadata.name!;
    const uid = pod.metadata.uid!;
    if (!terminal(pod) && (recorded.has(uid) || startedAContainer(pod) || pod.metadata.deletionTimestamp)) {
      registry.update(
        podsDef,
        ns,
        name,
        (cur) => {
          cur.status = nodeRestartedStatus(cur);
          return cur;
        },
        { subresource: 'status', manager: 'kubelet' },
      );
      failedPods.push(`${ns}/${name}`);
    }
    if (pod.metadata.deletionTimestamp) {
      // Its containers are stopped now: finish the deletion the previous run had begun.
      try {
        registry.delete(podsDef, ns, name, { gracePeriodSeconds: 0, preconditions: { uid } });
      } catch (err) {
        const code = (err as { code?: number }).code;
        if (code !== 404 && code !== 409) throw err;
      }
    }
  }
  if (failedPods.length) logger.warn({ pods: failedPods }, `node restart: Pods marked Failed (${NODE_RESTARTED})`);
  journal.clear();
  return { killed, survivors, failedPods };
}

/**
 * Removes the scratch folders (`emptyDir` volumes under `<dataDir>/.pods/<uid>`) of Pods that will
 * not run again: finished or gone. The previous run would have removed them had it not crashed.
 */
export function removeStalePodDirs(dataDir: string, registry: Registry): string[] {
  const root = join(dataDir, '.pods');
  let entries: string[];
  try {
    entries = readdirSync(root);
  } catch {
    return [];
  }
  const keep = new Set(
    registry.store
      .list('pods')
      .filter((p) => !terminal(p))
      .map((p) => p.metadata.uid),
  );
  const removed = entries.filter((uid) => !keep.has(uid));
  for (const uid of removed) rmSync(join(root, uid), { recursive: true, force: true });
  return removed;
}
