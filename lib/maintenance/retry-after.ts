/**
 * When a caller refused because the world is held may try again, in whole seconds (the
 * `Retry-After` of a 409 maintenance_in_progress). Only a lock says how long it can last: it lapses
 * at its Grace, so the answer is never later than that. A Job says only what it is, so the answer is
 * what such a holder usually takes: seconds for a file change, longer for anything else. Pure.
 * @module
 */
import { GRACE_MS } from '../protocol/lock-value.ts';
import type { Holder } from './holder.ts';

/** A file change (our file Jobs, edit sessions, Felis's own file Jobs) ends in seconds. */
export const RETRY_FILE_CHANGE_SECONDS = 5;
/** A backup, a restore, a download, the reaper, a migration, a pending restart, an unknown holder. */
export const RETRY_OTHER_SECONDS = 30;
/** Other admissions kept winning the race for the lock: the world is free again in a moment. */
export const RETRY_CONTENDED_SECONDS = 1;

/** The seconds a caller should wait before trying again, for `holder` seen at `now`. */
export function retryAfterSeconds(holder: Pick<Holder, 'kind' | 'source' | 'since'> | undefined, now: Date, opts: { contended?: boolean } = {}): number {
  if (opts.contended) return RETRY_CONTENDED_SECONDS;
  if (!holder) return RETRY_OTHER_SECONDS;
  const usual = holder.kind === 'file-write' || holder.kind === 'config-write' ? RETRY_FILE_CHANGE_SECONDS : RETRY_OTHER_SECONDS;
  // A migration lock never lapses; any other lock holds until Grace after its date.
  if (holder.source !== 'lock' || holder.kind === 'migration' || !holder.since) return usual;
  const at = Date.parse(holder.since);
  if (Number.isNaN(at)) return usual;
  const left = Math.ceil((at + GRACE_MS - now.getTime()) / 1000);
  return Math.max(1, Math.min(usual, left));
}
