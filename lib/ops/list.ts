/**
 * The ops listing's reads: a server's background Jobs and their Pods (one label selector for
 * both), a page of its ops newest first, and the last 20 log lines of each op on the page whose
 * Pod has started; or one op by its id. Verbs: `jobs list`, `pods list`, `pods/log get`. A failed
 * Job or Pod list fails the whole answer (never a partial one); a log that cannot be read (still
 * pulling, node gone) is an empty log, which shows as no progress rather than an error.
 * @module
 */
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { DomainError, domainError } from '../errors.ts';
import { describeKubeError } from '../kube/errors.ts';
import type { JobPodApi } from '../kube/job-pods.ts';
import { FILES_CONTAINER, LABEL_FILES_ASYNC, LABEL_FILES_OP, LABEL_MANAGED_BY, LABEL_SERVER, LABEL_UPLOAD_SESSION, MANAGED_BY_FILES } from '../labels.ts';
import { DEFAULT_OPS } from '../protocol/ops-page.ts';
import { RECOVERED_PREFIX, recoveredIn } from '../protocol/recovered.ts';
import { formatProgressLine, lastProgress, lastResultPayload, RESULT_PREFIX, type Result } from '../protocol/result.ts';
import { parseResultPayload } from '../protocol/result-parse.ts';
import { RunnerError } from '../runner/errors.ts';
import { newestPodPerOp, type OpState, opIdOf, opState, type Recovery } from './state.ts';

/** How many ops newer than a page may be read for what became of one of its ops (statesOf). */
export const RECOVERY_LOOKBACK = 10;
/** Log tails read at once: what a page holds in flight stays LOG_READS_AT_ONCE × OP_LOG_BYTES whatever its limit. */
export const LOG_READS_AT_ONCE = 10;
/** The result line is the last thing the Job prints; progress comes before it. */
export const OP_LOG_LINES = 20;
/**
 * The most read of one tail. The Job's lines are short (a result with its conflict list is at
 * most ~10 KiB), so 20 of them fit many times over.
 */
export const OP_LOG_BYTES = 256 << 10;

/** An upload session's id (lib/uploads/sessions.ts): the op id of its receivers. */
const SESSION_ID = /^[0-9a-f]{32}$/;

/** What page of a server's ops to read: at most `limit`, after the op `after` in newest-first order. */
export interface OpsPage {
  limit?: number;
  after?: string;
}

/** A page of ops, newest first; `next`: the last op's id, to pass as `after`, when more follow. */
export interface OpsRead {
  ops: OpState[];
  next?: string;
}

/** `GET …/files/ops/{id}` of an id no op of this server has (never had, another server's, gone with its Job). */
export const opNotFound = (id: string) => domainError('op_not_found', `no background op of this server has the id ${id}`);

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

/** One op: the Job that says how it stands (its newest), and when its first Job was made. */
export interface OpJobs {
  id: string;
  job: V1Job;
  started: number;
}

/**
 * The server's ops, newest first by when each began; ties (Kubernetes times have whole seconds)
 * by id, so that a page and the next one agree on the order whatever order the API lists in.
 * An upload session's receivers are one op (state.ts `opIdOf`), told by its newest receiver.
 */
export function opsOf(jobs: V1Job[]): OpJobs[] {
  const byId = new Map<string, OpJobs>();
  for (const job of jobs) {
    const id = opIdOf(job);
    const t = created(job);
    const cur = byId.get(id);
    if (!cur) byId.set(id, { id, job, started: t });
    else {
      if (t >= created(cur.job)) cur.job = job;
      cur.started = Math.min(cur.started, t);
    }
  }
  return [...byId.values()].sort((a, b) => b.started - a.started || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The page of `ops` after the op `after` (400 when no op has that id), at most `limit`, and whether more follow. */
export function pageOf(ops: OpJobs[], page: OpsPage): { page: OpJobs[]; more: boolean; from: number } {
  let from = 0;
  if (page.after !== undefined) {
    const at = ops.findIndex((o) => o.id === page.after);
    if (at < 0) {
      // Ids are random: the place of one that is gone cannot be told, and an empty page would read as the end.
      throw new DomainError(
        'bad_request',
        'invalid',
        `the ?after= query parameter names no op of this server: ${page.after} (an ended op stays listed 30 minutes after it ended); list again without ?after=`,
      );
    }
    from = at + 1;
  }
  const limit = page.limit ?? DEFAULT_OPS;
  return { page: ops.slice(from, from + limit), more: ops.length > from + limit, from };
}

async function jobsListed(api: Pick<OpsApi, 'listJobs'>, namespace: string, selector: string): Promise<V1Job[]> {
  try {
    return await api.listJobs(namespace, selector);
  } catch (err) {
    throw new RunnerError(`list background file jobs: ${describeKubeError(err)}`, { cause: err });
  }
}

async function podsListed(api: Pick<OpsApi, 'listPods'>, namespace: string, selector: string): Promise<V1Pod[]> {
  try {
    return await api.listPods(namespace, selector);
  } catch (err) {
    throw new RunnerError(`list background file job pods: ${describeKubeError(err)}`, { cause: err });
  }
}

/** A page of the server's ops (the newest DEFAULT_OPS without `page`). */
export async function listOps(api: OpsApi, namespace: string, server: string, page: OpsPage = {}): Promise<OpsRead> {
  const selector = opsSelector(server);
  const all = opsOf(await jobsListed(api, namespace, selector));
  const chosen = pageOf(all, page);
  // An empty page needs no Pods.
  const pods = chosen.page.length === 0 ? [] : await podsListed(api, namespace, selector);
  const newer = async () => ({ ops: newerThan(all, chosen.from), pods });
  const last = chosen.page.at(-1);
  return { ops: await statesOf(api, namespace, chosen.page, pods, newer), ...(chosen.more && last ? { next: last.id } : {}) };
}

/** One op of the server by its id (404 op_not_found when it has none). Verbs as a page of one. */
export async function readOp(api: OpsApi, namespace: string, server: string, id: string): Promise<OpState> {
  // Only that op's Jobs: an upload session's by its session label, any other by its op label.
  const selector = `${opsSelector(server)},${SESSION_ID.test(id) ? LABEL_UPLOAD_SESSION : LABEL_FILES_OP}=${id}`;
  const op = opsOf(await jobsListed(api, namespace, selector)).find((o) => o.id === id);
  if (!op) throw opNotFound(id);
  const newer = async () => {
    const all = opsOf(await jobsListed(api, namespace, opsSelector(server)));
    const at = all.findIndex((o) => o.id === id);
    return { ops: at < 0 ? [] : newerThan(all, at), pods: await podsListed(api, namespace, opsSelector(server)) };
  };
  return (await statesOf(api, namespace, [op], await podsListed(api, namespace, selector), newer))[0]!;
}

/**
 * The ops that may have recovered an op at or after `from` but are not on its page: the
 * RECOVERY_LOOKBACK just newer. The next Job that mounts the world read-write recovers what an op
 * left, so it is a newer op, and one of these unless ten newer ops came between (the window the
 * listing of the ten newest always had).
 */
function newerThan(all: OpJobs[], from: number): OpJobs[] {
  return all.slice(Math.max(0, from - RECOVERY_LOOKBACK), from);
}

interface Read {
  op: OpJobs;
  pod: V1Pod | undefined;
  log: string;
}

async function readLogs(api: Pick<OpsApi, 'openLog'>, namespace: string, ops: OpJobs[], pods: V1Pod[]): Promise<Read[]> {
  const podOf = newestPodPerOp(pods);
  const read: Read[] = [];
  // Side by side, a few at a time: each read is bounded in lines and bytes.
  for (let i = 0; i < ops.length; i += LOG_READS_AT_ONCE) {
    read.push(
      ...(await Promise.all(
        ops.slice(i, i + LOG_READS_AT_ONCE).map(async (op) => {
          const pod = podOf.get(op.job.metadata?.labels?.[LABEL_FILES_OP] ?? '');
          const log = pod && pod.status?.phase !== 'Pending' ? keptLines(await logTail(api, namespace, pod.metadata?.name ?? '')) : '';
          return { op, pod, log };
        }),
      )),
    );
  }
  return read;
}

/**
 * The states of a page's ops. `newer` gives the ops just newer than the page, whose logs are read
 * only when an op of the page ended without a result and nothing on the page or on its Job says
 * what became of it.
 */
async function statesOf(api: Pick<OpsApi, 'openLog'>, namespace: string, ops: OpJobs[], pods: V1Pod[], newer: () => Promise<{ ops: OpJobs[]; pods: V1Pod[] }>): Promise<OpState[]> {
  const read = await readLogs(api, namespace, ops, pods);
  const states = (recoveries: Map<string, Recovery>) =>
    read.map(({ op, pod, log }) => ({
      ...opState(op.job, pod, log, recoveries.get(op.job.metadata?.labels?.[LABEL_FILES_OP] ?? '')),
      started: op.started ? new Date(op.started) : undefined,
    }));
  // A background op that recovered the world says so in its own log: what it found of another op
  // is known here even before (or without) the annotation a runner would put on that op's Job.
  const own = recoveriesIn(read.map(({ op, log }) => ({ job: op.job, log })));
  const first = states(own);
  if (!first.some((st) => st.outcomeUnknown)) return first;
  const n = await newer();
  if (n.ops.length === 0) return first;
  const more = recoveriesIn((await readLogs(api, namespace, n.ops, n.pods)).map(({ op, log }) => ({ job: op.job, log })));
  return states(new Map([...more, ...own]));
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

/**
 * What a tail is read for, in its order: the last well-formed progress, the recovery lines and the
 * last result line. The rest is let go at once, so a page of 100 holds little more than a page of ten.
 */
export function keptLines(log: string): string {
  const lines = log.split('\n');
  const result = lines.findLast((l) => l.startsWith(RESULT_PREFIX));
  const p = lastProgress(log);
  return [...(p ? [formatProgressLine(p)] : []), ...lines.filter((l) => l.startsWith(RECOVERED_PREFIX)).map((l) => `${l}\n`), ...(result !== undefined ? [`${result}\n`] : [])].join('');
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
