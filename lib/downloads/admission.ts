/**
 * Admitting a download: the world lock of kind `export` around the creation of the export Job,
 * given back once the Job exists (the Job then holds the world until it ends, as Felis's export
 * Jobs do). It is the lock's own admission (the server fully stopped, no restart pending, nothing
 * else holding the world, the lock written under the resourceVersion that was read, so a start
 * racing it loses) with two differences: running export Jobs of this server do not refuse it, up
 * to `maxPerServer` of them; past that it is 429 `export_busy`. And with `readWhileRunning` a
 * running server does not refuse it either: the export Job only reads, beside the game
 * (lib/maintenance/running-reads.ts). A fresh `export@` lock (another download being admitted this
 * moment) is waited out briefly rather than refused.
 * @module
 */

import type { V1Job } from '@kubernetes/client-node';
import { DomainError } from '../errors.ts';
import { MANAGED_BY_EXPORT } from '../job-spec/export-job.ts';
import type { WorldState } from '../job-spec/types.ts';
import { isConflict } from '../kube/errors.ts';
import type { ServerApi } from '../kube/servers.ts';
import { ANNOTATION_MAINTENANCE, LABEL_EXPORT_MODE, LABEL_MANAGED_BY, LABEL_SERVER } from '../labels.ts';
import { gamePodSelector } from '../maintenance/contracts.ts';
import { MaintenanceBusyError, NotStoppedError, ServerNotFoundError } from '../maintenance/errors.ts';
import { holdState, jobFinished, lockValue } from '../maintenance/holder.ts';
import { worldStateOf } from '../maintenance/running-reads.ts';
import type { WorldLock } from '../maintenance/world-lock.ts';
import { sleep } from '../sleep.ts';

/** When a download refused as `export_busy` may try again: about when one of the others ends. */
export const EXPORT_RETRY_AFTER_SECONDS = 30;

/** Too many downloads of this server at once (→ 429 export_busy with Retry-After). */
export class ExportBusyError extends DomainError {
  constructor(running: number, retryAfterSeconds = EXPORT_RETRY_AFTER_SECONDS) {
    super('export_busy', 'busy', `${running === 1 ? '1 download of this server is' : `${running} downloads of this server are`} running; retry once one has finished`, { retryAfterSeconds });
    this.name = 'ExportBusyError';
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
  /** A running (or starting) server admits the download too (FELIS_READ_WHILE_RUNNING); absent: on. */
  readWhileRunning?: boolean;
}

/**
 * Runs `create` holding the world as `export`, then gives the lock back (bounded; a failed
 * release lapses by itself). `create` must leave a Job that holds the world when it resolves.
 * Answers what `create` did and the world's state on the read that admitted it: `running` when
 * the download reads beside the game.
 */
export async function admitExport<T>(servers: ServerApi, lock: WorldLock, name: string, o: AdmitOptions, create: () => Promise<T>): Promise<{ created: T; worldState: WorldState }> {
  const now = o.now ?? (() => new Date());
  const waitEnd = Date.now() + (o.lockWaitMs ?? 2_000);
  let value: string | undefined;
  let worldState: WorldState = 'stopped';
  for (let conflicts = 0; value === undefined; ) {
    const server = await servers.getServer(o.namespace, name);
    if (!server) throw new ServerNotFoundError(name);
    const pods = await servers.listPods(o.namespace, gamePodSelector(name));
    worldState = worldStateOf(server, pods);
    if (worldState === 'running' && !(o.readWhileRunning ?? true)) throw new NotStoppedError();
    if (server.metadata.annotations?.[o.restartAnnotation]) throw new MaintenanceBusyError();
    const jobs = await servers.listJobs(o.namespace, `${LABEL_SERVER}=${name}`);
    const exports = jobs.filter((j) => j.metadata?.labels?.[LABEL_SERVER] === name && isRunningExport(j));
    if (exports.length >= o.maxPerServer) throw new ExportBusyError(exports.length);
    const at = now();
    const held = holdState(
      name,
      server.metadata.annotations,
      jobs.filter((j) => !exports.includes(j)),
      at,
    ).holder;
    if (held) {
      if (held.source === 'lock' && held.kind === 'export' && Date.now() < waitEnd) {
        await sleep(100);
        continue;
      }
      throw MaintenanceBusyError.heldBy(held, at);
    }
    const v = lockValue('export', now());
    try {
      await servers.patchServer(o.namespace, name, { metadata: { resourceVersion: server.metadata.resourceVersion, annotations: { [ANNOTATION_MAINTENANCE]: v } } });
      value = v;
    } catch (err) {
      if (!isConflict(err) || ++conflicts >= 5) throw isConflict(err) ? new MaintenanceBusyError(undefined, undefined, { contended: true }) : err;
      await sleep(10);
    }
  }
  try {
    return { created: await create(), worldState };
  } finally {
    // Only our own value is removed (WorldLock.release), never a successor's lock.
    await Promise.race([lock.release(name, value), sleep(10_000)]).catch(() => {});
  }
}
