/**
 * What browse sessions (sessions.ts) and edit sessions (edit-sessions.ts) do alike to reach a
 * session Pod of a server: the shared key, the per-instance hint of the Pod that last answered for
 * a server's world (a hint only, never state), and the search: list the kind's Pods by label, call
 * the serving ones oldest first, start a Job when none is serving or starting, and poll within the
 * start budget (a serving Pod just up whose program does not listen yet is asked again at short
 * steps, without listing). What a call's outcome means, and what a failed search means to the
 * caller, stay with each kind: the search asks the kind's `attempt` what to do after each call, and
 * lets a failure through to the kind. What to do when no serving Pod answered (give up, start a Job, wait)
 * is the pure `nextStep`.
 *
 * The Job started is named by the server, its world, the image and a 10-second bucket (pods.ts
 * sessionOpId), so instances starting one at once create the same Job and one gets AlreadyExists.
 * Verbs: `pods list`, `jobs create`.
 * @module
 */
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { type BrowseJobParams, filesJobName } from '../job-spec/render.ts';
import type { JobSettings, Target } from '../job-spec/types.ts';
import { kubeStatus } from '../kube/errors.ts';
import { LABEL_SERVER } from '../labels.ts';
import { jobToken, tokenDigest } from '../protocol/job-token.ts';
import { untilAnswers } from '../protocol/pod-listen.ts';
import { sleep } from '../sleep.ts';
import type { BrowseConfig } from './config.ts';
import { END_MARGIN_MS, type SessionPod, type SessionWant, servingPods, sessionOpId, startingPod } from './pods.ts';
import { SharedKey } from './shared-key.ts';

export interface BrowseApi {
  createJob(namespace: string, job: V1Job): Promise<unknown>;
  listPods(namespace: string, labelSelector: string): Promise<V1Pod[]>;
}

export interface BrowseLog {
  warn(obj: object, msg: string): void;
}

/** A starting Pod older than this is not waited for: it is stuck (unschedulable, never starting). */
export const STUCK_AFTER_MS = 10_000;
/** How long after its start a serving Pod may still be not listening yet (its program starting). */
export const LISTEN_GRACE_MS = 5_000;
/** How often a request waiting for a session to start lists its Pods again. */
export const POLL_MS = 15;
/** How long a serving Pod just up is asked again (lib/protocol/pod-listen.ts) before the Pods are listed again. */
export const LISTEN_WAIT_MS = 1_000;
/** Worlds whose serving Pod an instance remembers; the oldest hint goes first. */
const MAX_HINTS = 256;

/** A kind of session: how its Pods are labelled, its Jobs named and rendered. */
export interface SessionKind {
  /** Names the sessions in the log line that turns them off (a missing or short key). */
  what: string;
  /** The label (set to `true`) its Pods are found by. */
  label: string;
  /** Tells its op ids apart from the other kind's (sessionOpId). */
  opIdPrefix: string;
  render(p: BrowseJobParams): V1Job;
}

export interface FinderOptions {
  now?: () => number;
  /** The key itself, instead of reading `cfg.keyFile` (tests). */
  key?: Buffer;
  logger?: BrowseLog;
}

/** Where a serving Pod was last found for a server. */
export interface Hint extends SessionPod {
  /** The world the Pod serves: a hint is only used for a request to the same world. */
  claim: string;
  node: string;
}

/**
 * What the search does after calling a serving Pod: end with its answer (the Pod is remembered),
 * try the next serving Pod (`next`: this one could not be reached), or end without an answer
 * (`stop`: the one-shot Job decides).
 */
export type Attempt = { body: string } | 'next' | 'stop';

/**
 * When no Pod is serving: `wait` starts one (once) and waits for it within the budget; `leave`
 * starts one for the calls that follow and ends this search at once; `never` starts none and waits
 * for none, so only a Pod serving now answers.
 */
export type StartPolicy = 'wait' | 'leave' | 'never';

/**
 * What the search does when no serving Pod has answered this round: pure. `stop` ends it without
 * an answer, `start` creates a Job (none is serving or starting, and this search made none yet),
 * `wait` lists again after POLL_MS if the budget allows.
 */
export function nextStep(serving: readonly SessionPod[], starting: { ageMs: number } | undefined, nowMs: number, start: StartPolicy, created: boolean): 'stop' | 'start' | 'wait' {
  // A serving Pod that has been up a while and still cannot be reached will not be reachable
  // by waiting (a network that does not let us through): answer through the one-shot Job now.
  if (serving.length > 0 && serving.every((s) => nowMs - s.startedMs > LISTEN_GRACE_MS)) return 'stop';
  if (start === 'never') return 'stop';
  if (serving.length === 0 && !starting && !created) return 'start';
  if (starting && starting.ageMs > STUCK_AFTER_MS && serving.length === 0) return 'stop';
  return 'wait';
}

export class SessionFinder {
  readonly #api: BrowseApi;
  readonly #settings: JobSettings;
  readonly #cfg: BrowseConfig;
  readonly #kind: SessionKind;
  readonly #now: () => number;
  readonly #key: SharedKey;
  /** By server; the claim and node inside say which world. */
  readonly #hints = new Map<string, Hint>();

  constructor(api: BrowseApi, settings: JobSettings, cfg: BrowseConfig, kind: SessionKind, opts: FinderOptions = {}) {
    this.#api = api;
    this.#settings = settings;
    this.#cfg = cfg;
    this.#kind = kind;
    this.#now = opts.now ?? Date.now;
    this.#key = new SharedKey(cfg.keyFile, kind.what, opts.logger && ((o, m) => opts.logger!.warn(o, m)), opts.key);
  }

  /** The shared key, or undefined when this kind of session is off. */
  key(): Buffer | undefined {
    return this.#key.get();
  }

  /** The session a target's request can use: its world, this image, this lifetime. */
  want(t: Target): SessionWant {
    return { claim: t.world.claim, node: t.world.node, image: this.#settings.image, lifetimeSeconds: this.#cfg.lifetimeSeconds };
  }

  hint(server: string): Hint | undefined {
    return this.#hints.get(server);
  }

  sameWorld(h: Hint, want: SessionWant): boolean {
    return h.claim === want.claim && h.node === (want.node ?? '');
  }

  /** Whether the hinted Pod has enough of its lifetime left to take a call. */
  lifeLeft(h: Hint): boolean {
    return h.startedMs + this.#cfg.lifetimeSeconds * 1000 - END_MARGIN_MS > this.#now();
  }

  remember(server: string, h: Hint): void {
    this.#hints.delete(server);
    this.#hints.set(server, h);
    if (this.#hints.size > MAX_HINTS) this.#hints.delete(this.#hints.keys().next().value!);
  }

  /** Drops the hint if it is still the one that failed (a concurrent request may have renewed it). */
  forget(server: string, h: Hint): void {
    const cur = this.#hints.get(server);
    if (cur && cur.job === h.job && cur.ip === h.ip) this.#hints.delete(server);
  }

  /**
   * Lists the server's Pods of this kind until a serving one answers (its body), the search gives
   * up (undefined: the one-shot Job), or the budget runs out. A failure of the API, or one thrown
   * by `attempt`, is the caller's to judge; an abort of `signal` throws its reason.
   */
  async find(t: Target, key: Buffer, want: SessionWant, attempt: (pod: SessionPod) => Promise<Attempt>, start: StartPolicy, signal?: AbortSignal): Promise<string | undefined> {
    const selector = `${LABEL_SERVER}=${t.server},${this.#kind.label}=true`;
    // The budget runs on the monotonic clock; Pod ages on the wall clock they are stamped with.
    const budgetEnd = performance.now() + this.#cfg.startBudgetMs;
    let created = false;
    for (;;) {
      signal?.throwIfAborted();
      const pods = await this.#api.listPods(this.#settings.namespace, selector);
      const now = this.#now();
      const serving = servingPods(pods, want, now);
      for (const s of serving) {
        const a = await this.#ask(s, attempt, now, budgetEnd, signal);
        if (a === 'next') continue;
        if (a === 'stop') return undefined;
        this.remember(t.server, { ...s, claim: want.claim, node: want.node ?? '' });
        return a.body;
      }
      const step = nextStep(serving, startingPod(pods, want, now), now, start, created);
      if (step === 'stop') return undefined;
      if (step === 'start') {
        await this.#start(t, key, want, now);
        if (start === 'leave') return undefined;
        created = true;
      }
      if (performance.now() + POLL_MS > budgetEnd) return undefined;
      await sleep(POLL_MS, signal);
    }
  }

  /**
   * Calls a serving Pod. One just up may not listen yet: it is asked again at short steps (for up
   * to LISTEN_WAIT_MS, within the budget) rather than listing the Pods again.
   */
  async #ask(s: SessionPod, attempt: (pod: SessionPod) => Promise<Attempt>, now: number, budgetEnd: number, signal?: AbortSignal): Promise<Attempt> {
    if (now - s.startedMs > LISTEN_GRACE_MS) return attempt(s);
    let a: Attempt = 'next';
    await untilAnswers(async () => (a = await attempt(s)) !== 'next', LISTEN_WAIT_MS, budgetEnd, signal);
    return a;
  }

  /** Creates this bucket's session Job; one already created by another instance is as good. */
  async #start(t: Target, key: Buffer, want: SessionWant, now: number): Promise<void> {
    const opId = sessionOpId(this.#kind.opIdPrefix, t.server, want, now);
    const job = this.#kind.render({
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
