/**
 * The Job controller with current (≥1.31) semantics, for NonIndexed Jobs: one Pod per needed
 * completion named `<job>-<5 chars>` with the template's labels, an ownerReference and the
 * `batch.kubernetes.io/job-tracking` finalizer; `status.active/ready/terminating/succeeded/failed`
 * and `startTime`; `SuccessCriteriaMet` then `Complete` (with `completionTime`), or `FailureTarget`
 * then `Failed` for `BackoffLimitExceeded` and `DeadlineExceeded` (the terminal condition is added
 * once no Pod is left terminating); retries with exponential back-off; and the TTL-after-finished
 * controller.
 *
 * @module
 */

import { JOB_TRACKING_FINALIZER } from './kinds/job.ts';
import { WorkQueue } from './queue.ts';
import type { Recorder } from './records.ts';
import { type Registry, rfc3339 } from './registry.ts';
import type { KObject, Store, StoreEvent } from './store.ts';

type Any = any;
type Log = { info(...a: unknown[]): void; warn(...a: unknown[]): void };

export interface JobCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
}

export const REASON_COMPLETIONS_REACHED = 'CompletionsReached';
export const MSG_COMPLETIONS_REACHED = 'Reached expected number of succeeded pods';
export const REASON_BACKOFF_LIMIT = 'BackoffLimitExceeded';
export const MSG_BACKOFF_LIMIT = 'Job has reached the specified backoff limit';
export const REASON_DEADLINE = 'DeadlineExceeded';
export const MSG_DEADLINE = 'Job was active longer than specified deadline';

const DEFAULT_BACKOFF_MS = 10_000;
const MAX_BACKOFF_MS = 6 * 60_000;

export interface JobControllerOptions {
  /** Multiplies `ttlSecondsAfterFinished`. */
  ttlScale: number;
  /** Multiplies the pod-failure back-off (10 s doubling, at most 6 min). */
  backoffScale: number;
  recorder: Recorder;
  logger: Log;
}

function isTrue(conds: JobCondition[] | undefined, type: string): JobCondition | undefined {
  return (conds ?? []).find((c) => c.type === type && c.status === 'True');
}

export function isJobFinished(job: KObject): boolean {
  return !!(isTrue(job.status?.conditions, 'Complete') || isTrue(job.status?.conditions, 'Failed'));
}

function controllerUid(pod: KObject): string | undefined {
  return (pod.metadata.ownerReferences ?? []).find((r) => r.controller && r.kind === 'Job')?.uid;
}

const terminal = (p: KObject) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
/** `isPodFailed`: Failed, or deleted before it succeeded (an orphan may never reach Failed). */
const failed = (p: KObject) => p.status?.phase === 'Failed' || (!!p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded');
const ready = (p: KObject) => (p.status?.conditions ?? []).some((c: Any) => c.type === 'Ready' && c.status === 'True');

export class JobController {
  private readonly registry: Registry;
  private readonly store: Store;
  private readonly opts: JobControllerOptions;
  private readonly queue: WorkQueue;
  private unsubscribe?: () => void;
  /** Pods already counted in a Job's succeeded/failed, by Job uid. */
  private readonly counted = new Map<string, Set<string>>();
  /** Precise start and finish instants (ms) by Job uid; the API fields have whole seconds. */
  private readonly startedAt = new Map<string, number>();
  private readonly finishedAt = new Map<string, number>();
  private readonly lastFailureAt = new Map<string, number>();
  /** Job uid → `namespace/name`, to map a Pod's owner to its Job without a scan. */
  private readonly jobKeys = new Map<string, string>();

  constructor(registry: Registry, opts: JobControllerOptions) {
    this.registry = registry;
    this.store = registry.store;
    this.opts = opts;
    this.queue = new WorkQueue(
      (k) => this.sync(k),
      (k, err) => opts.logger.warn({ job: k, err: String(err) }, 'job sync failed; retrying'),
    );
  }

  start(): void {
    this.unsubscribe = this.store.subscribe((e) => this.onEvent(e));
    for (const j of this.store.list('jobs')) {
      this.jobKeys.set(j.metadata.uid!, `${j.metadata.namespace}/${j.metadata.name}`);
      this.queue.add(`${j.metadata.namespace}/${j.metadata.name}`);
    }
  }

  stop(): void {
    this.unsubscribe?.();
    this.queue.stop();
  }

  /** Tests: a controller that has fallen behind. Syncs wait (Pods, status, conditions) until resume(). */
  private paused = false;
  private readonly deferred = new Set<string>();
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
    for (const k of this.deferred) this.queue.add(k);
    this.deferred.clear();
  }

  private onEvent(e: StoreEvent): void {
    const m = e.object.metadata;
    if (e.resource === 'jobs') {
      if (e.type === 'DELETED') {
        this.jobKeys.delete(m.uid!);
        this.counted.delete(m.uid!);
        this.startedAt.delete(m.uid!);
        this.finishedAt.delete(m.uid!);
        this.lastFailureAt.delete(m.uid!);
        // Pods left behind keep their tracking finalizer until we drop it.
        this.queue.add(`orphans/${m.namespace}`);
      } else {
        this.jobKeys.set(m.uid!, `${m.namespace}/${m.name}`);
        this.queue.add(`${m.namespace}/${m.name}`);
      }
    } else if (e.resource === 'pods') {
      const uid = controllerUid(e.object);
      if (!uid) {
        if ((m.finalizers ?? []).includes(JOB_TRACKING_FINALIZER)) this.queue.add(`orphans/${m.namespace}`);
        return;
      }
      const jobKey = this.jobKeys.get(uid);
      if (jobKey) this.queue.add(jobKey);
      else this.queue.add(`orphans/${m.namespace}`);
    }
  }

  /** Sets a Job's conditions directly (tests: a finished restore Job). Lenient: no status validation. */
  setConditions(ns: string, name: string, conditions: JobCondition[]): void {
    const def = this.registry.byResource('jobs');
    const now = rfc3339();
    const job = this.registry.update(
      def,
      ns,
      name,
      (cur) => {
        const st = (cur.status ??= {});
        st.conditions = conditions.map((c) => ({
          ...c,
          status: c.status ?? 'True',
          lastProbeTime: c.lastProbeTime ?? now,
          lastTransitionTime: c.lastTransitionTime ?? now,
        }));
        if (isTrue(st.conditions, 'Complete') || isTrue(st.conditions, 'Failed')) {
          st.startTime ??= now;
          if (isTrue(st.conditions, 'Complete')) st.completionTime ??= now;
          delete st.active;
          st.ready = 0;
          st.terminating = 0;
        }
        return cur;
      },
      { subresource: 'status', manager: 'embedded-cluster-test' },
    );
    if (isJobFinished(job)) this.finishedAt.set(job.metadata.uid!, Date.now());
  }

  private removeTrackingFinalizer(pod: KObject): void {
    this.registry.removeFinalizer('pods', pod, JOB_TRACKING_FINALIZER, 'kube-controller-manager');
  }

  private deletePod(pod: KObject): void {
    try {
      this.registry.delete(this.registry.byResource('pods'), pod.metadata.namespace!, pod.metadata.name!, {
        preconditions: { uid: pod.metadata.uid },
      });
    } catch (err) {
      const code = (err as { code?: number }).code;
      if (code !== 404 && code !== 409) throw err;
    }
  }

  private sync(key: string): void {
    if (this.paused) {
      this.deferred.add(key);
      return;
    }
    if (key.startsWith('orphans/')) {
      const ns = key.slice('orphans/'.length);
      const jobUids = new Set(this.store.list('jobs', ns).map((j) => j.metadata.uid));
      for (const p of this.store.list('pods', ns)) {
        const uid = controllerUid(p);
        if ((p.metadata.finalizers ?? []).includes(JOB_TRACKING_FINALIZER) && (!uid || !jobUids.has(uid))) {
          this.removeTrackingFinalizer(p);
        }
      }
      return;
    }
    const [ns, name] = key.split('/') as [string, string];
    const job = this.store.get('jobs', ns, name);
    if (!job) return;
    this.syncJob(job);
  }

  private condition(type: string, reason: string, message: string, now: string): JobCondition {
    return { type, status: 'True', lastProbeTime: now, lastTransitionTime: now, reason, message };
  }

  private syncJob(job: KObject): void {
    const ns = job.metadata.namespace!;
    const uid = job.metadata.uid!;
    const key = `${ns}/${job.metadata.name}`;
    const spec = job.spec ?? {};
    const now = Date.now();
    const nowStr = rfc3339(now);
    const pods = this.store.select('pods', ns, (p) => controllerUid(p as KObject) === uid);
    const status: Any = JSON.parse(JSON.stringify(job.status ?? {}));
    const before = JSON.stringify(status);
    const conds: JobCondition[] = (status.conditions ??= []);

    // Count finished Pods once, then release their tracking finalizer.
    let counted = this.counted.get(uid);
    if (!counted) {
      // First sight of this Job (a new one, or one loaded after a restart): a finished Pod that has
      // lost its tracking finalizer was counted before, since the count and the release commit together.
      counted = new Set(pods.filter((p) => (p.status?.phase === 'Succeeded' || failed(p)) && !(p.metadata.finalizers ?? []).includes(JOB_TRACKING_FINALIZER)).map((p) => p.metadata.uid!));
      this.counted.set(uid, counted);
    }
    status.succeeded ??= 0;
    status.failed ??= 0;
    const toRelease: KObject[] = [];
    for (const p of pods) {
      const pu = p.metadata.uid!;
      if (p.status?.phase === 'Succeeded' || failed(p)) {
        if (!counted.has(pu)) {
          counted.add(pu);
          if (p.status?.phase === 'Succeeded') status.succeeded++;
          else {
            status.failed++;
            this.lastFailureAt.set(uid, now);
          }
        }
        // A deleted Pod is released once the kubelet has stopped it (it is terminal then).
        if (terminal(p) || !p.spec?.nodeName) toRelease.push(p);
      }
    }
    if (status.succeeded === 0) delete status.succeeded;
    if (status.failed === 0) delete status.failed;

    const active = pods.filter((p) => !terminal(p) && !p.metadata.deletionTimestamp);
    const terminating = pods.filter((p) => !terminal(p) && p.metadata.deletionTimestamp);

    if (isJobFinished(job) || job.metadata.deletionTimestamp) {
      // A finished Job, or one being deleted, manages no Pods any more: it only lets them go.
      for (const p of pods) if (terminal(p) || p.metadata.deletionTimestamp) this.removeTrackingFinalizer(p);
      if (isJobFinished(job)) this.scheduleTtl(job);
      return;
    }

    if (spec.suspend) {
      for (const p of active) this.deletePod(p);
      status.active = 0;
      this.countAndRelease(job, status, before, toRelease);
      return;
    }

    if (!status.startTime) {
      status.startTime = nowStr;
      this.startedAt.set(uid, now);
    }
    const startMs = this.startedAt.get(uid) ?? Date.parse(status.startTime);

    let finishing = conds.find((c) => (c.type === 'FailureTarget' || c.type === 'SuccessCriteriaMet') && c.status === 'True');
    if (!finishing) {
      const succeeded = status.succeeded ?? 0;
      const completions = spec.completions;
      const backoffLimit = spec.backoffLimit ?? 6;
      const complete = completions === undefined || completions === null ? succeeded > 0 && active.length === 0 : succeeded >= completions;
      const deadlineMs = typeof spec.activeDeadlineSeconds === 'number' ? startMs + spec.activeDeadlineSeconds * 1000 : undefined;
      if (complete) {
        finishing = this.condition('SuccessCriteriaMet', REASON_COMPLETIONS_REACHED, MSG_COMPLETIONS_REACHED, nowStr);
      } else if (deadlineMs !== undefined && now >= deadlineMs) {
        finishing = this.condition('FailureTarget', REASON_DEADLINE, MSG_DEADLINE, nowStr);
      } else if ((status.failed ?? 0) > backoffLimit || this.pastBackoffLimitOnFailure(spec, active)) {
        finishing = this.condition('FailureTarget', REASON_BACKOFF_LIMIT, MSG_BACKOFF_LIMIT, nowStr);
      }
      if (finishing) conds.push(finishing);
      else if (deadlineMs !== undefined) this.queue.after(key, deadlineMs - now + 1);
    }

    if (finishing) {
      for (const p of active) this.deletePod(p);
      if (active.length === 0 && terminating.length === 0) {
        const terminalType = finishing.type === 'SuccessCriteriaMet' ? 'Complete' : 'Failed';
        conds.push(this.condition(terminalType, finishing.reason!, finishing.message!, nowStr));
        if (terminalType === 'Complete') status.completionTime = nowStr;
        this.finishedAt.set(uid, now);
      }
      status.active = 0;
      status.ready = 0;
      status.terminating = active.length + terminating.length;
    } else {
      // Keep the wanted number of Pods running.
      const parallelism = spec.parallelism ?? 1;
      const remaining = spec.completions === undefined || spec.completions === null ? parallelism : spec.completions - (status.succeeded ?? 0);
      const wanted = Math.max(0, Math.min(parallelism, remaining));
      const busy = active.length + (spec.podReplacementPolicy === 'Failed' ? terminating.length : 0);
      let created = 0;
      if (busy < wanted) {
        const failures = status.failed ?? 0;
        const lastFailure = this.lastFailureAt.get(uid);
        const delay = failures > 0 ? Math.min(DEFAULT_BACKOFF_MS * 2 ** (failures - 1), MAX_BACKOFF_MS) * this.opts.backoffScale : 0;
        const readyAt = lastFailure !== undefined ? lastFailure + delay : now;
        if (now < readyAt) {
          this.queue.after(key, readyAt - now + 1);
        } else {
          for (let i = busy; i < wanted; i++) if (this.createPod(job)) created++;
        }
      }
      status.active = active.length + created;
      status.ready = active.filter(ready).length;
      status.terminating = terminating.length;
    }
    status.uncountedTerminatedPods ??= {};
    if (conds.length === 0) delete status.conditions;
    this.countAndRelease(job, status, before, toRelease);
    const fresh = this.store.get('jobs', ns, job.metadata.name!);
    if (fresh && isJobFinished(fresh)) this.scheduleTtl(fresh);
  }

  private pastBackoffLimitOnFailure(spec: Any, active: KObject[]): boolean {
    if (spec.template?.spec?.restartPolicy !== 'OnFailure') return false;
    let restarts = 0;
    for (const p of active) for (const c of p.status?.containerStatuses ?? []) restarts += c.restartCount ?? 0;
    const limit = spec.backoffLimit ?? 6;
    return limit === 0 ? restarts > 0 : restarts >= limit;
  }

  /**
   * Writes the counts and releases the counted Pods in one commit, so that after a crash a Pod is
   * either still tracked and uncounted or released and counted, never counted twice.
   */
  private countAndRelease(job: KObject, status: Any, before: string, toRelease: KObject[]): void {
    this.store.atomically(() => {
      this.writeStatus(job, status, before);
      for (const p of toRelease) this.removeTrackingFinalizer(p);
    });
  }

  private writeStatus(job: KObject, status: Any, before: string): void {
    // active, succeeded and failed are `omitempty` int32s: a zero is not written (ready and
    // terminating are pointers, so their zero is).
    for (const k of ['active', 'succeeded', 'failed']) if (status[k] === 0) delete status[k];
    if (JSON.stringify(status) === before) return;
    this.registry.update(
      this.registry.byResource('jobs'),
      job.metadata.namespace!,
      job.metadata.name!,
      (cur) => {
        if (cur.metadata.uid !== job.metadata.uid) return cur;
        cur.status = status;
        return cur;
      },
      { subresource: 'status', manager: 'kube-controller-manager' },
    );
  }

  private createPod(job: KObject): boolean {
    const template = job.spec.template ?? {};
    const name = job.metadata.name!;
    // getPodsPrefix: `<job>-`, unless that is not a valid generateName (a 253-character name).
    const prefix = name.length + 1 > 253 ? name : `${name}-`;
    const metadata: Any = {
      generateName: prefix,
      labels: { ...(template.metadata?.labels ?? {}) },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name, uid: job.metadata.uid, controller: true, blockOwnerDeletion: true }],
      finalizers: [JOB_TRACKING_FINALIZER],
    };
    if (template.metadata?.annotations) metadata.annotations = { ...template.metadata.annotations };
    try {
      const { obj } = this.registry.create(
        this.registry.byResource('pods'),
        job.metadata.namespace!,
        { apiVersion: 'v1', kind: 'Pod', metadata, spec: JSON.parse(JSON.stringify(template.spec ?? {})) },
        { manager: 'kube-controller-manager' },
      );
      this.opts.recorder.podCreated({ name: obj.metadata.name!, labels: obj.metadata.labels, jobUid: job.metadata.uid }, performance.now());
      return true;
    } catch (err) {
      this.opts.logger.warn({ job: name, err: String(err) }, 'FailedCreate: error creating pod');
      this.queue.after(`${job.metadata.namespace}/${name}`, 1000);
      return false;
    }
  }

  private scheduleTtl(job: KObject): void {
    const ttl = job.spec?.ttlSecondsAfterFinished;
    if (typeof ttl !== 'number') return;
    const uid = job.metadata.uid!;
    const cond = isTrue(job.status?.conditions, 'Complete') ?? isTrue(job.status?.conditions, 'Failed');
    const parsed = Date.parse(cond?.lastTransitionTime ?? job.status?.completionTime ?? '');
    const finished = this.finishedAt.get(uid) ?? (Number.isNaN(parsed) ? Date.now() : parsed);
    const expireAt = finished + ttl * 1000 * this.opts.ttlScale;
    const key = `ttl/${job.metadata.namespace}/${job.metadata.name}/${uid}`;
    const now = Date.now();
    if (now < expireAt) {
      this.ttlQueue.after(key, expireAt - now);
      return;
    }
    this.ttlQueue.add(key);
  }

  /** The TTL-after-finished controller: deletes with Foreground propagation. */
  private readonly ttlQueue = new WorkQueue(
    (key) => {
      const [, ns, name, uid] = key.split('/') as [string, string, string, string];
      const job = this.store.get('jobs', ns, name);
      if (!job || job.metadata.uid !== uid || job.metadata.deletionTimestamp) return;
      this.opts.logger.info({ job: name }, 'ttl-after-finished: deleting job');
      this.registry.delete(this.registry.byResource('jobs'), ns, name, {
        propagationPolicy: 'Foreground',
        preconditions: { uid },
      });
    },
    (k, err) => this.opts.logger.warn({ key: k, err: String(err) }, 'ttl-after-finished retry'),
  );

  stopAll(): void {
    this.stop();
    this.ttlQueue.stop();
  }
}
