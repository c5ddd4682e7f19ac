/**
 * Is a Job made for an earlier delivery of this event the record of this very request? A
 * redelivery is matched on the event's source and id (the Job's event label, by which it was
 * found) and the digest of the request it carries (the event-request label). Jobs made before the
 * digest was recorded carry none: they are matched on server, op and path, as they were then.
 * Pure.
 * @module
 */
import type { V1Job } from '@kubernetes/client-node';
import { ANNOTATION_FILES_PATH, fileOpOf, LABEL_EVENT_REQUEST, LABEL_SERVER } from '../labels.ts';
import { EventConflictError } from './errors.ts';
import type { EventScope } from './scope.ts';

/** Throws 409 event_conflict unless `job` was made for the request `ev` carries. */
export function matchEarlier(job: V1Job, ev: EventScope, want: { server: string; op: string; path?: string }): void {
  const labels = job.metadata?.labels ?? {};
  const name = job.metadata?.name ?? '';
  if (labels[LABEL_SERVER] !== want.server || fileOpOf(labels) !== want.op) throw new EventConflictError(name);
  if (want.path !== undefined && job.metadata?.annotations?.[ANNOTATION_FILES_PATH] !== want.path) throw new EventConflictError(name);
  const recorded = labels[LABEL_EVENT_REQUEST];
  if (recorded !== undefined && recorded !== ev.request) throw new EventConflictError(name);
}

/** The render parameters that label a Job with the event it serves (none for plain HTTP). */
export function eventParams(ev: EventScope | undefined): { eventKey?: string; eventRequest?: string } {
  if (!ev) return {};
  return { eventKey: ev.key, ...(ev.request ? { eventRequest: ev.request } : {}) };
}
