/**
 * The Knative source events that start a settle pass, and which: restore chains, pull placements,
 * or both. A PingSource tick starts both (it is the safety net for a lost change event). An
 * ApiServerSource change of a Job does when the Job may be a restore chain's backup (chains) or one
 * of our pull Jobs (pulls: a pull that ended staged is placed, lib/maintenance/pull-placement.ts):
 * in Resource mode the event carries the Job, so any other Job (a file Job, a restore Job) is
 * skipped rather than costing a pass; in Reference mode it carries only the name, so every Job
 * change starts both.
 * @module
 */
import { LABEL_FILES_PULL, LABEL_MANAGED_BY, MANAGED_BY_BACKUP, MANAGED_BY_FILES } from '../labels.ts';
import type { ParsedEvent } from './parse.ts';

export const PING_TYPE = 'dev.knative.sources.ping';
export const JOB_CHANGE_TYPES = ['add', 'update', 'delete'].flatMap((v) => [`dev.knative.apiserver.resource.${v}`, `dev.knative.apiserver.ref.${v}`]);

/** What a pass settles. */
export type SettleWork = 'chains' | 'pulls' | 'all';

/** The pass an event starts, or undefined for one that starts none. */
export function settleWork(ev: ParsedEvent): SettleWork | undefined {
  if (ev.type === PING_TYPE) return 'all';
  const d = ev.data as { kind?: unknown; metadata?: { labels?: Record<string, unknown> } } | undefined;
  if (!d || typeof d !== 'object') return 'all';
  if (d.kind !== undefined && d.kind !== 'Job') return undefined;
  if (ev.type.startsWith('dev.knative.apiserver.resource.') && d.metadata && typeof d.metadata === 'object') {
    const labels = d.metadata.labels ?? {};
    if (labels[LABEL_MANAGED_BY] === MANAGED_BY_BACKUP) return 'chains';
    if (labels[LABEL_MANAGED_BY] === MANAGED_BY_FILES && labels[LABEL_FILES_PULL] === 'true') return 'pulls';
    return undefined;
  }
  return 'all';
}
