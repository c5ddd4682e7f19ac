/**
 * Label and annotation keys shared with the original Felis operator and API. They are a contract:
 * Felis recognises our Jobs as world holders, and we recognise theirs, only because these match.
 *
 * @module
 */

export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const LABEL_COMPONENT = 'app.kubernetes.io/component';
export const LABEL_SERVER = 'felis.lolicon.best/server';
export const LABEL_FILES_OP = 'felis.lolicon.best/files-op';
export const LABEL_FILES_MODE = 'felis.lolicon.best/files-mode';
/**
 * The files-mode values of Jobs that hold nothing. Felis's rule passes by `list` and `read` and
 * counts any other mode as a writer; ours passes by these. A Job of any other op that holds nothing
 * (a pull's download, an op of ours Felis does not know) is labelled `read`, so neither counts it.
 */
export const READ_MODES: ReadonlySet<string> = new Set(['list', 'read', 'search', 'trash-list']);
export const LABEL_FILES_ASYNC = 'felis.lolicon.best/files-async';
export const LABEL_EXPORT_MODE = 'felis.lolicon.best/export-mode';
export const LABEL_THEN_RESTORE = 'felis.lolicon.best/then-restore';
export const LABEL_ARCHIVE_PENDING = 'felis.lolicon.best/archive-pending';
/** Ours only: the key (hash of source and id) of the CloudEvent a file Job was created for. */
export const LABEL_EVENT = 'felis.lolicon.best/event';
/** Ours only: a digest of the request that CloudEvent carried; a redelivery must carry the same. */
export const LABEL_EVENT_REQUEST = 'felis.lolicon.best/event-request';
/**
 * Ours only: marks a pull Job, the only file Job the NetworkPolicy lets out
 * (knative/job-network-policy.yaml). A pull Job is labelled mode `read` (it holds no world: it
 * downloads into a staging folder of its own, docs/pulls.md), so this label is what names its op.
 */
export const LABEL_FILES_PULL = 'felis.lolicon.best/files-pull';
/**
 * Ours only: the op of a Job labelled mode `read` for the holder rules' sake though its op is
 * another, one Felis does not know that holds nothing (a disk usage): what names its op, for the
 * ops listing and a redelivered event's match (lib/events/redelivery.ts).
 */
export const LABEL_FILES_READ_OP = 'felis.lolicon.best/files-read-op';
/**
 * Ours only: marks a follow's Job (a tail serving appended lines on its Pod address, labelled mode
 * `read` with read-op `tail`): the NetworkPolicy lets files-tail reach it, and files-tail counts a
 * server's unfinished ones to bound how many follows run at once.
 */
export const LABEL_FILES_FOLLOW = 'felis.lolicon.best/files-follow';

export const ANNOTATION_FILES_PATH = 'felis.lolicon.best/files-path';
/**
 * felis-world's own, on a file Job whose op was stopped mid-placement: what the op that recovered
 * the world after it made of it (`new`, `old`, `gone`), and that op's id.
 */
export const ANNOTATION_RECOVERED = 'felis.lolicon.best/recovered';
export const ANNOTATION_RECOVERED_BY = 'felis.lolicon.best/recovered-by';
export const ANNOTATION_MAINTENANCE = 'felis.lolicon.best/maintenance';
/**
 * felis-world's own, on a MinecraftServer: the line of its file changes holding the world beside
 * Felis's lock (lib/maintenance/world-queue.ts). Felis reads only the lock.
 */
export const ANNOTATION_FILES_QUEUE = 'felis.lolicon.best/files-queue';
/**
 * felis-world's own, on a background file Job that changes the world: a later change of felis-world
 * waits for it in turn rather than refusing (a Job of Felis's own shape without it is refused).
 */
export const ANNOTATION_FILES_CHANGE = 'felis.lolicon.best/files-change';
export const FILES_CHANGE_BY = 'felis-world';
/** The annotation every file Job of ours that changes the world carries. */
export const CHANGE_MARK: Readonly<Record<string, string>> = Object.freeze({ [ANNOTATION_FILES_CHANGE]: FILES_CHANGE_BY });
/**
 * felis-world's own, on a pull Job whose download was placed (or refused) by the placing pass
 * (lib/maintenance/pull-placement.ts): the placement's outcome as a result payload
 * (`{"files":1,"bytes":…,"to":…}` or `{"code":…,"error":…}`). The ops listing shows it.
 */
export const ANNOTATION_PULL_PLACED = 'felis.lolicon.best/pull-placed';
export const ANNOTATION_RESTORE_REF = 'felis.lolicon.best/restore-ref';
export const ANNOTATION_RESTORE_BACKUP_ID = 'felis.lolicon.best/restore-backup-id';
export const ANNOTATION_THEN_RESTORE_REASON = 'felis.lolicon.best/then-restore-reason';

export const MANAGED_BY_FILES = 'felis-files';
/** The managed-by of Felis's backup Jobs (a restore chain's first link). */
export const MANAGED_BY_BACKUP = 'felis-backup';
export const COMPONENT_WORLD_FILES = 'world-files';
/** The one container of a file Job; the log is read from it by name. */
export const FILES_CONTAINER = 'files';

/**
 * Ours only: the upload session a receiver Job serves (32 hex); every Job of the session has it. It
 * also says what the Job is, beside its `files-mode: read`: an upload session's receiver.
 */
export const LABEL_UPLOAD_SESSION = 'felis.lolicon.best/upload-session';

/**
 * The op a file Job of ours does: its mode label, but `pull` for a pull's download, `upload` for
 * an upload session's receiver and the op a read-op label names, which are labelled mode `read` so
 * that neither Felis nor felis-world counts them as holding the world.
 */
export function fileOpOf(labels: Readonly<Record<string, string>> | undefined): string {
  if (labels?.[LABEL_FILES_PULL] === 'true') return 'pull';
  const readOp = labels?.[LABEL_FILES_READ_OP];
  if (readOp) return readOp;
  if (labels?.[LABEL_UPLOAD_SESSION] !== undefined) return 'upload';
  return labels?.[LABEL_FILES_MODE] ?? '';
}
