/**
 * What the functions need, built once at start from a KubeConfig and the environment: the file
 * editor, the world lock and the gates it backs, the restore-chain settler, the pull placer.
 * @module
 */
import { readFileSync } from 'node:fs';
import type { KubeConfig, V1Job } from '@kubernetes/client-node';
import { load as loadYaml } from 'js-yaml';
import { EditSessions } from '../browse/edit-sessions.ts';
import { type BrowseChannel, BrowseSessions } from '../browse/sessions.ts';
import type { Config } from '../config.ts';
import { Downloads } from '../downloads/downloads.ts';
import { FilesEditor, transferJobSettings } from '../files/editor.ts';
import type { FileGates } from '../files/gates.ts';
import { KubeJobPodApi } from '../kube/job-pods.ts';
import { KubeServerApi, type ServerApi } from '../kube/servers.ts';
import type { Logger } from '../log.ts';
import { MaintenanceGates } from '../maintenance/file-gates.ts';
import { PullPlacer } from '../maintenance/pull-placement.ts';
import { TemplateRestorer } from '../maintenance/restorer.ts';
import { Settler } from '../maintenance/settle.ts';
import { WorldLock } from '../maintenance/world-lock.ts';
import { checkPullEnv } from '../protocol/pull-rules.ts';
import { SyncRunner } from '../runner/sync-runner.ts';
import { DEFAULT_BODY_IDLE_SECONDS, DEFAULT_UPLOAD_CONFIG, DEFAULT_UPLOAD_URL_SECONDS } from '../uploads/config.ts';
import { type UploadChannel, UploadReceivers } from '../uploads/receiver.ts';
import { type SessionChannel, UploadSessions } from '../uploads/sessions.ts';
import { UploadUrls } from '../uploads/url-tickets.ts';

export interface Deps {
  logger: Logger;
  /** Undefined when no worker image is configured: file routes answer 503. */
  editor: FilesEditor | undefined;
  gates: FileGates;
  servers: ServerApi;
  lock: WorldLock;
  settler: Settler;
  /** Places the pulls that ended staged (a settle pass); it places nothing without a worker image. */
  placer: PullPlacer;
  /** List and read through a browse session first; undefined: one-shot Jobs only. */
  browse?: BrowseChannel;
  /** Signed downloads served by export Jobs; undefined without a worker image or a job key. */
  downloads?: Downloads;
  /** Uploads through receiver Jobs; undefined without a worker image or a job key (503). */
  uploads?: UploadChannel;
  /** Resumable upload sessions, on the same terms as `uploads`. */
  uploadSessions?: SessionChannel;
  /** Signs and checks upload URLs' tickets, on the same terms as `uploads`. */
  uploadUrls?: UploadUrls;
}

/**
 * One client for the sync runner and the background ops. With the shared job key, writes stream
 * their content to the Job's Pod; without one it rides in the Job's env (Felis's way). With the
 * key, small mutations go through an edit session when one can be had (FELIS_EDIT_SESSIONS).
 */
const editorOf = (cfg: NonNullable<Config['editor']>, jobs: KubeJobPodApi, browse: Config['browse'], logger: Logger) =>
  new FilesEditor(
    cfg,
    new SyncRunner(jobs),
    jobs,
    browse ? { keyFile: browse.keyFile, pods: jobs } : undefined,
    // Small mutations through an edit session Pod, with the same key and lifetimes as browsing.
    browse?.edits ? new EditSessions(jobs, cfg, browse, { logger }) : undefined,
  );

/** `kc` may be a promise: nothing here calls Kubernetes (or loads its client) until a request does. */
export function buildDeps(kc: KubeConfig | Promise<KubeConfig>, o: Config & { logger: Logger }): Deps {
  // A pull rule its Jobs could not read stops the function here, not every pull Job later.
  if (o.editor?.pullEnv) checkPullEnv(o.editor.pullEnv);
  const servers = new KubeServerApi(kc);
  const lock = new WorldLock(servers, {
    namespace: o.namespace,
    restartAnnotation: o.restartAnnotation,
    joinChanges: o.joinChanges !== false,
    onReleaseError: (err, server) => o.logger.warn({ err, server }, 'world lock release failed; it lapses after its grace period'),
    onLockKept: (server, value) => o.logger.warn({ server, lock: value }, 'a change may still be under way in an edit session that did not answer; the world lock is kept until its grace period ends'),
  });
  const restorer = o.restoreTemplate ? new TemplateRestorer(servers, o.namespace, loadYaml(readFileSync(o.restoreTemplate, 'utf8')) as V1Job) : undefined;
  const jobPods = new KubeJobPodApi(kc);
  const transfer = o.editor && transferJobSettings(o.editor);
  const editor = o.editor ? editorOf(o.editor, jobPods, o.browse, o.logger) : undefined;
  const gates = new MaintenanceGates(servers, lock, { controllerNode: o.controllerNode, readWhileRunning: o.readWhileRunning });
  return {
    logger: o.logger,
    editor,
    browse: o.editor && o.browse ? new BrowseSessions(jobPods, o.editor, o.browse, { logger: o.logger }) : undefined,
    downloads: transfer && o.downloads ? new Downloads(servers, lock, transfer, o.downloads, { restartAnnotation: o.restartAnnotation, readWhileRunning: o.readWhileRunning }) : undefined,
    // Receivers are called with tokens from the same shared key as browse sessions.
    uploads:
      transfer && o.browse
        ? new UploadReceivers(jobPods, transfer, { keyFile: o.browse.keyFile, startTimeoutMs: transfer.timeoutMs, bodyIdleMs: (o.uploads?.bodyIdleSeconds ?? DEFAULT_BODY_IDLE_SECONDS) * 1000 })
        : undefined,
    uploadSessions:
      transfer && o.browse ? new UploadSessions(jobPods, transfer, { ...(o.uploads ?? DEFAULT_UPLOAD_CONFIG), keyFile: o.browse.keyFile, startTimeoutMs: transfer.timeoutMs }) : undefined,
    // Upload URLs open on the same origin as download URLs.
    uploadUrls:
      transfer && o.browse
        ? new UploadUrls({
            keyFile: o.browse.keyFile,
            namespace: o.namespace,
            urlSeconds: o.uploads?.urlSeconds ?? DEFAULT_UPLOAD_URL_SECONDS,
            ...(o.downloads?.baseUrl ? { baseUrl: o.downloads.baseUrl } : {}),
          })
        : undefined,
    gates,
    servers,
    lock,
    settler: new Settler(servers, o.namespace, restorer),
    placer: new PullPlacer({ api: servers, logs: jobPods, namespace: o.namespace, gates, place: editor ? (t, p) => editor.placePull(t, p) : undefined }),
  };
}
