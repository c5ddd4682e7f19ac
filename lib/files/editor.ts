/**
 * The file operations as a caller sees them: each renders a file Job, runs it through the
 * SyncRunner, and decodes the result. No HTTP here.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { MAX_WRITE_BYTES, renderFilesJob, type JobParams } from '../job-spec/render.ts';
import { mutates, type Op } from '../job-spec/ops.ts';
import { parseResultPayload } from '../protocol/result-parse.ts';
import { JobLostError, RunnerError } from '../runner/errors.ts';
import type { SyncRunner } from '../runner/sync-runner.ts';
import { EventAnswerGoneError } from '../events/errors.ts';
import { eventParams, matchEarlier } from '../events/redelivery.ts';
import { currentEvent } from '../events/scope.ts';
import { LABEL_EVENT, LABEL_FILES_MODE, LABEL_SERVER } from '../labels.ts';
import { BackgroundOps, longJobCpu, type AsyncSettings, type BackgroundApi, type StartRequest } from '../ops/background.ts';
import type { OpView } from '../ops/view.ts';
import { decodeList, decodeRead, decodeWrite, checkResult, type Listing, type ReadFile } from './decode.ts';
import { FileEditError } from './errors.ts';

export interface World {
  claim: string;
  node?: string;
}

/** A server and where its world lives, as the entry gate resolved them. */
export interface Target {
  server: string;
  world: World;
}

/** How every file Job is shaped, whatever the op (the configuration part of JobParams). */
export type JobSettings = Pick<
  JobParams,
  'namespace' | 'image' | 'command' | 'serviceAccount' | 'worldsRoot' | 'deadlineSeconds' | 'ttlSeconds' | 'cpu' | 'memory' | 'runAsUser' | 'runAsGroup' | 'fsGroup'
>;

export interface EditorConfig extends JobSettings, AsyncSettings {
  /** How long a caller waits for a result before 504 files_timeout. */
  timeoutMs: number;
}

/**
 * The settings of transfer Jobs (upload receivers, exports): they hash and copy at the caller's
 * pace for as long as the transfer lasts, so they get the background ops' CPU, not a one-shot
 * op's (a receiver at 500m hashes half as fast).
 */
export function transferJobSettings<T extends JobSettings & AsyncSettings>(cfg: T): T {
  return { ...cfg, cpu: longJobCpu(cfg) };
}

/** A fresh 16-hex op id: names the Job and selects its Pod, so it must never repeat. */
export function newOpId(): string {
  return randomBytes(8).toString('hex');
}

export class FilesEditor {
  readonly #cfg: EditorConfig;
  readonly #runner: SyncRunner;
  readonly #background: BackgroundOps | undefined;

  /** `jobs` (the runner's Kubernetes calls) enables the background ops; without it they fail. */
  constructor(cfg: EditorConfig, runner: SyncRunner, jobs?: BackgroundApi) {
    this.#cfg = cfg;
    this.#runner = runner;
    const { timeoutMs: _t, ...settings } = cfg;
    this.#background = jobs ? new BackgroundOps(settings, jobs, newOpId) : undefined;
  }

  /**
   * Starts a background op (the caller holds the world lock around this one Job create) and
   * answers its running view. Serving a CloudEvent, the Job carries the event's key.
   */
  async start(t: Target, req: StartRequest): Promise<OpView> {
    return this.#ops().start(t, req, currentEvent());
  }

  /**
   * Serving a redelivered CloudEvent: the op its first delivery started (answered again, never
   * started twice). Undefined for a plain HTTP request or a new event. Asked before the world lock,
   * which the running op itself holds.
   */
  async earlierOp(server: string, req: Pick<StartRequest, 'op' | 'path'>): Promise<OpView | undefined> {
    const ev = currentEvent();
    return ev ? this.#ops().eventOp(server, req, ev) : undefined;
  }

  /** The server's background ops, newest first, at most ten. */
  async ops(server: string): Promise<OpView[]> {
    return this.#ops().list(server);
  }

  #ops(): BackgroundOps {
    if (!this.#background) throw new RunnerError('background file operations are not configured');
    return this.#background;
  }

  async list(t: Target, path: string, signal?: AbortSignal): Promise<Listing> {
    return decodeList(await this.#run(t, { op: 'list', path }, signal));
  }

  async read(t: Target, path: string, signal?: AbortSignal): Promise<ReadFile> {
    return decodeRead(await this.#run(t, { op: 'read', path }, signal));
  }

  /** Returns the SHA-256 of the bytes written. */
  async write(
    t: Target,
    path: string,
    content: Buffer,
    opts: { sha256: string; expectSha256?: string; createOnly?: boolean },
    signal?: AbortSignal,
  ): Promise<string> {
    if (content.length > MAX_WRITE_BYTES) {
      throw new FileEditError('too_large', `content is ${content.length} bytes, the limit is ${MAX_WRITE_BYTES}`);
    }
    const r = await this.#run(
      t,
      { op: 'write', path, content, sha256: opts.sha256, expectSha256: opts.expectSha256, createOnly: opts.createOnly },
      signal,
    );
    return decodeWrite(r);
  }

  async mkdir(t: Target, path: string, signal?: AbortSignal): Promise<void> {
    checkResult(await this.#run(t, { op: 'mkdir', path }, signal));
  }

  async delete(t: Target, path: string, signal?: AbortSignal): Promise<void> {
    checkResult(await this.#run(t, { op: 'delete', path }, signal));
  }

  async rename(t: Target, path: string, to: string, signal?: AbortSignal): Promise<void> {
    checkResult(await this.#run(t, { op: 'rename', path, to }, signal));
  }

  async #run(
    t: Target,
    call: { op: Op; path: string } & Partial<Pick<JobParams, 'content' | 'sha256' | 'expectSha256' | 'createOnly' | 'to'>>,
    signal?: AbortSignal,
  ) {
    const { timeoutMs, ...settings } = this.#cfg;
    const deadline = AbortSignal.timeout(timeoutMs);
    const opts = { mutating: mutates(call.op), signal: signal ? AbortSignal.any([deadline, signal]) : deadline };
    // An event is handled once: a redelivery follows the Job the first delivery created, found by
    // the event's label, and answers from its result instead of running the op again.
    const ev = currentEvent();
    if (ev) {
      const earlier = (await this.#runner.findJobs(settings.namespace, `${LABEL_EVENT}=${ev.key}`))[0];
      if (earlier) {
        const name = earlier.metadata?.name ?? '';
        matchEarlier(earlier, ev, { server: t.server, op: call.op });
        try {
          return parseResultPayload(await this.#runner.run(earlier, { ...opts, adopt: true }));
        } catch (err) {
          if (err instanceof JobLostError) throw new EventAnswerGoneError(name);
          throw err;
        }
      }
    }
    const job = renderFilesJob({
      ...settings,
      ...call,
      server: t.server,
      opId: newOpId(),
      worldPvc: t.world.claim,
      nodeName: t.world.node,
      ...eventParams(ev),
    });
    return parseResultPayload(await this.#runner.run(job, opts));
  }
}
