/**
 * Edit sessions, function side: a small change (write, mkdir, delete, rename, a small copy, the
 * many-file ops) made by a running edit Pod of the server instead of a one-shot Job, for a caller
 * that holds the world's annotation lock: the lock is taken and given back around the call exactly
 * as around a Job (lib/maintenance/world-lock.ts), so Felis and our start guard see a holder for the
 * duration of the change, and the Pod refuses a call whose lock no longer holds.
 *
 * Found and started as browse sessions are, by the same code (session-finder.ts): Pods listed by
 * label, a per-instance hint of the last one that answered (a hint only), the Job named by a
 * 10-second bucket so that instances converge, a start budget after which the one-shot Job runs.
 * Verbs: `pods list`, `jobs create` (every mutation function holds both already).
 *
 * What an outcome means for the caller: a result is the answer; a call that never reached the
 * program, or that the Pod refused before running it, changed nothing, so the one-shot Job makes
 * the change instead (under the same lock); a call that reached the program and got no result is
 * JobLostError, as a one-shot Job whose Pod is lost (the editor tells the caller what that means
 * for the op: lib/files/lost-change.ts).
 * @module
 */

import { type EditChannel, EditLostError } from '../files/edit-channel.ts';
import { BROWSE_PORT, LABEL_FILES_EDIT, renderEditJob } from '../job-spec/render.ts';
import type { JobSettings, Target } from '../job-spec/types.ts';
import type { EditCall } from '../protocol/edit-call.ts';
import { jobToken } from '../protocol/job-token.ts';
import { JobLostError } from '../runner/errors.ts';
import type { BrowseConfig } from './config.ts';
import { callEdit, type EditCallOptions, type EditOutcome, endEdit } from './edit-call.ts';
import type { SessionPod } from './pods.ts';
import { type BrowseApi, type BrowseLog, SessionFinder } from './session-finder.ts';

export interface EditSessionOptions {
  /** Injected in tests. */
  call?: (o: EditCallOptions) => Promise<EditOutcome>;
  end?: (o: { ip: string; port: number; token: string }) => Promise<void>;
  now?: () => number;
  key?: Buffer;
  port?: number;
  logger?: BrowseLog;
}

export class EditSessions implements EditChannel {
  readonly #call: (o: EditCallOptions) => Promise<EditOutcome>;
  readonly #end: (o: { ip: string; port: number; token: string }) => Promise<void>;
  readonly #port: number;
  readonly #log: BrowseLog | undefined;
  readonly #pods: SessionFinder;

  constructor(api: BrowseApi, settings: JobSettings, cfg: BrowseConfig, opts: EditSessionOptions = {}) {
    this.#call = opts.call ?? callEdit;
    this.#end = opts.end ?? endEdit;
    this.#port = opts.port ?? BROWSE_PORT;
    this.#log = opts.logger;
    const kind = { what: 'edit sessions', label: LABEL_FILES_EDIT, opIdPrefix: 'e', render: renderEditJob };
    this.#pods = new SessionFinder(api, settings, cfg, kind, { now: opts.now, key: opts.key, logger: opts.logger });
  }

  async run(t: Target, call: EditCall, signal: AbortSignal): Promise<string | undefined> {
    const key = this.#pods.key();
    if (!key) return undefined;
    const want = this.#pods.want(t);
    const hint = this.#pods.hint(t.server);
    if (hint && this.#pods.sameWorld(hint, want) && this.#pods.lifeLeft(hint)) {
      const answer = await this.#callPod(key, hint, call, signal);
      if (answer.kind === 'ok') return answer.body;
      this.#pods.forget(t.server, hint);
      if (answer.kind === 'refused') return undefined;
      // Unsent: that Pod is gone; another may be up, or one can be started.
    }
    try {
      // A session still starting is waited for within the budget (one that is just up and not
      // listening yet, too). With none at all, one is started for the changes that follow and
      // this one is a one-shot Job at once: waiting for a Pod to start costs what the Job's own
      // start does, and past the budget it would cost both.
      return await this.#pods.find(
        t,
        key,
        want,
        async (s) => {
          const answer = await this.#callPod(key, s, call, signal);
          if (answer.kind === 'ok') return { body: answer.body };
          return answer.kind === 'refused' ? 'stop' : 'next';
        },
        'leave',
        signal,
      );
    } catch (err) {
      if (signal.aborted || err instanceof JobLostError) throw err;
      this.#log?.warn({ server: t.server, err: String(err) }, 'edit session unavailable; running a one-shot job');
      return undefined;
    }
  }

  async end(server: string): Promise<void> {
    const key = this.#pods.key();
    const hint = this.#pods.hint(server);
    if (!key || !hint) return;
    this.#pods.forget(server, hint);
    await this.#end({ ip: hint.ip, port: this.#port, token: jobToken(key, hint.job) });
  }

  /** One call; a call that reached the program without a result is lost, as a one-shot Job's Pod. */
  async #callPod(key: Buffer, pod: SessionPod, call: EditCall, signal: AbortSignal): Promise<Exclude<EditOutcome, { kind: 'lost' }>> {
    const answer = await this.#call({ ip: pod.ip, port: this.#port, token: jobToken(key, pod.job), call, signal });
    if (answer.kind === 'lost') throw new EditLostError(`edit session ${pod.pod} ended a change without a result: ${answer.detail}`, answer.inFlight);
    if (answer.kind === 'refused') this.#log?.warn({ pod: pod.pod, status: answer.status, detail: answer.detail }, 'edit pod refused the call; running a one-shot job');
    return answer;
  }
}
