/**
 * Admitting a download: the world lock of kind `export` around the creation of the export Job,
 * given back once the Job exists (the Job then holds the world until it ends, as Felis's export
 * Jobs do). It is the lock's own admission (the server fully stopped, no restart pending, nothing
 * else holding the world, the lock written under the resourceVersion that was read, so a start
 * racing it loses) with one difference: running export Jobs of this server do not refuse it, up
 * to `maxPerServer` of them; past that it is 429 `export_busy`. A fresh `export@` lock (another
 * download being admitted this moment) is waited out briefly rather than refused.
 * @module
 */
import { DomainError } from '../errors.ts';
import type { V1Job } from '@kubernetes/client-node';
import { isConflict } from '../kube/errors.ts';
import type { ServerApi } from '../kube/servers.ts';
import { ANNOTATION_MAINTENANCE, LABEL_EXPORT_MODE, LABEL_MANAGED_BY, LABEL_SERVER } from '../labels.ts';
import { gamePodSelector } from '../maintenance/contracts.ts';
import { MaintenanceBusyError, NotStoppedError, ServerNotFoundError } from '../maintenance/errors.ts';
import { holdState, jobFinished, lockValue } from '../maintenance/holder.ts';
import { fullyStopped } from '../maintenance/server-state.ts';
import type { WorldLock } from '../maintenance/world-lock.ts';
import { MANAGED_BY_EXPORT } from '../job-spec/export-job.ts';
import { sleep } from '../sleep.ts';

/** Too many downloads of this server at once (→ 429 export_busy with Retry-After). */
export class ExportBusyError extends DomainError {
  constructor(running: number, retryAfterSeconds = 30) {
    super('export_busy', 'busy', `${running} downloads of this server are running; retry once one has finished`, { retryAfterSeconds });
  }
}

/** A running download of any kind that holds the world (every export mode but `backup`). */
export function isRunningExport(job: V1Job): boolean {
  const l = job.metadata?.labels ?? {};
  return l[LABEL_MANAGED_BY] === MANAGED_BY_EXPORT && l[LABEL_EXPORT_MODE] !== 'backup' && !jobFinished(job);
}

export interface AdmitOptions {
  namespace: string;
  restartAnnotation: string;
  maxPerServer: number;
  now?: () => Date;
  /** How long a fresh `export@` lock of another admission is waited for. */
  lockWaitMs?: number;
}

/**
 * Runs `create` holding the world as `export`, then gives the lock back (bounded; a failed
 * release lapses by itself). `create` must leave a Job that holds the world when it resolves.
 */
export async function admitExport<T>(servers: ServerApi, lock: WorldLock, name: string, o: AdmitOptions, create: () => Promise<T>): Promise<T> {
  const now = o.now ?? (() => new Date());
  const waitEnd = Date.now() + (o.lockWaitMs ?? 2_000);
  let value: string | undefined;
  for (let conflicts = 0; value === undefined; ) {
    const server = await servers.getServer(o.namespace, name);
    if (!server) throw new ServerNotFoundError(name);
    const pods = await servers.listPods(o.namespace, gamePodSelector(name));
    if (!fullyStopped(server, pods)) throw new NotStoppedError();
    if (server.metadata.annotations?.[o.restartAnnotation]) throw new MaintenanceBusyError();
    const jobs = await servers.listJobs(o.namespace, `${LABEL_SERVER}=${name}`);
    const exports = jobs.filter((j) => j.metadata?.labels?.[LABEL_SERVER] === name && isRunningExport(j));
    if (exports.length >= o.maxPerServer) throw new ExportBusyError(exports.length);
    const held = holdState(name, server.metadata.annotations, jobs.filter((j) => !exports.includes(j)), now()).holder;
    if (held) {
      if (held.source === 'lock' && held.kind === 'export' && Date.now() < waitEnd) {
        await sleep(100);
        continue;
      }
      throw new MaintenanceBusyError(held.kind);
    }
    const v = lockValue('export', now());
    try {
      await servers.patchServer(o.namespace, name, { metadata: { resourceVersion: server.metadata.resourceVersion, annotations: { [ANNOTATION_MAINTENANCE]: v } } });
      value = v;
    } catch (err) {
      if (!isConflict(err) || ++conflicts >= 5) throw isConflict(err) ? new MaintenanceBusyError() : err;
      await sleep(10);
    }
  }
  try {
    return await create();
  } finally {
    // Only our own value is removed (WorldLock.release), never a successor's lock.
    await Promise.race([lock.release(name, value), sleep(10_000)]).catch(() => {});
  }
}
