/**
 * The functions' configuration, read once from the environment (the Knative service's env). Every
 * variable is one line of `VARIABLES`: its reader says what it accepts and its default. Without
 * FELIS_IMAGE there is no editor, and file routes answer 503 files_unavailable, as Felis does.
 *
 * The readers (lib/env-readers.ts) are plain functions, not a schema library: this runs before a
 * woken function can answer its readiness probe.
 * @module
 */

import { type BrowseConfig, browseConfigFromEnv } from './browse/config.ts';
import { type DownloadConfig, downloadConfigFromEnv } from './downloads/config.ts';
import { accepted, anyText, count, oneOf, optional, type Reader, readVariables, text, wholeNumber } from './env-readers.ts';
import type { EditorConfig } from './files/editor.ts';
import { ASYNC_CPU, ASYNC_DEADLINE_SECONDS, ASYNC_TTL_SECONDS, DEFAULT_CPU, DEFAULT_MEMORY, QUANTITY } from './job-spec/resources.ts';
import { COPY_SYNC_MAX_BYTES } from './protocol/limits.ts';
import { parseTrashEnabled, parseTrashSeconds } from './protocol/trash-env.ts';
import { type UploadConfig, uploadConfigFromEnv } from './uploads/config.ts';

/** A pull rule list, as far as its characters go (the pull Job parses it exactly, job/pull/guard.ts). */
/** A CPU request and limit: a Kubernetes quantity, and more than nothing. */
const positiveQuantity = (q: string) => QUANTITY.test(q) && !q.startsWith('-') && Number.parseFloat(q) > 0;

/** Every variable the functions read at start, in the order they are checked. Add new ones here. */
const VARIABLES = {
  FELIS_NAMESPACE: text('minecraft'),
  FELIS_IMAGE: optional,
  FELIS_FILES_COMMAND: text('/usr/local/bin/felis files'),
  FELIS_JOB_SERVICE_ACCOUNT: text('felis-restore'),
  FELIS_WORLDS_ROOT: text('/data'),
  FELIS_JOB_DEADLINE_SECONDS: count(120),
  FELIS_JOB_TTL_SECONDS: count(120),
  FELIS_FILES_TIMEOUT_SECONDS: count(90),
  FELIS_JOB_CPU: anyText(DEFAULT_CPU),
  FELIS_JOB_MEMORY: anyText(DEFAULT_MEMORY),
  // Background ops (unzip, zip): a longer deadline, a longer TTL (how long an ended op stays listed), more CPU.
  FELIS_ASYNC_JOB_DEADLINE_SECONDS: wholeNumber(ASYNC_DEADLINE_SECONDS, 1, 7 * 86_400),
  FELIS_ASYNC_JOB_TTL_SECONDS: wholeNumber(ASYNC_TTL_SECONDS, 0, 7 * 86_400),
  FELIS_ASYNC_JOB_CPU: accepted(ASYNC_CPU, positiveQuantity, 'a Kubernetes CPU quantity above 0, such as 1 or 1500m'),
  // A copy of a regular file up to this size is answered synchronously (200); larger ones, and folders, run in the background.
  FELIS_COPY_SYNC_MAX_BYTES: wholeNumber(COPY_SYNC_MAX_BYTES, 0, COPY_SYNC_MAX_BYTES),
  FELIS_JOB_RUN_AS_USER: count(0),
  FELIS_JOB_RUN_AS_GROUP: count(0),
  FELIS_JOB_FS_GROUP: count(0),
  FELIS_RESTORE_TEMPLATE: optional,
  FELIS_RESTART_ANNOTATION: optional,
  FELIS_CONTROLLER_NODE: optional,
  // File changes on a held world join felis-world's line and run in turn (off: Felis's rule, 409 while held).
  FELIS_JOIN_CHANGES: oneOf(['on', 'off'], 'on'),
  // Reads (list, read, search, the trash listing, downloads) beside a running game; off: Felis's gate, every file call needs the server stopped.
  FELIS_READ_WHILE_RUNNING: oneOf(['on', 'off'], 'on'),
  // Pulls (files-pull): the operator's rules and bounds, passed to each pull Job's env and enforced there.
  // Read as the pull Job reads them when the routes load (lib/http/deps.ts), off the start-up path.
  FELIS_PULL_ALLOW: anyText(''),
  FELIS_PULL_DENY: anyText(''),
  FELIS_PULL_PORTS: anyText(''),
  FELIS_PULL_MAX_BYTES: wholeNumber(4 * 1024 ** 3, 1),
  FELIS_PULL_CONNECT_TIMEOUT_SECONDS: wholeNumber(15, 1, 600),
  FELIS_PULL_IDLE_TIMEOUT_SECONDS: wholeNumber(60, 1, 3600),
  // The undo trash (job/trash/): on or off, and how long a record is kept; told to every mutation
  // Job with the caller's name (lib/job-spec/trash.ts). Read as the Job reads them.
  FELIS_TRASH: parseTrashEnabled,
  FELIS_TRASH_SECONDS: parseTrashSeconds,
} satisfies Record<string, Reader<unknown>>;

export interface Config {
  namespace: string;
  /** Undefined when no worker image is configured. */
  editor: EditorConfig | undefined;
  /** Path of a restore Job template (YAML or JSON); without one, chains settle as not_configured. */
  restoreTemplate?: string;
  /** The annotation Felis's restart endpoint writes (default in lib/maintenance/contracts.ts). */
  restartAnnotation?: string;
  /** Where a Job runs when the server names no node of its own (Felis's controller node). */
  controllerNode?: string;
  /** File changes join felis-world's line on a held world (lib/maintenance/world-line.ts); false keeps Felis's 409. */
  joinChanges?: boolean;
  /** Reads let in while the server runs (lib/maintenance/running-reads.ts); absent: on. */
  readWhileRunning?: boolean;
  /** Browse sessions for list and read; off (one-shot Jobs only) without FELIS_JOB_KEY_FILE. */
  browse?: BrowseConfig;
  /** Signed downloads; off (503 export_unavailable) without FELIS_JOB_KEY_FILE. */
  downloads?: DownloadConfig;
  /** Upload sessions' idle period and receiver lifetime (uploads need the job key too). */
  uploads?: UploadConfig;
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): Config {
  const e = readVariables(VARIABLES, env);
  const browse = browseConfigFromEnv(env);
  const downloads = downloadConfigFromEnv(env);
  const editor: EditorConfig | undefined = e.FELIS_IMAGE
    ? {
        namespace: e.FELIS_NAMESPACE,
        image: e.FELIS_IMAGE,
        command: e.FELIS_FILES_COMMAND.split(/\s+/).filter(Boolean),
        serviceAccount: e.FELIS_JOB_SERVICE_ACCOUNT,
        worldsRoot: e.FELIS_WORLDS_ROOT,
        deadlineSeconds: e.FELIS_JOB_DEADLINE_SECONDS,
        ttlSeconds: e.FELIS_JOB_TTL_SECONDS,
        timeoutMs: e.FELIS_FILES_TIMEOUT_SECONDS * 1000,
        cpu: e.FELIS_JOB_CPU,
        memory: e.FELIS_JOB_MEMORY,
        asyncDeadlineSeconds: e.FELIS_ASYNC_JOB_DEADLINE_SECONDS,
        asyncTtlSeconds: e.FELIS_ASYNC_JOB_TTL_SECONDS,
        asyncCpu: e.FELIS_ASYNC_JOB_CPU,
        copySyncMaxBytes: e.FELIS_COPY_SYNC_MAX_BYTES,
        runAsUser: e.FELIS_JOB_RUN_AS_USER,
        runAsGroup: e.FELIS_JOB_RUN_AS_GROUP,
        fsGroup: e.FELIS_JOB_FS_GROUP,
        pullEnv: {
          ...(e.FELIS_PULL_ALLOW.trim() ? { FELIS_PULL_ALLOW: e.FELIS_PULL_ALLOW.trim() } : {}),
          ...(e.FELIS_PULL_DENY.trim() ? { FELIS_PULL_DENY: e.FELIS_PULL_DENY.trim() } : {}),
          ...(e.FELIS_PULL_PORTS.trim() ? { FELIS_PULL_PORTS: e.FELIS_PULL_PORTS.trim() } : {}),
          FELIS_PULL_MAX_BYTES: String(e.FELIS_PULL_MAX_BYTES),
          FELIS_PULL_CONNECT_TIMEOUT_SECONDS: String(e.FELIS_PULL_CONNECT_TIMEOUT_SECONDS),
          FELIS_PULL_IDLE_TIMEOUT_SECONDS: String(e.FELIS_PULL_IDLE_TIMEOUT_SECONDS),
        },
        // The actor is the caller's, filled in for each Job (lib/job-spec/trash.ts).
        trash: { enabled: e.FELIS_TRASH, seconds: e.FELIS_TRASH_SECONDS, actor: '' },
      }
    : undefined;
  return {
    namespace: e.FELIS_NAMESPACE,
    editor,
    restoreTemplate: e.FELIS_RESTORE_TEMPLATE,
    restartAnnotation: e.FELIS_RESTART_ANNOTATION,
    controllerNode: e.FELIS_CONTROLLER_NODE,
    joinChanges: e.FELIS_JOIN_CHANGES === 'on',
    readWhileRunning: e.FELIS_READ_WHILE_RUNNING === 'on',
    ...(browse ? { browse } : {}),
    ...(downloads ? { downloads } : {}),
    uploads: uploadConfigFromEnv(env),
  };
}
