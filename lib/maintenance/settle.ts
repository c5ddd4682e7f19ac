/**
 * Settling restore chains: a safety-snapshot backup Job labelled `then-restore=pending` holds the
 * world as a restore until someone decides what follows it. One pass lists the pending chains,
 * decides each, starts the restore where it should run, and writes the outcome onto the backup
 * Job's own labels, so the chain survives any restart of ours.
 *
 * Several passes may run at once (our replicas, overlapping triggers, Felis's own settler), so
 * each chain is settled single-flight (see docs/restore-chains.md):
 * - the restore Job's name is derived from the backup Job's uid, so creating it twice fails with
 *   AlreadyExists and a chain can never get two restore Jobs;
 * - a chain whose restore Job already exists is labelled `started`, whatever else is true now;
 * - the label patch carries the resourceVersion that was read, so a pass that decided on stale
 *   facts gets a 409, reads the chain again and decides again (or finds it already settled).
 * @module
 */
import { createHash } from 'node:crypto';
import type { V1Job } from '@kubernetes/client-node';
import { describeKubeError, isConflict } from '../kube/errors.ts';
import { type JobOutcome, jobOutcome } from '../kube/job-facts.ts';
import type { MinecraftServer, ServerApi } from '../kube/servers.ts';
import { ANNOTATION_RESTORE_BACKUP_ID, ANNOTATION_RESTORE_REF, ANNOTATION_THEN_RESTORE_REASON, LABEL_MANAGED_BY, LABEL_SERVER, LABEL_THEN_RESTORE, MANAGED_BY_BACKUP } from '../labels.ts';
import { THEN_RESTORE } from './holder.ts';
import { desiredState } from './server-state.ts';

export const SETTLE_REASONS = {
  snapshot_failed: 'the safety backup failed, so the world was left as it was',
  not_configured: 'restore is not configured',
  server_gone: 'the server no longer exists',
  server_started: 'the server was started before the restore could run',
  restore_busy: 'another restore is running on this world',
} as const;
export type SettleReason = keyof typeof SETTLE_REASONS;

export { MANAGED_BY_BACKUP };
export const MANAGED_BY_RESTORE = 'felis-restore';

/** Selects the restore Jobs of one server, ours and Felis's alike. */
export const restoreJobsOf = (server: string) => `${LABEL_MANAGED_BY}=${MANAGED_BY_RESTORE},${LABEL_SERVER}=${server}`;
const chainsOf = (server?: string) => `${LABEL_MANAGED_BY}=${MANAGED_BY_BACKUP}` + (server ? `,${LABEL_SERVER}=${server}` : `,${LABEL_THEN_RESTORE}=${THEN_RESTORE.pending}`);

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * The one name a chain's restore Job can have: `felis-restore-<server>-<10 hex of sha256(backup
 * uid)>`. A uid is never reused, so two chains never share a name; a server name too long or odd
 * for a 63-character DNS label falls back to `felis-restore-<20 hex>`.
 */
export function restoreJobName(server: string, backupUid: string): string {
  const hex = createHash('sha256').update(backupUid).digest('hex');
  const named = `felis-restore-${server}-${hex.slice(0, 10)}`;
  return named.length <= 63 && DNS_LABEL.test(named) ? named : `felis-restore-${hex.slice(0, 20)}`;
}

/** Everything a decision about one chain depends on, read just before it. */
export interface ChainFacts {
  snapshot: JobOutcome;
  /** The chain's own restore Job (by its derived name) exists. */
  restoreJobExists: boolean;
  restorerConfigured: boolean;
  /** undefined when the server is gone. */
  server: MinecraftServer | undefined;
}

export type Decision = { action: 'leave' } | { action: 'settle'; state: 'started' } | { action: 'settle'; state: 'abandoned'; reason: SettleReason } | { action: 'restore' };

/** What to do with a pending chain, before any restore is attempted. Pure. */
export function decideChain(f: ChainFacts): Decision {
  if (f.snapshot === 'running') return { action: 'leave' };
  // Its restore exists (another pass, or one of ours whose label patch failed): that is the outcome.
  if (f.restoreJobExists) return { action: 'settle', state: 'started' };
  if (f.snapshot === 'failed') return { action: 'settle', state: 'abandoned', reason: 'snapshot_failed' };
  if (!f.restorerConfigured) return { action: 'settle', state: 'abandoned', reason: 'not_configured' };
  if (!f.server) return { action: 'settle', state: 'abandoned', reason: 'server_gone' };
  if (f.server.status?.ready || desiredState(f.server) !== 'Stopped') return { action: 'settle', state: 'abandoned', reason: 'server_started' };
  return { action: 'restore' };
}

export type RestoreOutcome = 'started' | 'busy' | 'gone';

/** How a restore attempt settles the chain. Pure. */
export function decideAfterRestore(outcome: RestoreOutcome): Extract<Decision, { action: 'settle' }> {
  if (outcome === 'started') return { action: 'settle', state: 'started' };
  return { action: 'settle', state: 'abandoned', reason: outcome === 'busy' ? 'restore_busy' : 'server_gone' };
}

export interface RestoreRequest {
  server: string;
  ref: string;
  backupId: string;
  /** The chain's restore Job name (restoreJobName): creating it twice must fail. */
  jobName: string;
}

/** Starts the restore Job a settled chain leads to. Felis owns that Job; how to create it is pluggable. */
export interface Restorer {
  /**
   * `started` once the Job named `jobName` exists (created now or before); `busy` if another
   * restore runs on the world; `gone` if the server vanished. Anything else throws.
   */
  restore(req: RestoreRequest): Promise<RestoreOutcome>;
}

export interface SettledChain {
  job: string;
  server: string;
  state: 'started' | 'abandoned' | 'pending';
  reason?: SettleReason;
  error?: string;
}

/** A chain settled by a concurrent pass is re-read at most this many times before it is left pending. */
const MAX_ATTEMPTS = 5;

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
    const jobs = await this.#api.listJobs(this.#ns, chainsOf());
    const out: SettledChain[] = [];
    for (const job of jobs) {
      if (jobOutcome(job) === 'running') continue;
      const name = job.metadata?.name ?? '';
      const server: string = job.metadata?.labels?.[LABEL_SERVER] ?? '';
      try {
        const settled = await this.#settleChain(job);
        if (settled) out.push(settled);
      } catch (err) {
        out.push({ job: name, server, state: 'pending', error: describeKubeError(err) });
      }
    }
    return out;
  }

  async #settleChain(first: V1Job): Promise<SettledChain | undefined> {
    let job: V1Job | undefined = first;
    for (let attempt = 1; ; attempt++) {
      const name = job.metadata?.name ?? '';
      const server: string = job.metadata?.labels?.[LABEL_SERVER] ?? '';
      const uid: string | undefined = job.metadata?.uid;
      if (!server || !uid) throw new Error(`chain ${name} has no server label or uid`);
      if (job.metadata?.labels?.[LABEL_THEN_RESTORE] !== THEN_RESTORE.pending) return reported(job);
      const jobName = restoreJobName(server, uid);
      const snapshot = jobOutcome(job);
      const restores = snapshot === 'running' ? [] : await this.#api.listJobs(this.#ns, restoreJobsOf(server));
      const facts: ChainFacts = {
        snapshot,
        restoreJobExists: restores.some((j) => j.metadata?.name === jobName),
        restorerConfigured: this.#restorer !== undefined,
        server: snapshot === 'succeeded' ? await this.#api.getServer(this.#ns, server) : undefined,
      };
      let d = decideChain(facts);
      if (d.action === 'leave') return undefined;
      if (d.action === 'restore') {
        const a = job.metadata?.annotations ?? {};
        const outcome = await this.#restorer!.restore({ server, ref: a[ANNOTATION_RESTORE_REF] ?? '', backupId: a[ANNOTATION_RESTORE_BACKUP_ID] ?? '', jobName });
        d = decideAfterRestore(outcome);
      }
      try {
        await this.#mark(name, job.metadata?.resourceVersion, d.state, 'reason' in d ? d.reason : undefined);
        return { job: name, server, state: d.state, ...('reason' in d ? { reason: d.reason } : {}) };
      } catch (err) {
        // Someone else wrote the chain since it was read: read it again and decide again.
        if (!isConflict(err) || attempt >= MAX_ATTEMPTS) throw err;
      }
      job = (await this.#api.listJobs(this.#ns, chainsOf(server))).find((j) => j.metadata?.uid === uid);
      if (!job) throw new Error(`chain ${name} vanished while it was settled`);
    }
  }

  /** A JSON merge patch of the chain's label (and reason), conditional on `resourceVersion`. */
  async #mark(job: string, resourceVersion: string | undefined, state: string, reason?: SettleReason): Promise<void> {
    await this.#api.patchJob(this.#ns, job, {
      metadata: {
        ...(resourceVersion ? { resourceVersion } : {}),
        labels: { [LABEL_THEN_RESTORE]: state },
        ...(reason ? { annotations: { [ANNOTATION_THEN_RESTORE_REASON]: reason } } : {}),
      },
    });
  }
}

/** A chain another pass settled, as its labels now say. */
function reported(job: V1Job): SettledChain {
  const state = job.metadata?.labels?.[LABEL_THEN_RESTORE];
  const reason = job.metadata?.annotations?.[ANNOTATION_THEN_RESTORE_REASON];
  return {
    job: job.metadata?.name ?? '',
    server: job.metadata?.labels?.[LABEL_SERVER] ?? '',
    state: state === THEN_RESTORE.started ? 'started' : state === THEN_RESTORE.abandoned ? 'abandoned' : 'pending',
    ...(reason && reason in SETTLE_REASONS ? { reason: reason as SettleReason } : {}),
  };
}
