/**
 * The ops listing's reads: a server's background Jobs and their Pods (one label selector for
 * both), the newest 10 Jobs, and the last 20 log lines of each listed op whose Pod has started.
 * Verbs: `jobs list`, `pods list`, `pods/log get`. A failed Job or Pod list fails the whole listing
 * (never a partial one); a log that cannot be read (still pulling, node gone) is an empty log,
 * which shows as no progress rather than an error.
 * @module
 */
import type { V1Job } from '@kubernetes/client-node';
import { describeKubeError } from '../kube/errors.ts';
import type { JobPodApi } from '../kube/job-pods.ts';
import { FILES_CONTAINER, LABEL_FILES_ASYNC, LABEL_FILES_OP, LABEL_MANAGED_BY, LABEL_SERVER, MANAGED_BY_FILES } from '../labels.ts';
import { recoveredIn } from '../protocol/recovered.ts';
import { lastResultPayload, type Result } from '../protocol/result.ts';
import { parseResultPayload } from '../protocol/result-parse.ts';
import { RunnerError } from '../runner/errors.ts';
import { newestPodPerOp, type OpState, opState, type Recovery } from './state.ts';

/**
 * How many ops a listing shows, and so how many logs one call reads. One background op runs per
 * server at a time (it holds the world), so these are the running one and the latest finished.
 */
export const MAX_OPS = 10;
/** The result line is the last thing the Job prints; progress comes before it. */
export const OP_LOG_LINES = 20;
/**
 * The most read of one tail. The Job's lines are short (a result with its conflict list is at
 * most ~10 KiB), so 20 of them fit many times over; it bounds a listing to ten times this.
 */
export const OP_LOG_BYTES = 256 << 10;

export type OpsApi = Pick<JobPodApi, 'listJobs' | 'listPods' | 'openLog'>;

/** Selects a server's background file Jobs (sync Jobs and other servers' are not among them). */
export function opsSelector(server: string): string {
  return `${LABEL_MANAGED_BY}=${MANAGED_BY_FILES},${LABEL_SERVER}=${server},${LABEL_FILES_ASYNC}=true`;
}

const created = (j: V1Job) => {
  const t = j.metadata?.creationTimestamp;
  const ms = t === undefined ? NaN : new Date(t).getTime();
  return Number.isNaN(ms) ? 0 : ms;
};

/** Newest first (stable for equal times), at most MAX_OPS. */
export function newestJobs(jobs: V1Job[]): V1Job[] {
  return jobs
    .map((j, i) => ({ j, i, t: created(j) }))
    .sort((a, b) => b.t - a.t || a.i - b.i)
    .slice(0, MAX_OPS)
    .map((x) => x.j);
}

export async function listOps(api: OpsApi, namespace: string, server: string): Promise<OpState[]> {
  const selector = opsSelector(server);
  let jobs: V1Job[];
  try {
    jobs = await api.listJobs(namespace, selector);
  } catch (err) {
    throw new RunnerError(`list background file jobs: ${describeKubeError(err)}`, { cause: err });
  }
  let pods;
  try {
    pods = await api.listPods(namespace, selector);
  } catch (err) {
    throw new RunnerError(`list background file job pods: ${describeKubeError(err)}`, { cause: err });
  }
  const podOf = newestPodPerOp(pods);
  const listed = newestJobs(jobs);
  // At most MAX_OPS reads, each bounded in lines and bytes: read them side by side.
  const read = await Promise.all(
    listed.map(async (job) => {
      const pod = podOf.get(job.metadata?.labels?.[LABEL_FILES_OP] ?? '');
      const log = pod && pod.status?.phase !== 'Pending' ? await logTail(api, namespace, pod.metadata?.name ?? '') : '';
      return { job, pod, log };
    }),
  );
  // A background op that recovered the world says so in its own log: what it found of another op
  // is known here even before (or without) the annotation a runner would put on that op's Job.
  const recoveries = recoveriesIn(read);
  return read.map(({ job, pod, log }) => opState(job, pod, log, recoveries.get(job.metadata?.labels?.[LABEL_FILES_OP] ?? '')));
}

/** Op id → what the listed op that recovered it reported. */
export function recoveriesIn(read: { job: V1Job; log: string }[]): Map<string, Recovery> {
  const out = new Map<string, Recovery>();
  for (const { job, log } of read) {
    const by = job.metadata?.labels?.[LABEL_FILES_OP] ?? '';
    for (const r of recoveredIn(log)) if (r.op !== by) out.set(r.op, { now: r.now, by });
  }
  return out;
}

/**
 * The result one background op's Job printed, from its newest Pod's log tail; undefined when it
 * printed none that can be read (still running, its Pod gone). Verbs: `pods list`, `pods/log get`.
 */
export async function opResult(api: Pick<OpsApi, 'listPods' | 'openLog'>, namespace: string, job: V1Job): Promise<Result | undefined> {
  const id = job.metadata?.labels?.[LABEL_FILES_OP];
  if (!id) return undefined;
  let pods;
  try {
    pods = await api.listPods(namespace, `${LABEL_FILES_OP}=${id}`);
  } catch (err) {
    throw new RunnerError(`list the pods of op ${id}: ${describeKubeError(err)}`, { cause: err });
  }
  const pod = newestPodPerOp(pods).get(id);
  if (!pod || pod.status?.phase === 'Pending') return undefined;
  const payload = lastResultPayload(await logTail(api, namespace, pod.metadata?.name ?? ''));
  if (payload === undefined) return undefined;
  try {
    return parseResultPayload(payload);
  } catch {
    return undefined;
  }
}

/** The last OP_LOG_LINES lines of the `files` container's log; '' when it cannot be read. */
async function logTail(api: Pick<OpsApi, 'openLog'>, namespace: string, pod: string): Promise<string> {
  try {
    const opening = await api.openLog(namespace, pod, FILES_CONTAINER, { follow: false, tailLines: OP_LOG_LINES, limitBytes: OP_LOG_BYTES });
    if (opening.kind !== 'stream') return '';
    const chunks: Buffer[] = [];
    let n = 0;
    try {
      for await (const chunk of opening.body) {
        const b = Buffer.from(chunk);
        if (n + b.length > OP_LOG_BYTES) {
          chunks.push(b.subarray(0, OP_LOG_BYTES - n));
          break;
        }
        chunks.push(b);
        n += b.length;
      }
    } finally {
      opening.close();
    }
    return Buffer.concat(chunks).toString('utf8');
  } catch {
    return '';
  }
}
