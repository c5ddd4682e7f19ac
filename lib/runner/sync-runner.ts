/**
 * Runs one file operation as a Job and returns its result payload: create the Job, find its Pod
 * with `pods list` by the op-id label (once, when the schedule says a start is first plausible),
 * then poll with `pods/log` itself (`follow`: the poll that finds the container started is already
 * the stream) and return the first result line. The schedule (./poll-schedule.ts) learns start
 * times in this instance's memory, as a hint: the answers do not depend on it. A mutating op also
 * waits, after its result, until its Job is finished: an unfinished write Job holds the world
 * (maintenance), so answering earlier would let the caller's next write be refused as busy. That wait is bounded: once the container has
 * terminated, a Job controller slow to mark the Job finished delays the answer by at most
 * `finishGraceMs`, never into a timeout, since the op's effect is already on disk. Verbs:
 * `jobs create, list`, `pods list`, `pods/log get`; and `jobs patch` to record on an interrupted
 * op's Job what the op that recovered the world after it made of it.
 * @module
 */
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { describeKubeError } from '../kube/errors.ts';
import { containerTermination, describeTermination, jobFinished } from '../kube/job-facts.ts';
import type { JobPodApi, LogOpening } from '../kube/job-pods.ts';
import { waitJobsFinished } from '../kube/job-wait.ts';
import { ANNOTATION_RECOVERED, ANNOTATION_RECOVERED_BY, FILES_CONTAINER, LABEL_FILES_OP } from '../labels.ts';
import type { RecoveredOp } from '../protocol/recovered.ts';
import { diagnosticTail, MAX_LOG_BYTES, ResultLineScanner } from '../protocol/result.ts';
import { sleep } from '../sleep.ts';
import { FilesTimeoutError, JobLostError, RunnerError } from './errors.ts';
import { LearningSchedule, type PodStage, type PollSchedule } from './poll-schedule.ts';

export { FilesTimeoutError, JobLostError, RunnerError } from './errors.ts';

export interface RunOptions {
  /** Mutating ops wait for their Job to be finished after the result. */
  mutating: boolean;
  /** Aborts with a TimeoutError reason for the deadline, any other reason for a gone caller. */
  signal: AbortSignal;
  /**
   * The Job exists already (an earlier delivery of the same event created it): follow it instead
   * of creating it. With no Pod and the Job finished or gone, its answer is lost: JobLostError.
   */
  adopt?: boolean;
}

export interface SyncRunnerOptions {
  /** Default: a LearningSchedule of this runner's own, which learns from the starts it sees. */
  schedule?: PollSchedule;
  /** How often, while the container is being created, to also list the Pod for a terminal phase. */
  phaseCheckEvery?: number;
  /**
   * After a mutation's result, how long to wait for the Job's terminal condition before answering
   * on the container's termination alone. Default 2000 ms.
   */
  finishGraceMs?: number;
}

const TERMINAL = new Set(['Succeeded', 'Failed']);
/** A log stream that ended early on a running container: open it again soon. */
const REOPEN_AFTER_MS = 200;

export class SyncRunner {
  readonly #api: JobPodApi;
  readonly #schedule: PollSchedule;
  readonly #phaseCheckEvery: number;
  readonly #finishGraceMs: number;

  constructor(api: JobPodApi, opts: SyncRunnerOptions = {}) {
    this.#api = api;
    this.#schedule = opts.schedule ?? new LearningSchedule();
    this.#phaseCheckEvery = opts.phaseCheckEvery ?? 20;
    this.#finishGraceMs = opts.finishGraceMs ?? 2000;
  }

  /** The Jobs matching a label selector (a redelivered event's earlier Job). */
  async findJobs(namespace: string, labelSelector: string): Promise<V1Job[]> {
    try {
      return await this.#api.listJobs(namespace, labelSelector);
    } catch (err) {
      throw new RunnerError(`list file jobs: ${describeKubeError(err)}`, { cause: err });
    }
  }

  /** Creates the Job (or, adopting, follows it) and returns the payload of its first result line. */
  async run(job: V1Job, opts: RunOptions): Promise<string> {
    const ns = job.metadata!.namespace!;
    const name = job.metadata!.name!;
    const opId = job.metadata!.labels![LABEL_FILES_OP]!;
    // One clock for the schedule: ms since the Job was sent. An adopted Job was sent earlier, at a
    // time we do not know, so it is looked for at once and teaches the schedule nothing.
    const sent = performance.now();
    const since = () => performance.now() - sent;
    if (!opts.adopt) {
      try {
        await this.#api.createJob(ns, job);
      } catch (err) {
        throw new RunnerError(`create file job ${name}: ${describeKubeError(err)}`, { cause: err });
      }
    }
    const w = new Waiter(opts.signal, name);
    const selector = `${LABEL_FILES_OP}=${opId}`;

    let stage = 'no-pod' as PodStage;
    let stageSince = performance.now();
    let podName: string | undefined;
    let polls = 0;
    // The last look that found the container not started; the start lies after it.
    let notStartedAt = 0;
    let learned = Boolean(opts.adopt);
    const enter = (s: PodStage) => {
      notStartedAt = since();
      if (s !== stage) {
        stage = s;
        stageSince = performance.now();
      }
    };
    const started = () => {
      if (!learned) this.#schedule.observeStart(notStartedAt, since());
      learned = true;
    };
    const pause = () => w.sleep(this.#schedule.next(stage, since(), performance.now() - stageSince));

    // Before the earliest start seen, a Pod list would only say what is known: not started yet.
    if (!opts.adopt) await w.sleep(Math.max(0, this.#schedule.firstLook() - since()));
    for (;;) {
      w.check();
      if (podName === undefined || (stage === 'creating' && ++polls % this.#phaseCheckEvery === 0)) {
        const pod = newest(await w.call(() => this.#api.listPods(ns, selector), 'find file job pod'));
        if (!pod) {
          if (podName !== undefined) throw new JobLostError(`the pod of file job ${name} vanished before its result`, opts.mutating);
          if (opts.adopt) {
            const jobs = await w.call(() => this.#api.listJobs(ns, selector), 'list file job');
            if (jobs.length === 0 || jobs.every(jobFinished)) throw new JobLostError(`file job ${name} has finished and its pod is gone`, opts.mutating);
          }
          notStartedAt = since();
          await pause();
          continue;
        }
        podName = pod.metadata!.name!;
        if (TERMINAL.has(pod.status?.phase ?? '')) return this.#finalRead(w, ns, name, pod, opts.mutating);
        const seen = podStage(pod);
        if (seen !== 'started') {
          enter(seen);
          await pause();
          continue;
        }
      }
      const opening: LogOpening = await w.call(() => this.#api.openLog(ns, podName!, FILES_CONTAINER, { follow: true, limitBytes: MAX_LOG_BYTES }), 'read file job log');
      if (opening.kind === 'unscheduled' || opening.kind === 'waiting') {
        enter(opening.kind === 'waiting' ? 'creating' : 'unscheduled');
        await pause();
        continue;
      }
      if (opening.kind === 'gone') throw new JobLostError(`the pod ${podName} of file job ${name} vanished before its result`, opts.mutating);
      started();

      const scanner = new ResultLineScanner();
      const payload = await w.readUntilResult(opening, scanner);
      if (payload !== undefined) {
        if (opts.mutating) await this.#awaitFinished(w, ns, selector, opening, scanner);
        else opening.close();
        await this.#recordRecovered(ns, opId, scanner);
        return payload;
      }
      // The stream ended without a result: the container exited, or the connection closed early.
      const pod = newest(await w.call(() => this.#api.listPods(ns, selector), 'find file job pod'));
      if (!pod) throw new JobLostError(`the pod of file job ${name} vanished before its result`, opts.mutating);
      if (TERMINAL.has(pod.status?.phase ?? '')) return this.#finalRead(w, ns, name, pod, opts.mutating, scanner);
      await w.sleep(REOPEN_AFTER_MS);
    }
  }

  /** A terminal Pod whose result we have not seen yet: one complete read of its log. */
  async #finalRead(w: Waiter, ns: string, job: string, pod: V1Pod, mutating: boolean, seen?: ResultLineScanner): Promise<string> {
    const opening = await w.call(() => this.#api.openLog(ns, pod.metadata!.name!, FILES_CONTAINER, { follow: false, limitBytes: MAX_LOG_BYTES }), 'read file job log');
    const scanner = new ResultLineScanner();
    if (opening.kind === 'stream') {
      const payload = await w.readUntilResult(opening, scanner);
      opening.close();
      if (payload !== undefined) {
        // Terminal before it was first seen (a fast Pod, a late first look): a mutation still
        // answers only once its Job no longer holds the world.
        const opId = pod.metadata?.labels?.[LABEL_FILES_OP] ?? '';
        if (mutating) await this.#jobFinished(w, ns, `${LABEL_FILES_OP}=${opId}`);
        await this.#recordRecovered(ns, opId, scanner);
        return payload;
      }
    }
    const tail = diagnosticTail(scanner.lastOtherLine || seen?.lastOtherLine || '');
    const ended = describeTermination(containerTermination(pod, FILES_CONTAINER));
    throw new JobLostError(`file job ${job} produced no result (phase ${pod.status?.phase ?? 'Unknown'}; ${ended}; pod ${pod.metadata?.name}): ${tail}`, mutating);
  }

  /**
   * The op's Job recovered the world from ops stopped mid-placement (recovery lines before its
   * result): each of those ops' Jobs is annotated with what became of it, so the ops listing can
   * say so instead of "outcome unknown". Advisory: a failure here leaves the listing as it was,
   * and never fails the op that did the recovering.
   */
  async #recordRecovered(ns: string, by: string, scanner: ResultLineScanner): Promise<void> {
    if (scanner.recovered.length === 0 || !this.#api.annotateJob) return;
    for (const r of scanner.recovered) {
      try {
        for (const job of await this.#api.listJobs(ns, `${LABEL_FILES_OP}=${r.op}`)) {
          await this.#api.annotateJob(ns, job.metadata!.name!, recoveryAnnotations(r, by));
        }
      } catch {
        // The listing then shows the op's outcome as unknown, as it would without this record.
      }
    }
  }

  /**
   * After the result of a mutating op: read to the end of the log (the container has exited), then
   * list the Job until the controller has given it a terminal condition; past the grace period,
   * a terminated container (or a Pod already gone) is enough.
   */
  async #awaitFinished(w: Waiter, ns: string, selector: string, opening: Extract<LogOpening, { kind: 'stream' }>, scanner: ResultLineScanner): Promise<void> {
    await w.drain(opening, scanner);
    await this.#jobFinished(w, ns, selector);
  }

  /**
   * The Job has a terminal condition, or the grace period has passed with its container ended:
   * a mutation's answer waits for this, however its result was read (a stream that saw the
   * container run, or one read of a Pod already terminal when first listed).
   */
  async #jobFinished(w: Waiter, ns: string, selector: string): Promise<void> {
    const graceEnd = performance.now() + this.#finishGraceMs;
    await waitJobsFinished({
      list: () => w.call(() => this.#api.listJobs(ns, selector), 'list file job'),
      enough: async () => {
        if (performance.now() < graceEnd) return false;
        const pod = newest(await w.call(() => this.#api.listPods(ns, selector), 'find file job pod'));
        return !pod || TERMINAL.has(pod.status?.phase ?? '') || containerTermination(pod, FILES_CONTAINER) !== undefined;
      },
      sleep: (ms) => w.sleep(ms),
    });
  }
}

/** The annotations that record on an interrupted op's Job what op `by` made of it. */
export function recoveryAnnotations(r: RecoveredOp, by: string): Record<string, string> {
  return { [ANNOTATION_RECOVERED]: r.now, [ANNOTATION_RECOVERED_BY]: by };
}

function newest(pods: V1Pod[]): V1Pod | undefined {
  let best: V1Pod | undefined;
  for (const p of pods) {
    const t = p.metadata?.creationTimestamp ? new Date(p.metadata.creationTimestamp).getTime() : 0;
    const b = best?.metadata?.creationTimestamp ? new Date(best.metadata.creationTimestamp).getTime() : -1;
    if (!best || t > b) best = p;
  }
  return best;
}

/** Where a listed Pod stands: its container's state is what decides whether its log can stream. */
export function podStage(pod: V1Pod): PodStage | 'started' {
  const cs = pod.status?.containerStatuses?.find((c) => c.name === FILES_CONTAINER);
  if (cs?.state?.running || cs?.state?.terminated) return 'started';
  if (TERMINAL.has(pod.status?.phase ?? '')) return 'started';
  return pod.spec?.nodeName ? 'creating' : 'unscheduled';
}

/** The deadline and the caller's disconnect, applied to every wait and every call. */
class Waiter {
  readonly #signal: AbortSignal;
  readonly #job: string;

  constructor(signal: AbortSignal, job: string) {
    this.#signal = signal;
    this.#job = job;
  }

  check(): void {
    if (!this.#signal.aborted) return;
    const reason: unknown = this.#signal.reason;
    if (reason instanceof DOMException && reason.name === 'TimeoutError') throw new FilesTimeoutError(this.#job);
    throw reason instanceof Error ? reason : new RunnerError('cancelled');
  }

  async call<T>(fn: () => Promise<T>, what: string): Promise<T> {
    this.check();
    try {
      return await fn();
    } catch (err) {
      this.check();
      throw new RunnerError(`${what}: ${describeKubeError(err)}`, { cause: err });
    }
  }

  /** An abort rejects with what check() makes of its reason. */
  sleep(ms: number): Promise<void> {
    return sleep(ms, this.#signal).catch(() => this.check());
  }

  /** Reads until the first result line or the end of the stream, at most MAX_LOG_BYTES. */
  async readUntilResult(opening: Extract<LogOpening, { kind: 'stream' }>, scanner: ResultLineScanner): Promise<string | undefined> {
    const onAbort = () => opening.close();
    this.#signal.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const chunk of opening.body) {
        const payload = scanner.push(chunk);
        if (payload !== undefined) return payload;
        if (scanner.bytesRead >= MAX_LOG_BYTES) break;
      }
      return scanner.end();
    } catch (err) {
      this.check();
      throw new RunnerError(`read file job result: ${(err as Error).message}`, { cause: err });
    } finally {
      this.#signal.removeEventListener('abort', onAbort);
    }
  }

  /** Reads the rest of a stream (discarding it, bounded) until the container's end closes it. */
  async drain(opening: Extract<LogOpening, { kind: 'stream' }>, scanner: ResultLineScanner): Promise<void> {
    const onAbort = () => opening.close();
    this.#signal.addEventListener('abort', onAbort, { once: true });
    let n = scanner.bytesRead;
    try {
      for await (const chunk of opening.body) {
        n += (chunk as Buffer).length;
        if (n >= MAX_LOG_BYTES) break;
      }
    } catch {
      this.check();
      // A broken stream after the result: the phase check that follows decides.
    } finally {
      this.#signal.removeEventListener('abort', onAbort);
      opening.close();
    }
  }
}
