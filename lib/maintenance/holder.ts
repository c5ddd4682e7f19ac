/**
 * Who holds a server's world volume: Felis's maintenance rules (docs/world-maintenance.md),
 * pure. A world is held by an unfinished holding Job labelled with the
 * server, by a backup Job in a pending restore chain or marked archive-pending (even when finished),
 * or by a fresh annotation lock on the MinecraftServer. Felis's operator and API apply the same
 * rules to the same labels, so each side sees the other's holders.
 * @module
 */
import type { V1Job } from '@kubernetes/client-node';
import { jobFinished } from '../kube/job-facts.ts';
import {
  ANNOTATION_FILES_CHANGE,
  ANNOTATION_FILES_PATH,
  ANNOTATION_MAINTENANCE,
  FILES_CHANGE_BY,
  LABEL_ARCHIVE_PENDING,
  LABEL_EXPORT_MODE,
  LABEL_FILES_MODE,
  LABEL_MANAGED_BY,
  LABEL_SERVER,
  LABEL_THEN_RESTORE,
  READ_MODES,
} from '../labels.ts';
import { GRACE_MS, lockValue, parseLock, rfc3339 } from '../protocol/lock-value.ts';

export { GRACE_MS, jobFinished, lockValue, parseLock, rfc3339 };

export const KINDS = ['restore', 'backup', 'file-write', 'config-write', 'export', 'reap', 'migration'] as const;
export type HolderKind = (typeof KINDS)[number] | (string & {});

export const THEN_RESTORE = { pending: 'pending', started: 'started', abandoned: 'abandoned' } as const;

/** The holder a Job represents, or undefined for a Job that holds nothing (a read, a build). */
export function jobKind(job: V1Job): HolderKind | undefined {
  const l = job.metadata?.labels ?? {};
  switch (l[LABEL_MANAGED_BY]) {
    case 'felis-restore':
      return 'restore';
    case 'felis-backup':
      return 'backup';
    case 'felis-files': {
      // A missing or unknown mode counts as a write: over-counting is the safe side. The reads
      // (the trash's listing among them) mount the world read-only and hold nothing.
      const mode = l[LABEL_FILES_MODE];
      return mode !== undefined && READ_MODES.has(mode) ? undefined : 'file-write';
    }
    case 'felis-export':
      // Exporting a stored backup does not touch the volume.
      return l[LABEL_EXPORT_MODE] === 'backup' ? undefined : 'export';
    default:
      return undefined;
  }
}

/** A safety-snapshot backup whose restore has not been started or abandoned yet. */
export function restorePending(job: V1Job): boolean {
  const l = job.metadata?.labels ?? {};
  return l[LABEL_MANAGED_BY] === 'felis-backup' && l[LABEL_THEN_RESTORE] === THEN_RESTORE.pending;
}

export function archivePending(job: V1Job): boolean {
  return job.metadata?.labels?.[LABEL_ARCHIVE_PENDING] === 'true';
}

/** RFC 3339 in UTC with second precision, as Go's time.RFC3339 prints it. */
/**
 * What a file Job holding the world is doing: its op (the `files-mode` label) and, for a background
 * op, the path it works on (the `files-path` annotation). Only for naming the holder in a refusal:
 * the holder's kind, which Felis understands, stays `file-write`.
 */
export interface HolderActivity {
  op: string;
  path?: string;
}

/** How a refusal names each file op that holds the world. */
const FILE_OP_LABELS: Record<string, string> = {
  write: 'a file write',
  mkdir: 'a folder creation',
  delete: 'a deletion',
  rename: 'a rename',
  upload: 'a file upload',
  unzip: 'an archive extraction',
  zip: 'an archive packing',
  copy: 'a copy',
  'delete-many': 'a deletion of many files',
  'move-many': 'a move of many files',
  'chmod-many': "a change of many files' modes",
  pull: 'a pull from a URL',
  'pull-place': 'the placing of a pulled file',
};

/** A Job labelled by anyone in the namespace names this: printable, bounded, nothing else trusted. */
const MAX_ACTIVITY_PATH = 160;

function printable(text: string, max: number): string {
  // Control characters (and lone surrogates) would garble a message or a log line.
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '?');
  const chars = Array.from(clean);
  return chars.length > max ? chars.slice(0, max - 1).join('') + '…' : clean;
}

/** The activity of a file Job (our own, or Felis's of the same shape); undefined for any other Job. */
export function filesActivity(job: V1Job): HolderActivity | undefined {
  const l = job.metadata?.labels ?? {};
  if (l[LABEL_MANAGED_BY] !== 'felis-files') return undefined;
  const op = l[LABEL_FILES_MODE];
  if (!op || !Object.hasOwn(FILE_OP_LABELS, op)) return undefined;
  const path = job.metadata?.annotations?.[ANNOTATION_FILES_PATH];
  return path ? { op, path: printable(path, MAX_ACTIVITY_PATH) } : { op };
}

export interface Holder {
  kind: HolderKind;
  /** For a file Job: which op it is, and on what path (see HolderActivity). */
  activity?: HolderActivity;
  source: 'job' | 'lock';
  /** The holding Job's name, for a Job holder. */
  job?: string;
  /** When the hold began: the Job's creation, or the lock's date. */
  since?: string;
}

export interface HoldState {
  holder?: Holder;
  /** A lock annotation that is present but no longer holds (stale, future-dated, or unparsable). */
  staleLock?: string;
}

/** A background file Job of felis-world's own that changes the world (a later change of ours waits for it). */
export function isOurChange(job: V1Job): boolean {
  return job.metadata?.labels?.[LABEL_MANAGED_BY] === 'felis-files' && job.metadata?.annotations?.[ANNOTATION_FILES_CHANGE] === FILES_CHANGE_BY;
}

/**
 * The world's holder at `now`: the first holding Job in list order, else a fresh lock. `jobs` may
 * include other servers' Jobs; only this server's count. `skip` leaves Jobs out (felis-world's own
 * changes, for a change that waits for them in turn).
 */
export function holdState(server: string, annotations: Record<string, string> | undefined, jobs: V1Job[], now: Date, skip?: (job: V1Job) => boolean): HoldState {
  for (const job of jobs) {
    if (job.metadata?.labels?.[LABEL_SERVER] !== server) continue;
    if (skip?.(job)) continue;
    const since = job.metadata?.creationTimestamp ? rfc3339(new Date(job.metadata.creationTimestamp)) : undefined;
    const held = (kind: HolderKind, activity?: HolderActivity): HoldState => ({
      holder: { kind, source: 'job', job: job.metadata?.name, since, ...(activity ? { activity } : {}) },
    });
    if (archivePending(job)) return held('backup');
    if (restorePending(job)) return held('restore');
    if (jobFinished(job)) continue;
    const kind = jobKind(job);
    if (kind) return held(kind, kind === 'file-write' ? filesActivity(job) : undefined);
  }
  const value = annotations?.[ANNOTATION_MAINTENANCE];
  if (value === undefined) return {};
  const lock = parseLock(value);
  if (lock && lockHolds(lock, now)) {
    return { holder: { kind: lock.kind, source: 'lock', since: rfc3339(lock.at) } };
  }
  return { staleLock: value };
}

/** A lock holds when it is a migration (never lapses) or dated within Grace of `now`, either way. */
export function lockHolds(lock: { kind: string; at: Date }, now: Date): boolean {
  if (lock.kind === 'migration') return true;
  const age = now.getTime() - lock.at.getTime();
  return age < GRACE_MS && -age < GRACE_MS;
}

/** Felis's `Holder`: the kind, or undefined when the world is free. */
export function holder(server: string, annotations: Record<string, string> | undefined, jobs: V1Job[], now: Date): HolderKind | undefined {
  return holdState(server, annotations, jobs, now).holder?.kind;
}

/**
 * How a refusal names the holder: a file Job by what it does ("an archive extraction (unzip of
 * plugins/pack.zip)"), anything else by its kind.
 */
export function describeHolder(kind: HolderKind, activity?: HolderActivity): string {
  if (kind !== 'file-write' || !activity) return holderLabel(kind);
  const label = Object.hasOwn(FILE_OP_LABELS, activity.op) ? FILE_OP_LABELS[activity.op]! : holderLabel(kind);
  return activity.path ? `${label} (${activity.op} of ${activity.path})` : label;
}

/** How a refusal names the holder, in the words Felis uses. */
export function holderLabel(kind: HolderKind): string {
  switch (kind) {
    case 'restore':
      return 'a restore';
    case 'backup':
      return 'a backup';
    case 'file-write':
      return 'a file write';
    case 'config-write':
      return 'a settings save';
    case 'export':
      return 'a world export or file download';
    case 'reap':
      return 'the idle-world reaper';
    default:
      return 'another operation';
  }
}
