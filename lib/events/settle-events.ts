/**
 * The Knative source events that start a settle pass. A PingSource tick always does (it is the
 * safety net for a lost change event). An ApiServerSource change of a Job does when the Job may be
 * a restore chain's backup: in Resource mode the event carries the Job, so a Job that is not a
 * backup Job (a file Job, a restore Job) is skipped rather than costing a pass; in Reference mode
 * it carries only the name, so every Job change starts a pass.
 * @module
 */
import { LABEL_MANAGED_BY, MANAGED_BY_BACKUP } from '../labels.ts';
import type { ParsedEvent } from './parse.ts';

export const PING_TYPE = 'dev.knative.sources.ping';
export const JOB_CHANGE_TYPES = ['add', 'update', 'delete'].flatMap((v) => [`dev.knative.apiserver.resource.${v}`, `dev.knative.apiserver.ref.${v}`]);

export function isSettleTrigger(ev: ParsedEvent): boolean {
  if (ev.type === PING_TYPE) return true;
  const d = ev.data as { kind?: unknown; metadata?: { labels?: Record<string, unknown> } } | undefined;
  if (!d || typeof d !== 'object') return true;
  if (d.kind !== undefined && d.kind !== 'Job') return false;
  if (ev.type.startsWith('dev.knative.apiserver.resource.') && d.metadata && typeof d.metadata === 'object') {
    return d.metadata.labels?.[LABEL_MANAGED_BY] === MANAGED_BY_BACKUP;
  }
  return true;
}
