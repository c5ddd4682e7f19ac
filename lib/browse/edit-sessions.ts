/**
 * Edit sessions, function side: a small change (write, mkdir, delete, rename, a small copy, the
 * many-file ops) made by a running edit Pod of the server instead of a one-shot Job, for a caller
 * that holds the world's annotation lock: the lock is taken and given back around the call exactly
 * as around a Job (lib/maintenance/world-lock.ts), so Felis and our start guard see a holder for the
 * duration of the change, and the Pod refuses a call whose lock no longer holds.
 *
 * Found and started as browse sessions are (sessions.ts): Pods listed by label, a per-instance
 * hint of the last one that answered (a hint only), the Job named by a 10-second bucket so that
 * instances converge, a start budget after which the one-shot Job runs. Verbs: `pods list`,
 * `jobs create` (every mutation function holds both already).
 *
 * What an outcome means for the caller: a result is the answer; a call that never reached the
 * program, or that the Pod refused before running it, changed nothing, so the one-shot Job makes
 * the change instead (under the same lock); a call that reached the program and got no result is
 * JobLostError, as a one-shot Job whose Pod is lost (the change was made or not, never half).
 * @module
 */
import type { Target, JobSettings } from '../job-spec/types.ts';
import { BROWSE_PORT, filesJobName, LABEL_FILES_EDIT, renderEditJob } from '../job-spec/render.ts';
import { LABEL_SERVER } from '../labels.ts';
import { kubeStatus } from '../kube/errors.ts';
import { jobToken, tokenDigest } from '../protocol/job-token.ts';
import { SharedKey } from './shared-key.ts';
import type { EditCall } from '../protocol/edit-call.ts';
import { EditLostError, type EditChannel } from '../files/edit-channel.ts';
import { JobLostError } from '../runner/errors.ts';
import { sleep } from '../sleep.ts';
import type { BrowseConfig } from './config.ts';
import { callEdit, endEdit, type EditCallOptions, type EditOutcome } from './edit-call.ts';
import { END_MARGIN_MS, servingPods, sessionOpId, startingPod, type SessionPod, type SessionWant } from './pods.ts';
import { LISTEN_GRACE_MS, POLL_MS, STUCK_AFTER_MS, type BrowseApi, type BrowseLog } from './sessions.ts';

export interface EditSessionOptions {
  /** Injected in tests. */
  call?: (o: EditCallOptions) => Promise<EditOutcome>;
  end?: (o: { ip: string; port: number; token: string }) => Promise<void>;
  now?: () => number;
  key?: Buffer;
  port?: number;
  logger?: BrowseLog;
}

interface Hint extends SessionPod {
  claim: string;
  node: string;
}

const MAX_HINTS = 256;

export class EditSessions implements EditChannel {
  readonly #api: BrowseApi;
  readonly #settings: JobSettings;
  readonly #cfg: BrowseConfig;
  readonly #call: (o: EditCallOptions) => Promise<EditOutcome>;
  readonly #end: (o: { ip: string; port: number; token: string }) => Promise<void>;
  readonly #now: () => number;
  readonly #port: number;
  readonly #log: BrowseLog | undefined;
  readonly #key: SharedKey;
  readonly #hints = new Map<string, Hint>();

  constructor(api: BrowseApi, settings: JobSettings, cfg: BrowseConfig, opts: EditSessionOptions = {}) {
    this.#api = api;
    this.#settings = settings;
    this.#cfg = cfg;
    this.#call = opts.call ?? callEdit;
    this.#end = opts.end ?? endEdit;
    this.#now = opts.now ?? Date.now;
    this.#port = opts.port ?? BROWSE_PORT;
    this.#log = opts.logger;
    this.#key = new SharedKey(cfg.keyFile, 'edit sessions', opts.logger && ((o, m) => opts.logger!.warn(o, m)), opts.key);
  }


  async run(t: Target, call: EditCall, signal: AbortSignal): Promise<string | undefined> {
    const key = this.#key.get();
    if (!key) return undefined;
    const want: SessionWant = { claim: t.world.claim, node: t.world.node, image: this.#settings.image, lifetimeSeconds: this.#cfg.lifetimeSeconds };
    const hint = this.#hints.get(t.server);
    if (hint && hint.claim === want.claim && hint.node === (want.node ?? '') && hint.startedMs + want.lifetimeSeconds * 1000 - END_MARGIN_MS > this.#now()) {
      const answer = await this.#callPod(key, hint, call, signal);
      if (answer.kind === 'ok') return answer.body;
      this.#forget(t.server, hint);
      if (answer.kind === 'refused') return undefined;
      // Unsent: that Pod is gone; another may be up, or one can be started.
    }
    const selector = `${LABEL_SERVER}=${t.server},${LABEL_FILES_EDIT}=true`;
    const budgetEnd = performance.now() + this.#cfg.startBudgetMs;
    try {
      for (;;) {
        signal.throwIfAborted();
        const pods = await this.#api.listPods(this.#settings.namespace, selector);
        const now = this.#now();
        const serving = servingPods(pods, want, now);
        for (const s of serving) {
          const answer = await this.#callPod(key, s, call, signal);
          if (answer.kind === 'ok') {
            this.#remember(t.server, { ...s, claim: want.claim, node: want.node ?? '' });
            return answer.body;
          }
          if (answer.kind === 'refused') return undefined;
        }
        if (serving.length > 0 && serving.every((s) => now - s.startedMs > LISTEN_GRACE_MS)) return undefined;
        // A session still starting is waited for within the budget (one that is just up and not
        // listening yet, above, too). With none at all, one is started for the changes that follow
        // and this one is a one-shot Job at once: waiting for a Pod to start costs what the Job's
        // own start does, and past the budget it would cost both.
        const starting = startingPod(pods, want, now);
        if (serving.length === 0 && !starting) {
          await this.#start(t, key, want, now);
          return undefined;
        }
        if (starting && starting.ageMs > STUCK_AFTER_MS && serving.length === 0) return undefined;
        if (performance.now() + POLL_MS > budgetEnd) return undefined;
        await sleep(POLL_MS, signal);
      }
    } catch (err) {
      if (signal.aborted || err instanceof JobLostError) throw err;
      this.#log?.warn({ server: t.server, err: String(err) }, 'edit session unavailable; running a one-shot job');
      return undefined;
    }
  }

  async end(server: string): Promise<void> {
    const key = this.#key.get();
    const hint = this.#hints.get(server);
    if (!key || !hint) return;
    this.#hints.delete(server);
    await this.#end({ ip: hint.ip, port: this.#port, token: jobToken(key, hint.job) });
  }

  /** One call; a call that reached the program without a result is lost, as a one-shot Job's Pod. */
  async #callPod(key: Buffer, pod: SessionPod, call: EditCall, signal: AbortSignal): Promise<Exclude<EditOutcome, { kind: 'lost' }>> {
    const answer = await this.#call({ ip: pod.ip, port: this.#port, token: jobToken(key, pod.job), call, signal });
    if (answer.kind === 'lost') throw new EditLostError(`edit session ${pod.pod} ended a change without a result: ${answer.detail}`, answer.inFlight);
    if (answer.kind === 'refused') this.#log?.warn({ pod: pod.pod, status: answer.status, detail: answer.detail }, 'edit pod refused the call; running a one-shot job');
    return answer;
  }

  #remember(server: string, h: Hint): void {
    this.#hints.delete(server);
    this.#hints.set(server, h);
    if (this.#hints.size > MAX_HINTS) this.#hints.delete(this.#hints.keys().next().value!);
  }

  #forget(server: string, h: Hint): void {
    const cur = this.#hints.get(server);
    if (cur && cur.job === h.job && cur.ip === h.ip) this.#hints.delete(server);
  }

  async #start(t: Target, key: Buffer, want: SessionWant, now: number): Promise<void> {
    const opId = sessionOpId('e', t.server, want, now);
    const job = renderEditJob({
      ...this.#settings,
      server: t.server,
      opId,
      worldPvc: t.world.claim,
      nodeName: t.world.node,
      tokenSha256: tokenDigest(jobToken(key, filesJobName(t.server, opId))),
      idleSeconds: this.#cfg.idleSeconds,
      lifetimeSeconds: this.#cfg.lifetimeSeconds,
    });
    try {
      await this.#api.createJob(this.#settings.namespace, job);
    } catch (err) {
      if (kubeStatus(err)?.reason !== 'AlreadyExists') throw err;
    }
  }
}
