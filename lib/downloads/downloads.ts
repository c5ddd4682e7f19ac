/**
 * Downloads, function side: sign a URL (stateless; nothing is stored), and serve a signed URL by
 * creating the export Job under the `export` admission, finding its Pod, and asking it for the
 * download with the Job's token (HMAC of the Job name under the shared key, as for browse
 * sessions). The Pod's answer is handed back unread, for the route to stream on. Verbs: servers
 * get and patch (the lock), pods list (the game Pods; the export Pod), jobs list (holders) and
 * create.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import { domainError } from '../errors.ts';
import { EXPORT_PORT, exportCommand, exportJobName, renderExportJob } from '../job-spec/export-job.ts';
import type { JobSettings, Target, WorldState } from '../job-spec/types.ts';
import type { ServerApi } from '../kube/servers.ts';
import { DEFAULT_RESTART_ANNOTATION } from '../maintenance/contracts.ts';
import type { WorldLock } from '../maintenance/world-lock.ts';
import { jobToken, MIN_KEY_BYTES, tokenDigest } from '../protocol/job-token.ts';
import type { RangeAsk } from '../protocol/range.ts';
import { admitExport } from './admission.ts';
import type { DownloadConfig } from './config.ts';
import { requestDownload, waitForExportPod } from './pod.ts';
import { type DownloadClaims, downloadKey, signTicket, verifyTicket } from './signing.ts';

export interface DownloadsOptions {
  /** The job key itself instead of reading `cfg.keyFile` (tests). */
  key?: Buffer;
  now?: () => number;
  restartAnnotation?: string;
  /** The export Pod's port (tests serve on another). */
  port?: number;
  newId?: () => string;
  /** Downloads of a running server admitted too (FELIS_READ_WHILE_RUNNING); absent: on. */
  readWhileRunning?: boolean;
}

export interface Signed {
  ticket: string;
  expiresAt: Date;
}

export class Downloads {
  readonly #servers: ServerApi;
  readonly #lock: WorldLock;
  readonly #settings: JobSettings;
  readonly #cfg: DownloadConfig;
  readonly #now: () => number;
  readonly #restart: string;
  readonly #port: number;
  readonly #newId: () => string;
  readonly #readWhileRunning: boolean;
  #jobKey: Buffer | undefined;

  constructor(servers: ServerApi, lock: WorldLock, settings: JobSettings, cfg: DownloadConfig, opts: DownloadsOptions = {}) {
    this.#servers = servers;
    this.#lock = lock;
    this.#settings = settings;
    this.#cfg = cfg;
    this.#now = opts.now ?? Date.now;
    this.#restart = opts.restartAnnotation ?? DEFAULT_RESTART_ANNOTATION;
    this.#port = opts.port ?? EXPORT_PORT;
    this.#newId = opts.newId ?? (() => randomBytes(8).toString('hex'));
    this.#jobKey = opts.key;
    this.#readWhileRunning = opts.readWhileRunning ?? true;
  }

  get config(): DownloadConfig {
    return this.#cfg;
  }

  /** The shared key; read on first use (and again after a failure: a Secret may arrive late). */
  #key(): Buffer {
    if (!this.#jobKey) {
      let k: Buffer;
      try {
        k = readFileSync(this.#cfg.keyFile);
      } catch {
        throw domainError('export_unavailable', 'downloads are not available: the job key cannot be read');
      }
      if (k.length < MIN_KEY_BYTES) throw domainError('export_unavailable', 'downloads are not available: the job key is too short');
      this.#jobKey = k;
    }
    return this.#jobKey;
  }

  sign(server: string, path: string, dir: boolean, signer: string): Signed {
    const expires = Math.floor(this.#now() / 1000) + this.#cfg.urlSeconds;
    const ticket = signTicket(downloadKey(this.#key()), { namespace: this.#settings.namespace, server, path, dir, expires, signer });
    return { ticket, expiresAt: new Date(expires * 1000) };
  }

  /**
   * The claims of a ticket. A ticket that was not signed here, or was changed, is 404 not_found:
   * to its bearer it is a download that does not exist, exactly like a spent or unknown Felis
   * ticket, and a 403 would only invite retrying with credentials that cannot help. An expired one
   * is 410 export_expired: sign a new URL.
   */
  verify(ticket: string): DownloadClaims {
    const v = verifyTicket(downloadKey(this.#key()), ticket, this.#settings.namespace, this.#now());
    if (v.ok) return v.claims;
    if (v.why === 'expired') throw domainError('export_expired', 'this download link has expired; ask for a new one');
    throw domainError('not_found', 'no such download');
  }

  /**
   * Starts the export Job for `claims` (holding the world as `export` while it runs) and opens
   * the download from its Pod. The answer is the Pod's response, status and body unread, and the
   * world's state when the Job was admitted (`running`: the game may be saving what is sent).
   */
  async open(t: Target, claims: DownloadClaims, signal: AbortSignal, ask: RangeAsk = {}): Promise<{ job: string; response: http.IncomingMessage; worldState: WorldState }> {
    const key = this.#key();
    const id = this.#newId();
    const name = exportJobName(t.server, id);
    const token = jobToken(key, name);
    const job = renderExportJob({
      ...this.#settings,
      command: exportCommand(this.#settings.command),
      server: t.server,
      exportId: id,
      worldPvc: t.world.claim,
      nodeName: t.world.node,
      path: claims.path,
      dir: claims.dir,
      tokenSha256: tokenDigest(token),
      idleSeconds: this.#cfg.idleSeconds,
      deadlineSeconds: this.#cfg.deadlineSeconds,
    });
    const ns = this.#settings.namespace;
    const admitted = await admitExport(
      this.#servers,
      this.#lock,
      t.server,
      { namespace: ns, restartAnnotation: this.#restart, maxPerServer: this.#cfg.maxPerServer, readWhileRunning: this.#readWhileRunning },
      () => this.#servers.createJob(ns, job),
    );
    const deadline = Date.now() + this.#cfg.startTimeoutMs;
    const ip = await waitForExportPod(this.#servers, ns, id, deadline, signal);
    const response = await requestDownload(ip, this.#port, token, deadline, signal, ask);
    return { job: name, response, worldState: admitted.worldState };
  }
}
