/**
 * Settling restore chains (felis-behaviour §7.12): a safety-snapshot backup Job labelled
 * `then-restore=pending` holds the world as a restore until someone decides what follows it. One
 * pass lists the pending chains, decides each, starts the restore where it should run, and writes
 * the outcome onto the Job's own labels — so the chain survives any restart of ours.
 * @module
 */
import type { V1Job } from '@kubernetes/client-node';
import {
  ANNOTATION_RESTORE_BACKUP_ID,
  ANNOTATION_RESTORE_REF,
  ANNOTATION_THEN_RESTORE_REASON,
  LABEL_MANAGED_BY,
  LABEL_SERVER,
  LABEL_THEN_RESTORE,
} from '../labels.ts';
import type { MinecraftServer, ServerApi } from '../kube/servers.ts';
import { describeKubeError } from '../kube/errors.ts';
import { THEN_RESTORE } from './holder.ts';
import { desiredState } from './server-state.ts';

export type SnapshotState = 'running' | 'succeeded' | 'failed';

export const SETTLE_REASONS = {
  snapshot_failed: 'the safety backup failed, so the world was left as it was',
  not_configured: 'restore is not configured',
  server_gone: 'the server no longer exists',
  server_started: 'the server was started before the restore could run',
  restore_busy: 'another restore is running on this world',
} as const;
export type SettleReason = keyof typeof SETTLE_REASONS;

export function snapshotState(job: V1Job): SnapshotState {
  for (const c of job.status?.conditions ?? []) {
    if (c.status !== 'True') continue;
    if (c.type === 'Complete' || c.type === 'SuccessCriteriaMet') return 'succeeded';
    if (c.type === 'Failed' || c.type === 'FailureTarget') return 'failed';
  }
  return 'running';
}

export type Decision = { action: 'leave' } | { action: 'abandon'; reason: SettleReason } | { action: 'restore' };

/** What to do with a pending chain, before any restore is attempted. Pure. */
export function decideChain(snapshot: SnapshotState, restorerConfigured: boolean, server: MinecraftServer | undefined): Decision {
  if (snapshot === 'running') return { action: 'leave' };
  if (snapshot === 'failed') return { action: 'abandon', reason: 'snapshot_failed' };
  if (!restorerConfigured) return { action: 'abandon', reason: 'not_configured' };
  if (!server) return { action: 'abandon', reason: 'server_gone' };
  if (server.status?.ready || desiredState(server) !== 'Stopped') return { action: 'abandon', reason: 'server_started' };
  return { action: 'restore' };
}

/** Starts the restore Job a settled chain leads to. Felis owns that Job; how to create it is pluggable. */
export interface Restorer {
  /** `started` once the restore Job exists; `busy` if a restore already runs; `gone` if the server vanished. */
  restore(server: string, ref: string, backupId: string): Promise<'started' | 'busy' | 'gone'>;
}

export interface SettledChain {
  job: string;
  server: string;
  state: 'started' | 'abandoned' | 'pending';
  reason?: SettleReason;
  error?: string;
}

export class Settler {
  readonly #api: ServerApi;
  readonly #ns: string;
  readonly #restorer: Restorer | undefined;

  constructor(api: ServerApi, namespace: string, restorer?: Restorer) {
    this.#api = api;
    this.#ns = namespace;
    this.#restorer = restorer;
  }

  /** One pass over every pending chain. A chain whose restore failed to start stays pending for the next. */
  async settleOnce(): Promise<SettledChain[]> {
    const jobs = await this.#api.listJobs(this.#ns, `${LABEL_MANAGED_BY}=felis-backup,${LABEL_THEN_RESTORE}=${THEN_RESTORE.pending}`);
    const out: SettledChain[] = [];
    for (const job of jobs) {
      const name = job.metadata?.name ?? '';
      const server = job.metadata?.labels?.[LABEL_SERVER] ?? '';
      const snapshot = snapshotState(job);
      if (snapshot === 'running') continue;
      try {
        const mc = server ? await this.#api.getServer(this.#ns, server) : undefined;
        const d = decideChain(snapshot, this.#restorer !== undefined, mc);
        if (d.action === 'leave') continue;
        if (d.action === 'abandon') {
          await this.#mark(name, THEN_RESTORE.abandoned, d.reason);
          out.push({ job: name, server, state: 'abandoned', reason: d.reason });
          continue;
        }
        const a = job.metadata?.annotations ?? {};
        const outcome = await this.#restorer!.restore(server, a[ANNOTATION_RESTORE_REF] ?? '', a[ANNOTATION_RESTORE_BACKUP_ID] ?? '');
        if (outcome === 'started') {
          await this.#mark(name, THEN_RESTORE.started);
          out.push({ job: name, server, state: 'started' });
        } else {
          const reason: SettleReason = outcome === 'busy' ? 'restore_busy' : 'server_gone';
          await this.#mark(name, THEN_RESTORE.abandoned, reason);
          out.push({ job: name, server, state: 'abandoned', reason });
        }
      } catch (err) {
        out.push({ job: name, server, state: 'pending', error: describeKubeError(err) });
      }
    }
    return out;
  }

  async #mark(job: string, state: string, reason?: SettleReason): Promise<void> {
    await this.#api.patchJob(this.#ns, job, {
      metadata: {
        labels: { [LABEL_THEN_RESTORE]: state },
        ...(reason ? { annotations: { [ANNOTATION_THEN_RESTORE_REASON]: reason } } : {}),
      },
    });
  }
}
