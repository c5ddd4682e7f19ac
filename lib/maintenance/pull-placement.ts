/**
 * Placing pulls. A pull's Job downloads without holding the world and ends `staged`
 * (docs/pulls.md); no function waits for it and it holds no credentials, so something stateless
 * places the file afterwards: one pass lists the namespace's pull Jobs, and for each that ended
 * staged with no placement recorded on it enters the gates (the server exists, is stopped, has its
 * world volume), runs the `pull-place` Job holding the world (WorldLock.run: it joins the world's
 * line like any change), and records the outcome on the pull's Job, annotation
 * `felis.lolicon.best/pull-placed`, where the ops listing reads it. The settle function runs a
 * pass on every change of a pull Job (an ApiServerSource event) and on every tick.
 *
 * Passes run anywhere and at once (a change event and a tick, a redelivery, several instances), so
 * each pull is placed single-flight:
 * - the placement's op id derives from the pull's (`placementOpId`), so it names one Job only: a
 *   pass that finds that Job made follows it and reads its result rather than make another;
 * - the outcome is written under the resourceVersion of the pull's Job as read, and never over one
 *   recorded: a pass that lost the race reads the Job again and leaves the record it finds;
 * - in one instance, a pull being placed is not started again.
 *
 * What ends a pull unplaced is recorded as its failure: the server started before the placement
 * (`not_stopped`: the download is dropped rather than kept waiting for a stop that may never come),
 * the server or its world volume gone, a placement whose result was lost (`outcome_unknown`). A world
 * held by something else, or a line that gave no turn in time, leaves the pull for the next pass.
 * Verbs: `jobs list` and `jobs patch`, `pods list` and `pods/log get` (the pull's result), and what
 * the gates, the lock and the placement Job take.
 * @module
 */
import { createHash } from 'node:crypto';
import type { V1Job } from '@kubernetes/client-node';
import { DomainError } from '../errors.ts';
import type { FileAccess, FileGates } from '../files/gates.ts';
import type { Target } from '../job-spec/types.ts';
import { describeKubeError, isConflict } from '../kube/errors.ts';
import { jobOutcome } from '../kube/job-facts.ts';
import type { ServerApi } from '../kube/servers.ts';
import { ANNOTATION_PULL_PLACED, LABEL_FILES_OP, LABEL_FILES_PULL, LABEL_MANAGED_BY, LABEL_SERVER, MANAGED_BY_FILES } from '../labels.ts';
import { type OpsApi, opResult } from '../ops/list.ts';
import { placement } from '../ops/state.ts';
import { formatResultLine, RESULT_PREFIX, type Result } from '../protocol/result.ts';

/** Selects every pull Job of ours in the namespace. */
export const PULL_JOBS = `${LABEL_MANAGED_BY}=${MANAGED_BY_FILES},${LABEL_FILES_PULL}=true`;

/** The one op id the placement of pull `pullOp` can have: 16 hex of sha256("place", NUL, pullOp). */
export function placementOpId(pullOp: string): string {
  return createHash('sha256').update(`place\0${pullOp}`).digest('hex').slice(0, 16);
}

/** The folder and name a staged result's `to` lands as. */
export function landingOf(to: string): { path: string; name: string } {
  const slash = to.lastIndexOf('/');
  return slash < 0 ? { path: '', name: to } : { path: to.slice(0, slash), name: to.slice(slash + 1) };
}

/** The refusals that end a pull unplaced (recorded); anything else leaves it for the next pass. */
const FINAL_CODES = new Set(['not_stopped', 'not_found', 'no_world_volume', 'outcome_unknown']);

/** What a refusal before or around the placement becomes on the pull's record, or undefined to try again. */
export function finalOutcome(err: unknown): Result | undefined {
  if (!(err instanceof DomainError) || !FINAL_CODES.has(err.code)) return undefined;
  if (err.code === 'not_stopped') {
    return { code: 'not_stopped', error: 'the server was started before the pulled file could be placed; nothing was placed: pull it again once the server is stopped' };
  }
  return { code: err.code, error: `${err.callerMessage}; the pulled file was not placed` };
}

export interface PlacedPull {
  /** The pull's Job and op. */
  job: string;
  op: string;
  server: string;
  /** `placed` or `failed` as recorded now (or found recorded by another pass); `pending` for the next pass. */
  state: 'placed' | 'failed' | 'pending';
  to?: string;
  code?: string;
  /** Why it stays pending (for the log). */
  error?: string;
}

export interface PullPlacerOptions {
  /** `jobs list` and `jobs patch`. */
  api: Pick<ServerApi, 'listJobs' | 'patchJob'>;
  /** `pods list` and `pods/log get`: the pull's result line. */
  logs: Pick<OpsApi, 'listPods' | 'openLog'>;
  namespace: string;
  gates: FileGates;
  /** The placement Job (FilesEditor.placePull); undefined when no worker image is configured. */
  place: ((t: Target, p: { path: string; to: string; pullOp: string; opId: string }) => Promise<Result>) | undefined;
}

/** A pull Job's record, as a result payload (what the ops listing parses). */
function recordOf(r: Result): string {
  return formatResultLine(r).slice(RESULT_PREFIX.length).trimEnd();
}

const recorded = (job: V1Job) => job.metadata?.annotations?.[ANNOTATION_PULL_PLACED] !== undefined;

export class PullPlacer {
  readonly #o: PullPlacerOptions;
  /** Pulls this instance is placing, by Job uid: an overlapping pass joins the one under way. */
  readonly #inFlight = new Map<string, Promise<PlacedPull | undefined>>();

  constructor(o: PullPlacerOptions) {
    this.#o = o;
  }

  /** One pass over every pull Job that completed with nothing recorded; what it did with each that staged. */
  async placeOnce(): Promise<PlacedPull[]> {
    if (!this.#o.place) return [];
    const jobs = await this.#o.api.listJobs(this.#o.namespace, PULL_JOBS);
    // A pull that staged its download exits 0: its Job completed. One that failed placed nothing.
    const done = await Promise.all(jobs.filter((j) => jobOutcome(j) === 'succeeded' && !recorded(j)).map((j) => this.#once(j)));
    return done.filter((d): d is PlacedPull => d !== undefined);
  }

  #once(job: V1Job): Promise<PlacedPull | undefined> {
    const uid = job.metadata?.uid ?? job.metadata?.name ?? '';
    const running = this.#inFlight.get(uid);
    if (running) return running;
    const p = this.#placeOne(job).finally(() => this.#inFlight.delete(uid));
    this.#inFlight.set(uid, p);
    return p;
  }

  async #placeOne(job: V1Job): Promise<PlacedPull | undefined> {
    const labels = job.metadata?.labels ?? {};
    const name = job.metadata?.name ?? '';
    const server = labels[LABEL_SERVER] ?? '';
    const pullOp = labels[LABEL_FILES_OP] ?? '';
    const base = { job: name, op: pullOp, server };
    let staged: Result | undefined;
    try {
      staged = await opResult(this.#o.logs, this.#o.namespace, job);
    } catch (err) {
      return { ...base, state: 'pending', error: describeKubeError(err) };
    }
    // Only a pull that staged its download has anything to place (its failures are its own result).
    if (!staged?.staged || staged.code || !staged.to || !server || !/^[0-9a-f]{16}$/.test(pullOp)) return undefined;
    const { path, name: fileName } = landingOf(staged.to);
    const opId = placementOpId(pullOp);
    let outcome: Result;
    try {
      outcome = await this.#placed(server, path, { path, to: fileName, pullOp, opId });
    } catch (err) {
      const final = finalOutcome(err);
      if (!final) return { ...base, state: 'pending', to: staged.to, error: err instanceof Error ? err.message : String(err) };
      outcome = final;
    }
    try {
      return { ...base, ...(await this.#record(job, outcome)) };
    } catch (err) {
      return { ...base, state: 'pending', to: staged.to, error: `the placement's outcome could not be recorded: ${describeKubeError(err)}` };
    }
  }

  /** The placement's result: entered through the gates and run holding the world. */
  async #placed(server: string, folder: string, p: { path: string; to: string; pullOp: string; opId: string }): Promise<Result> {
    const place = this.#o.place!;
    const access: FileAccess = { op: 'pull-place', path: folder === '' ? '.' : folder };
    const target = await this.#o.gates.enter(server, access);
    return this.#o.gates.run(server, access, () => place(target, p), { entered: target });
  }

  /**
   * Writes `outcome` on the pull's Job under the resourceVersion read; on a conflict reads the Job
   * again and, unless another pass recorded one meanwhile, writes again. Never replaces a record.
   */
  async #record(first: V1Job, outcome: Result): Promise<Pick<PlacedPull, 'state' | 'to' | 'code'>> {
    let job: V1Job | undefined = first;
    const stateOf = (r: Result) => (r.code ? { state: 'failed' as const, code: r.code } : { state: 'placed' as const, ...(r.to ? { to: r.to } : {}) });
    for (let attempt = 1; ; attempt++) {
      // Another pass recorded it first: that record stands.
      const theirs = placement(job);
      if (theirs) return stateOf(theirs);
      try {
        await this.#o.api.patchJob(this.#o.namespace, job.metadata?.name ?? '', {
          metadata: { ...(job.metadata?.resourceVersion ? { resourceVersion: job.metadata.resourceVersion } : {}), annotations: { [ANNOTATION_PULL_PLACED]: recordOf(outcome) } },
        });
        return stateOf(outcome);
      } catch (err) {
        if (!isConflict(err) || attempt >= 5) throw err;
      }
      const uid = first.metadata?.uid;
      job = (await this.#o.api.listJobs(this.#o.namespace, `${LABEL_FILES_OP}=${first.metadata?.labels?.[LABEL_FILES_OP] ?? ''}`)).find((j) => j.metadata?.uid === uid);
      if (!job) throw new Error(`pull job ${first.metadata?.name} vanished before its placement was recorded`);
    }
  }
}
