/**
 * What a Kubernetes Job's status says, in one place: whether it is finished and how it ended, and
 * whether a Pod's container has terminated. The Job controller sets `SuccessCriteriaMet` /
 * `FailureTarget` as soon as the outcome is decided and `Complete` / `Failed` once the Pods are
 * gone; either of a pair is enough to know the outcome. Pure.
 * @module
 */
import type { V1ContainerStateTerminated, V1Job, V1Pod } from '@kubernetes/client-node';

export type JobOutcome = 'running' | 'succeeded' | 'failed';

const SUCCEEDED = new Set(['Complete', 'SuccessCriteriaMet']);
const FAILED = new Set(['Failed', 'FailureTarget']);

/** The decided outcome of a Job from its True conditions, in the order they are listed. */
export function jobOutcome(job: V1Job): JobOutcome {
  for (const c of job.status?.conditions ?? []) {
    if (c.status !== 'True') continue;
    if (SUCCEEDED.has(c.type)) return 'succeeded';
    if (FAILED.has(c.type)) return 'failed';
  }
  return 'running';
}

/** A Job is finished once any terminal condition is True. */
export function jobFinished(job: V1Job): boolean {
  return jobOutcome(job) !== 'running';
}

/** The Job that controls a Pod (its owner marked `controller`), by name. */
export function controllerJob(pod: V1Pod): string | undefined {
  return pod.metadata?.ownerReferences?.find((r) => r.controller && r.kind === 'Job')?.name;
}

/**
 * The address of a Pod that can take a call now: Running, `container` started and not ended, and
 * an IP assigned. Undefined for any other Pod.
 */
export function callableAddress(pod: V1Pod, container: string): string | undefined {
  const running = pod.status?.containerStatuses?.find((c) => c.name === container)?.state?.running;
  return pod.status?.phase === 'Running' && running && pod.status.podIP ? pod.status.podIP : undefined;
}

/** The terminated state of one container of a Pod, or undefined while it has not terminated. */
export function containerTermination(pod: V1Pod, container: string): V1ContainerStateTerminated | undefined {
  return pod.status?.containerStatuses?.find((c) => c.name === container)?.state?.terminated;
}

/** `exit 137 (SIGKILL), reason OOMKilled`: a terminated container, for a log line. */
export function describeTermination(t: V1ContainerStateTerminated | undefined): string {
  if (!t) return 'the container has not terminated';
  const parts = [`exit ${t.exitCode}`];
  if (t.signal) parts.push(`signal ${t.signal}`);
  else if (t.exitCode > 128 && t.exitCode < 160) parts.push(`(signal ${t.exitCode - 128})`);
  if (t.reason) parts.push(`reason ${t.reason}`);
  if (t.message) parts.push(`message ${JSON.stringify(t.message.slice(0, 200))}`);
  return parts.join(', ');
}
