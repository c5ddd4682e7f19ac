/**
 * Per-Pod timing records for benchmarks, in `performance.now()` milliseconds of this process:
 * Job create received, Pod created, scheduled, container started, container exited. Looked up by
 * the `felis.lolicon.best/files-op` label value or by Pod name.
 *
 * @module
 */

export const OP_LABEL = 'felis.lolicon.best/files-op';

export interface PodRecord {
  jobCreated: number;
  podCreated: number;
  scheduled?: number;
  started?: number;
  exited?: number;
}

const MAX_RECORDS = 10_000;

export class Recorder {
  private readonly jobCreatedAt = new Map<string, number>();
  private readonly byPod = new Map<string, PodRecord>();
  private readonly byOp = new Map<string, PodRecord>();

  /** When the create request of this Job (by uid) was received. */
  jobCreated(jobUid: string, t: number): void {
    this.jobCreatedAt.set(jobUid, t);
    if (this.jobCreatedAt.size > MAX_RECORDS) this.jobCreatedAt.delete(this.jobCreatedAt.keys().next().value!);
  }

  podCreated(pod: { name: string; labels?: Record<string, string>; jobUid?: string }, t: number): void {
    const rec: PodRecord = { jobCreated: (pod.jobUid ? this.jobCreatedAt.get(pod.jobUid) : undefined) ?? t, podCreated: t };
    this.byPod.set(pod.name, rec);
    const op = pod.labels?.[OP_LABEL];
    if (op) this.byOp.set(op, rec);
    if (this.byPod.size > MAX_RECORDS) this.byPod.delete(this.byPod.keys().next().value!);
    if (this.byOp.size > MAX_RECORDS) this.byOp.delete(this.byOp.keys().next().value!);
  }

  mark(podName: string, what: 'scheduled' | 'started' | 'exited', t: number): void {
    const rec = this.byPod.get(podName);
    if (rec && rec[what] === undefined) rec[what] = t;
  }

  /** The record of the latest Pod with this op label, or of the Pod with this name. */
  get(opIdOrPod: string): PodRecord | undefined {
    const r = this.byOp.get(opIdOrPod) ?? this.byPod.get(opIdOrPod);
    return r ? { ...r } : undefined;
  }
}
