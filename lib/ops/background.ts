/**
 * Starting a background op and listing them. Starting is one Job create and nothing else: the
 * caller holds the world lock around it, and once the Job exists the Job itself holds the world
 * until it ends, so the lock is given back at once. A pull's Job holds nothing (docs/pulls.md): it
 * is only counted first, so that at most MAX_PULLS_PER_SERVER download at once. Verbs: `jobs
 * create` to start, `jobs list` to count pulls and to find the Job an earlier delivery of the same
 * CloudEvent created, and the listing's reads.
 * @module
 */
import type { V1Job } from '@kubernetes/client-node';
import { DomainError } from '../errors.ts';
import { eventParams, matchEarlier } from '../events/redelivery.ts';
import type { EventScope } from '../events/scope.ts';
import { filesJobName, renderFilesJob } from '../job-spec/render.ts';
import { ASYNC_CPU, ASYNC_DEADLINE_SECONDS, ASYNC_TTL_SECONDS } from '../job-spec/resources.ts';
import { callerTrash } from '../job-spec/trash.ts';
import type { JobSettings, Target } from '../job-spec/types.ts';
import { describeKubeError } from '../kube/errors.ts';
import { jobFinished } from '../kube/job-facts.ts';
import type { JobPodApi } from '../kube/job-pods.ts';
import { LABEL_EVENT, LABEL_FILES_ASYNC, LABEL_FILES_OP, LABEL_FILES_PULL, LABEL_MANAGED_BY, LABEL_SERVER, MANAGED_BY_FILES } from '../labels.ts';
import type { AnyOpFields, OpsWith } from '../protocol/ops.ts';
import { RunnerError } from '../runner/errors.ts';
import { listOps, type OpsPage, readOp } from './list.ts';
import { type OpView, opView, startedView } from './view.ts';

/** The ops whose contract says they run in the background. */
export type BackgroundOp = OpsWith<'async'>;

export interface StartRequest {
  op: BackgroundOp;
  path: string;
  /** unzip: replace files that exist. */
  overwrite?: boolean;
  /** unzip: the destination folder; zip: the archive's name; copy: the new path; pull: the file's name. */
  to?: string;
  /** pull: the URL to fetch into the folder `path`. */
  url?: string;
  /** pull: the digest of the cancel token of the Job named so (the editor knows the key). */
  cancelToken?: (jobName: string) => string;
  /** compress: the selection's paths (in the Job's env, as a many-file op's items), and the format. */
  batch?: { paths: string[] };
  format?: string;
  /** An op's own flags (its contract's `flags`), as its contract encodes them. */
  fields?: AnyOpFields;
}

/** How a background Job differs from a sync one; each may be overridden (tests use short deadlines). */
export interface AsyncSettings {
  asyncDeadlineSeconds?: number;
  asyncTtlSeconds?: number;
  asyncCpu?: string;
}

/** The CPU of a Job that works for as long as its op or transfer lasts (background ops, upload receivers, exports). */
export function longJobCpu(s: AsyncSettings): string {
  return s.asyncCpu ?? ASYNC_CPU;
}

/** How long a background op's Job (and an upload session's receiver) stays listed after it ends. */
export function backgroundTtlSeconds(s: AsyncSettings): number {
  return s.asyncTtlSeconds ?? ASYNC_TTL_SECONDS;
}

export type BackgroundApi = Pick<JobPodApi, 'createJob' | 'listJobs' | 'listPods' | 'openLog'>;

/**
 * Pulls of one server downloading at once. A pull holds no world, so nothing else keeps them one
 * at a time: this bounds the Pods, the bandwidth and the staged bytes one server's callers can start.
 */
export const MAX_PULLS_PER_SERVER = 4;

/** Already the most pulls of this server downloading (→ 429 too_many_pulls with Retry-After). */
export class TooManyPullsError extends DomainError {
  constructor(running: number) {
    super('too_many_pulls', 'busy', `${running} pulls of this server are downloading, the most that may; retry once one has ended`, { retryAfterSeconds: 30 });
    this.name = 'TooManyPullsError';
  }
}

const createdAt = (job: V1Job | void): Date | undefined => {
  const t = job?.metadata?.creationTimestamp;
  if (t === undefined) return undefined;
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? undefined : d;
};

export class BackgroundOps {
  readonly #settings: JobSettings & AsyncSettings;
  readonly #api: BackgroundApi;
  readonly #newId: () => string;

  constructor(settings: JobSettings & AsyncSettings, api: BackgroundApi, newId: () => string) {
    this.#settings = settings;
    this.#api = api;
    this.#newId = newId;
  }

  /**
   * Renders and creates the op's Job (one API call) and answers its running view. With an event
   * key the Job carries it, so a redelivery finds this Job instead of starting a second one.
   */
  async start(t: Target, req: StartRequest, event?: EventScope): Promise<OpView> {
    const { asyncDeadlineSeconds, asyncTtlSeconds: _ttl, asyncCpu: _cpu, ...settings } = this.#settings;
    // The caller holds the world's line: no other pull of this server starts between this count and the create.
    if (req.op === 'pull') await this.#roomForPull(t.server);
    const id = this.#newId();
    const job = renderFilesJob({
      ...settings,
      deadlineSeconds: asyncDeadlineSeconds ?? ASYNC_DEADLINE_SECONDS,
      ttlSeconds: backgroundTtlSeconds(this.#settings),
      cpu: longJobCpu(this.#settings),
      async: true,
      server: t.server,
      opId: id,
      op: req.op,
      path: req.path,
      overwrite: req.overwrite,
      to: req.to,
      ...(req.url !== undefined ? { url: req.url } : {}),
      ...(req.cancelToken ? { cancelTokenSha256: req.cancelToken(filesJobName(t.server, id)) } : {}),
      ...(req.batch ? { batch: req.batch } : {}),
      ...(req.format !== undefined ? { format: req.format } : {}),
      ...req.fields,
      // What an unzip over files, a zip or a copy replaces goes to the undo trash, with the caller's name.
      ...(settings.trash ? { trash: callerTrash(settings.trash) } : {}),
      worldPvc: t.world.claim,
      nodeName: t.world.node,
      ...eventParams(event),
    });
    let created: V1Job | void;
    try {
      created = await this.#api.createJob(settings.namespace, job);
    } catch (err) {
      throw new RunnerError(`create file job ${job.metadata!.name}: ${describeKubeError(err)}`, { cause: err });
    }
    return startedView(id, req.op, req.path, createdAt(created) ?? new Date());
  }

  /**
   * The op an earlier delivery of this event started, as its 202 showed it; undefined when none
   * did. The same event id with another request (server, op, path, body) is 409 event_conflict.
   */
  async eventOp(server: string, req: Pick<StartRequest, 'op' | 'path'>, event: EventScope): Promise<OpView | undefined> {
    let jobs: V1Job[];
    try {
      // Only background Jobs: a copy's event may also have run a sync Job first (refused as too large).
      jobs = await this.#api.listJobs(this.#settings.namespace, `${LABEL_EVENT}=${event.key},${LABEL_FILES_ASYNC}=true`);
    } catch (err) {
      throw new RunnerError(`list file jobs: ${describeKubeError(err)}`, { cause: err });
    }
    const earlier = jobs[0];
    if (!earlier) return undefined;
    const labels = earlier.metadata?.labels ?? {};
    matchEarlier(earlier, event, { server, op: req.op, path: req.path });
    return startedView(labels[LABEL_FILES_OP] ?? '', req.op, req.path, createdAt(earlier) ?? new Date(0));
  }

  async #roomForPull(server: string): Promise<void> {
    let jobs: V1Job[];
    try {
      jobs = await this.#api.listJobs(this.#settings.namespace, `${LABEL_MANAGED_BY}=${MANAGED_BY_FILES},${LABEL_SERVER}=${server},${LABEL_FILES_PULL}=true`);
    } catch (err) {
      throw new RunnerError(`list pull jobs: ${describeKubeError(err)}`, { cause: err });
    }
    const running = jobs.filter((j) => !jobFinished(j)).length;
    if (running >= MAX_PULLS_PER_SERVER) throw new TooManyPullsError(running);
  }

  /** A page of the server's background ops, newest first (the ten newest without `page`), and the next page's `after`. */
  async list(server: string, page: OpsPage = {}): Promise<{ ops: OpView[]; next?: string }> {
    const { ops, next } = await listOps(this.#api, this.#settings.namespace, server, page);
    return { ops: ops.map(opView), ...(next !== undefined ? { next } : {}) };
  }

  /** One background op of the server by its id; 404 op_not_found when it has none. */
  async get(server: string, id: string): Promise<OpView> {
    return opView(await readOp(this.#api, this.#settings.namespace, server, id));
  }
}
