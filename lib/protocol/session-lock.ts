/**
 * The world lock an upload session's writing call carries to its receiver. A session's receiver
 * holds nothing by itself (docs/uploads.md), so it changes the world only inside a call whose
 * sender holds the world's lock (a ticket of its line) at that moment: the begin, each part, the
 * commit, the cancel carry the lock's value in this header, and the receiver judges it as an edit
 * session judges the lock its calls carry (edit-call.ts `leaseHolds`: a `file-write` lock dated
 * within the grace less 30 s). Both sides are here: lib/uploads/sessions.ts sends it,
 * job/serve/receive-session.ts checks it.
 * @module
 */
import { leaseHolds } from './edit-call.ts';

export const SESSION_LOCK_HEADER = 'felis-world-lock';

/** Whether a call carrying this header's value may change the world at `nowMs`. */
export function sessionLockHolds(value: string | string[] | undefined, nowMs: number): boolean {
  return typeof value === 'string' && leaseHolds(value, nowMs);
}
