/**
 * The file operations as a caller sees them: each renders a file Job, runs it through the
 * SyncRunner, and decodes the result. No HTTP here.
 * @module
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import type { V1Job } from '@kubernetes/client-node';
import { type BatchOutcome, decodeBatch } from '../../functions/files-batch/result.ts';
import { type Copied, decodeCopy } from '../../functions/files-copy/result.ts';
import { decodeTrashed, type Trashed } from '../../functions/files-delete/result.ts';
import { decodeList, type Listing } from '../../functions/files-list/result.ts';
import { decodeRead, type ReadFile } from '../../functions/files-read/result.ts';
import { type ContentSearch, decodeContentSearch, decodeSearch, type Search } from '../../functions/files-search/result.ts';
import { FOLLOW_DEADLINE_SECONDS } from '../../functions/files-tail/op.ts';
import { decodeTrashList, decodeTrashPurge, decodeTrashRestore, type TrashPage } from '../../functions/files-trash/result.ts';
import { decodeWrite } from '../../functions/files-write/result.ts';
import { EventAnswerGoneError } from '../events/errors.ts';
import { eventParams, matchEarlier } from '../events/redelivery.ts';
import { currentEvent } from '../events/scope.ts';
import { BROWSE_PORT, filesJobName, type JobParams, renderFilesJob } from '../job-spec/render.ts';
import { callerTrash } from '../job-spec/trash.ts';
import type { JobSettings, Target } from '../job-spec/types.ts';
import { FILES_CONTAINER, LABEL_EVENT, LABEL_FILES_MODE, LABEL_FILES_OP, LABEL_SERVER } from '../labels.ts';
import { type AsyncSettings, type BackgroundApi, BackgroundOps, longJobCpu, type StartRequest } from '../ops/background.ts';
import type { OpsPage } from '../ops/list.ts';
import type { OpView } from '../ops/view.ts';
import { type Batch, commonFolder } from '../protocol/batch-env.ts';
import { callCarries, isEditOp } from '../protocol/edit-call.ts';
import { jobToken, readKey, tokenDigest } from '../protocol/job-token.ts';
import { COPY_SYNC_MAX_BYTES } from '../protocol/limits.ts';
import { type OpQuery, setQuery } from '../protocol/op-query.ts';
import type { AnyOpFields, BatchOp, OpFields } from '../protocol/ops.ts';
import { mutates, type Op } from '../protocol/ops.ts';
import type { Result } from '../protocol/result.ts';
import { parseResultPayload } from '../protocol/result-parse.ts';
import { FilesTimeoutError, JobLostError, RunnerError } from '../runner/errors.ts';
import type { SyncRunner } from '../runner/sync-runner.ts';
import { type EditChannel, EditLostError } from './edit-channel.ts';
import { WriteNotDeliveredError } from './errors.ts';
import { heldLock } from './held-lock.ts';
import { checkFollowKept, checkFollowRoom, FollowUnavailableError, followSelector, openFollow } from './log-follow.ts';
import { lostChange } from './lost-change.ts';
import { cancelPull, PullCancelUnavailableError } from './pull-cancel.ts';
import { checkResult } from './result-check.ts';
import { deliverContent, type PodLister } from './write-delivery.ts';

export interface EditorConfig extends JobSettings, AsyncSettings {
  /** How long a caller waits for a result before 504 files_timeout. */
  timeoutMs: number;
  /** The largest regular file a copy answers synchronously (FELIS_COPY_SYNC_MAX_BYTES); default COPY_SYNC_MAX_BYTES. */
  copySyncMaxBytes?: number;
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

/**
 * Writes with a job key: the content is streamed to the write Job's Pod (write-delivery.ts) instead
 * of carried in its env, where anyone who can list Pods or Jobs would read it.
 */
export interface StreamedWrites {
  /** The shared job key (`FELIS_JOB_KEY_FILE`), read at each write as uploads read it. */
  keyFile: string;
  pods: PodLister;
  /** Tests: the key itself, and the port the write Pod listens on (default the serving port). */
  key?: Buffer;
  port?: number | (() => number);
}

export class FilesEditor {
  readonly #cfg: EditorConfig;
  readonly #runner: SyncRunner;
  readonly #background: BackgroundOps | undefined;
  readonly #streamed: StreamedWrites | undefined;
  readonly #edits: EditChannel | undefined;

  /**
   * `jobs` (the runner's Kubernetes calls) enables the background ops; without it they fail.
   * `streamed` (a job key) makes writes stream their content; without it the content rides in the
   * Job's env, as Felis's does. `edits` (edit sessions) makes the small mutations of a caller
   * holding the world lock through a session Pod when one can be had; without it, or when none
   * answers, they are one-shot Jobs.
   */
  constructor(cfg: EditorConfig, runner: SyncRunner, jobs?: BackgroundApi, streamed?: StreamedWrites, edits?: EditChannel) {
    this.#cfg = cfg;
    this.#runner = runner;
    const { timeoutMs: _t, copySyncMaxBytes: _c, ...settings } = cfg;
    this.#background = jobs ? new BackgroundOps(settings, jobs, newOpId) : undefined;
    this.#streamed = streamed;
    this.#edits = edits;
  }

  /**
   * Starts a background op (the caller holds the world lock around this one Job create) and
   * answers its running view. Serving a CloudEvent, the Job carries the event's key.
   */
  async start(t: Target, req: StartRequest): Promise<OpView> {
    // With a job key a pull's Pod serves a cancel call (cancelPull); without one it cannot be cancelled.
    const streamed = this.#streamed;
    if (req.op === 'pull' && streamed) {
      const key = streamed.key ?? readKey(streamed.keyFile);
      req = { ...req, cancelToken: (name) => tokenDigest(jobToken(key, name)) };
    }
    return this.#ops().start(t, req, currentEvent());
  }

  /**
   * Cancels the server's running pull `opId` through its Pod (lib/files/pull-cancel.ts): the
   * functions hold no `jobs delete`. Verbs: `pods list`.
   */
  async cancelPull(server: string, opId: string, signal?: AbortSignal): Promise<void> {
    const streamed = this.#streamed;
    if (!streamed) throw new PullCancelUnavailableError();
    const key = streamed.key ?? readKey(streamed.keyFile);
    const port = typeof streamed.port === 'function' ? streamed.port() : (streamed.port ?? BROWSE_PORT);
    await cancelPull({ api: streamed.pods, namespace: this.#cfg.namespace, server, opId, token: jobToken(key, filesJobName(server, opId)), port, ...(signal ? { signal } : {}) });
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

  /** A page of the server's background ops, newest first (the ten newest without `page`), and the next page's `after`. */
  async ops(server: string, page?: OpsPage): Promise<{ ops: OpView[]; next?: string }> {
    return this.#ops().list(server, page);
  }

  /** One background op of the server by its id (404 op_not_found when it has none). */
  async op(server: string, id: string): Promise<OpView> {
    return this.#ops().get(server, id);
  }

  #ops(): BackgroundOps {
    if (!this.#background) throw new RunnerError('background file operations are not configured');
    return this.#background;
  }

  /**
   * The server was found not stopped: an edit session of it ends now rather than at its idle
   * period (it can get no call until the server is stopped again). Never fails.
   */
  async serverNotStopped(server: string): Promise<void> {
    await this.#edits?.end?.(server).catch(() => {});
  }

  /**
   * Follows the log `path` (lib/files/log-follow.ts): its last `lines` lines, then what is appended,
   * or the lines after `from` (a resume), as the follow Job's NDJSON answer, unread. Refused with
   * follow_limit when the server has the most follows running, follow_unavailable without a job key.
   */
  async follow(t: Target, path: string, fields: { lines?: number; from?: string }, signal: AbortSignal): Promise<{ job: string; response: http.IncomingMessage }> {
    const streamed = this.#streamed;
    if (!streamed) throw new FollowUnavailableError();
    const key = streamed.key ?? readKey(streamed.keyFile);
    const { timeoutMs, copySyncMaxBytes: _c, ...settings } = this.#cfg;
    checkFollowRoom(await this.#runner.findJobs(settings.namespace, followSelector(t.server)));
    const opId = newOpId();
    const name = filesJobName(t.server, opId);
    const token = jobToken(key, name);
    const job = renderFilesJob({
      ...settings,
      op: 'tail',
      path,
      follow: true,
      ...(fields.lines !== undefined ? { lines: fields.lines } : {}),
      ...(fields.from !== undefined ? { from: fields.from } : {}),
      server: t.server,
      opId,
      worldPvc: t.world.claim,
      nodeName: t.world.node,
      followTokenSha256: tokenDigest(token),
      // It serves for up to ten minutes, not a one-shot op's deadline.
      deadlineSeconds: FOLLOW_DEADLINE_SECONDS,
    });
    const port = typeof streamed.port === 'function' ? streamed.port() : (streamed.port ?? BROWSE_PORT);
    const response = await openFollow({
      pods: streamed.pods,
      namespace: settings.namespace,
      job: name,
      opId,
      token,
      port,
      run: (s) => this.#runner.run(job, { mutating: false, signal: s }),
      timeoutMs,
      signal,
    });
    // Two opening at once may both have passed the count: the newest gives way (its hang-up ends its Job).
    try {
      checkFollowKept(await this.#runner.findJobs(settings.namespace, followSelector(t.server)), name);
    } catch (err) {
      response.destroy();
      throw err;
    }
    return { job: name, response };
  }

  /** `query` pages and filters the listing (its fields become the Job's flags); without it, Felis's listing. */
  async list(t: Target, path: string, signal?: AbortSignal, query?: OpQuery): Promise<Listing> {
    return decodeList(await this.#run(t, { op: 'list', path, ...setQuery(query) }, signal));
  }

  /** Entries below `path` whose name matches `query.q`, at most `query.limit` (the Job's default without). */
  async search(t: Target, path: string, query: { q: string; limit?: number }, signal?: AbortSignal): Promise<Search> {
    return decodeSearch(await this.#run(t, { op: 'search', path, ...setQuery(query) }, signal));
  }

  /** Lines of the files below `path` holding `query.text` (files named as `query.q` when given), at most `query.limit`. */
  async searchContent(t: Target, path: string, query: { text: string; q?: string; limit?: number }, signal?: AbortSignal): Promise<ContentSearch> {
    return decodeContentSearch(await this.#run(t, { op: 'search', path, ...setQuery(query) }, signal));
  }

  /**
   * Runs one op as a one-shot Job with the fields its contract encodes and answers its Result,
   * unchecked: the op's folder decodes it (its result.ts). An op needing no more than its fields
   * (a read-only op of its own) is served through here, so it adds no method.
   */
  async run<K extends Op>(t: Target, op: K, path: string, fields: OpFields<K>, signal?: AbortSignal): Promise<Result> {
    return this.#run(t, { op, path, ...fields }, signal);
  }

  async read(t: Target, path: string, signal?: AbortSignal): Promise<ReadFile> {
    return decodeRead(await this.#run(t, { op: 'read', path }, signal));
  }

  /** Whether a write's content goes to its Pod (a job key), not into its Job's env: it may then carry 1 MiB, not 256 KiB. */
  get streamsWrites(): boolean {
    return this.#streamed !== undefined;
  }

  /** Returns the SHA-256 of the bytes written. */
  async write(t: Target, path: string, content: Buffer, opts: { sha256: string; expectSha256?: string; createOnly?: boolean }, signal?: AbortSignal): Promise<string> {
    // The size limit is checked where the content enters (lib/http/write-body.ts) and again by the Job.
    const call = { op: 'write', path, sha256: opts.sha256, expectSha256: opts.expectSha256, createOnly: opts.createOnly } as const;
    const warm = await this.#warm(t, { ...call, content });
    if (warm) return decodeWrite(warm);
    const streamed = this.#streamed;
    if (!streamed) return decodeWrite(await this.#run(t, { ...call, content }, signal));
    const key = streamed.key ?? readKey(streamed.keyFile);
    return decodeWrite(
      await this.#run(t, call, signal, {
        contentToken: (name) => tokenDigest(jobToken(key, name)),
        deliver: (job, s) => this.#deliver(streamed, key, job, content, s),
      }),
    );
  }

  /**
   * Runs `job` while its content is delivered beside it: the delivery ends once the run does, and
   * a delivery refused for good ends the run. Until every byte has left for the Pod the Job cannot
   * have written anything, so a deadline passed by then is WriteNotDeliveredError (nothing
   * written), and a Job lost by then is a plain retry.
   */
  async #deliver(streamed: StreamedWrites, key: Buffer, job: V1Job, content: Buffer, run: (signal: AbortSignal) => Promise<string>): Promise<string> {
    const name = job.metadata!.name!;
    const opId = job.metadata!.labels![LABEL_FILES_OP]!;
    const state = { sent: false };
    const over = new AbortController();
    const refused = new AbortController();
    const port = streamed.port ?? BROWSE_PORT;
    const delivery = deliverContent({ api: streamed.pods, namespace: this.#cfg.namespace, job: name, opId, token: jobToken(key, name), port, content, signal: over.signal, state }).catch(
      (err: unknown) => void refused.abort(err),
    );
    try {
      return await run(refused.signal);
    } catch (err) {
      if (!state.sent && err instanceof FilesTimeoutError) throw new WriteNotDeliveredError(name);
      if (!state.sent && err instanceof JobLostError) throw new JobLostError(err.message, false);
      throw err;
    } finally {
      over.abort();
      await delivery;
    }
  }

  /** `parents`: the missing folders above `path` first, and a folder already there is no error (mkdir -p). */
  async mkdir(t: Target, path: string, signal?: AbortSignal, opts: { parents?: boolean } = {}): Promise<void> {
    checkResult(await this.#run(t, { op: 'mkdir', path, ...(opts.parents ? { parents: true as const } : {}) }, signal));
  }

  /** What it removed goes to the undo trash (unless the operator turned it off): its record's id when it made one. */
  async delete(t: Target, path: string, signal?: AbortSignal): Promise<Trashed> {
    return decodeTrashed(await this.#run(t, { op: 'delete', path }, signal));
  }

  /**
   * The undo trash's records, newest first, a page of at most `query.limit` (the Job's default
   * without) after the id `query.after`. A read: no lock. The Job works on the world's root.
   */
  async trashList(t: Target, query: { limit?: number; after?: string }, signal?: AbortSignal): Promise<TrashPage> {
    return decodeTrashList(await this.#run(t, { op: 'trash-list', path: '', ...setQuery(query) }, signal));
  }

  /** Puts record `id` back where it was, or under the folder `to`; 409 file_exists naming a path that exists again. */
  async trashRestore(t: Target, id: string, to: string | undefined, signal?: AbortSignal): Promise<{ restored: string[] }> {
    return decodeTrashRestore(await this.#run(t, { op: 'trash-restore', path: '', trashId: id, ...(to ? { to } : {}) }, signal));
  }

  /**
   * Places what the pull `pullOp` downloaded into its staging, as `to` in the folder `path`: a
   * `pull-place` Job (functions/files-pull/job/pull-place.ts), a short change the caller runs holding the world. Its
   * op id is `opId`, one the placing pass derives from the pull's, so that passes never make two:
   * a Job of that op id already there is followed (its result read) instead. Answers the Job's
   * result as it is, a refusal included (the pass records it on the pull).
   */
  async placePull(t: Target, place: { path: string; to: string; pullOp: string; opId: string }, signal?: AbortSignal): Promise<Result> {
    const made = await this.placedPull(t.server, place.opId, signal);
    return made ?? this.#run(t, { op: 'pull-place', path: place.path, to: place.to, pullOp: place.pullOp }, signal, undefined, place.opId);
  }

  /**
   * The result of the placement Job `opId` of `server` when one was made (followed to its end, no
   * lock needed: it holds the world itself while it runs); undefined when none was. One whose
   * result is lost is 503 outcome_unknown: the file may or may not be in place.
   */
  async placedPull(server: string, opId: string, signal?: AbortSignal): Promise<Result | undefined> {
    const made = (await this.#runner.findJobs(this.#cfg.namespace, `${LABEL_FILES_OP}=${opId},${LABEL_SERVER}=${server}`))[0];
    if (!made) return undefined;
    const deadline = AbortSignal.timeout(this.#cfg.timeoutMs);
    try {
      return parseResultPayload(await this.#runner.run(made, { mutating: true, adopt: true, signal: signal ? AbortSignal.any([deadline, signal]) : deadline }));
    } catch (err) {
      if (err instanceof JobLostError) throw lostChange('pull-place', opId, err);
      throw err;
    }
  }

  /** Removes record `id` for good, or every record without one. */
  async trashPurge(t: Target, id: string | undefined, signal?: AbortSignal): Promise<{ purged: number; bytes: number }> {
    return decodeTrashPurge(await this.#run(t, { op: 'trash-purge', path: '', ...(id ? { trashId: id } : {}) }, signal));
  }

  async rename(t: Target, path: string, to: string, signal?: AbortSignal): Promise<void> {
    checkResult(await this.#run(t, { op: 'rename', path, to }, signal));
  }

  /** The largest regular file `copy` takes. */
  get copySyncMaxBytes(): number {
    return this.#cfg.copySyncMaxBytes ?? COPY_SYNC_MAX_BYTES;
  }

  /**
   * A synchronous copy of a regular file of at most `copySyncMaxBytes`; anything else is refused
   * by the Job before it writes (FileEditError too_large), for the caller to start in the background.
   */
  async copy(t: Target, path: string, to: string | undefined, signal?: AbortSignal): Promise<Copied> {
    return decodeCopy(await this.#run(t, { op: 'copy', path, ...(to !== undefined ? { to } : {}), maxSize: this.copySyncMaxBytes }, signal));
  }

  /**
   * Many files in one Job, whatever their count: every item is checked before any changes; a bad
   * one throws its error with its path (FileEditError `details.path`), else what was done.
   */
  async batch(t: Target, op: BatchOp, batch: Batch, signal?: AbortSignal): Promise<BatchOutcome> {
    return decodeBatch(await this.#run(t, { op, path: commonFolder(batch), batch }, signal));
  }

  /**
   * The change made by an edit session, when the caller holds a file-write lock on this world and
   * one can be had: the call carries exactly what the one-shot Job's container would be started
   * with (rendered by the same code, content and items in its env), so the session runs the same
   * program on the same input. Undefined to run the one-shot Job instead. A CloudEvent's mutation
   * is always a Job: its redelivery finds the Job by the event's label and answers from it.
   */
  async #warm(t: Target, call: { op: Op; path: string } & Partial<Pick<JobParams, 'content' | 'sha256' | 'expectSha256' | 'createOnly' | 'to' | 'maxSize' | 'batch'>>) {
    const edits = this.#edits;
    const held = heldLock(t.server);
    if (!edits || !held || held.kind !== 'file-write' || !isEditOp(call.op) || currentEvent()) return undefined;
    const { timeoutMs, copySyncMaxBytes: _c, ...settings } = this.#cfg;
    const opId = newOpId();
    const trash = callerTrash(settings.trash);
    const job = renderFilesJob({ ...settings, ...call, ...(trash ? { trash } : {}), server: t.server, opId, worldPvc: t.world.claim, nodeName: t.world.node });
    const container = job.spec!.template.spec!.containers[0]!;
    const env: Record<string, string> = { FELIS_OP_ID: opId };
    for (const e of container.env ?? []) if (e.value !== undefined && callCarries(e.name)) env[e.name] = e.value;
    // Only the deadline ends the call, not a caller who goes away: a change sent to a Pod runs to
    // its end there, and a call cut short would leave the world held until the lock's grace.
    const deadline = AbortSignal.timeout(timeoutMs);
    let payload: string | undefined;
    try {
      payload = await edits.run(t, { argv: ['files', ...(container.args ?? [])], env, lock: held.value }, deadline);
    } catch (err) {
      // The change may still be under way in the Pod, which holds nothing: the lock must stay
      // until it lapses, so that neither a start nor another change meets it.
      if (deadline.aborted || (err instanceof EditLostError && err.inFlight)) held.keep();
      if (deadline.aborted) throw new FilesTimeoutError(filesJobName(t.server, opId));
      if (err instanceof JobLostError) throw lostChange(call.op, opId, err);
      throw err;
    }
    return payload === undefined ? undefined : parseResultPayload(payload);
  }

  async #run(
    t: Target,
    call: { op: Op; path: string } & AnyOpFields & Partial<Pick<JobParams, 'content' | 'batch'>>,
    signal?: AbortSignal,
    streamed?: {
      /** The digest of the token for the Job named so (a streamed write's spec carries it). */
      contentToken: (jobName: string) => string;
      /** Runs the Job (through `run`, with a signal that ends it) while delivering its content. */
      deliver: (job: V1Job, run: (signal: AbortSignal) => Promise<string>) => Promise<string>;
    },
    /** The op id the Job must have (the caller has looked for one already made: placePull). */
    fixedOpId?: string,
  ) {
    // A write asked a session already (write()); any other small mutation asks here.
    if (call.op !== 'write') {
      const warm = await this.#warm(t, call);
      if (warm) return warm;
    }
    const { timeoutMs, copySyncMaxBytes: _c, ...settings } = this.#cfg;
    const deadline = AbortSignal.timeout(timeoutMs);
    const base = { mutating: mutates(call.op), signal: signal ? AbortSignal.any([deadline, signal]) : deadline };
    const follow = (job: V1Job, adopt: boolean): Promise<string> => {
      const run = (extra?: AbortSignal) => this.#runner.run(job, { ...base, ...(extra ? { signal: AbortSignal.any([base.signal, extra]) } : {}), ...(adopt ? { adopt } : {}) });
      // A redelivered event's streamed write may still be waiting for its content: deliver it again.
      return streamed && (!adopt || isStreamedWrite(job)) ? streamed.deliver(job, run) : run();
    };
    // An event is handled once: a redelivery follows the Job the first delivery created, found by
    // the event's label, and answers from its result instead of running the op again.
    const ev = currentEvent();
    if (ev) {
      const earlier = (await this.#runner.findJobs(settings.namespace, `${LABEL_EVENT}=${ev.key}`))[0];
      if (earlier) {
        const name = earlier.metadata?.name ?? '';
        matchEarlier(earlier, ev, { server: t.server, op: call.op });
        try {
          return parseResultPayload(await follow(earlier, true));
        } catch (err) {
          if (err instanceof JobLostError) throw new EventAnswerGoneError(name);
          throw err;
        }
      }
    }
    const opId = fixedOpId ?? newOpId();
    const trash = callerTrash(settings.trash);
    const job = renderFilesJob({
      ...settings,
      ...call,
      // The caller's name goes into any trash record the Job makes.
      ...(trash ? { trash } : {}),
      server: t.server,
      opId,
      worldPvc: t.world.claim,
      nodeName: t.world.node,
      ...(streamed ? { contentTokenSha256: streamed.contentToken(filesJobName(t.server, opId)) } : {}),
      ...eventParams(ev),
    });
    try {
      return parseResultPayload(await follow(job, false));
    } catch (err) {
      // What a lost change means to the caller depends on the op (lost-change.ts).
      if (err instanceof JobLostError && base.mutating) throw lostChange(call.op, opId, err);
      throw err;
    }
  }
}

/** A write Job that takes its content on its Pod address (`--receive`), not from its env. */
function isStreamedWrite(job: V1Job): boolean {
  const c = job.spec?.template.spec?.containers.find((x) => x.name === FILES_CONTAINER);
  return job.metadata?.labels?.[LABEL_FILES_MODE] === 'write' && (c?.args ?? []).includes('--receive');
}
