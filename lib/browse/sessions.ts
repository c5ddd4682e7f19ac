/**
 * Browse sessions, function side: list and read answered by a running browse Pod of the server
 * when there is one, started on first use, found again by label from any instance. Nothing is
 * kept in the instance: the Pods are found with `pods list` on every request, the token is derived
 * from the shared key and the Job's name. Verbs: `pods list`, `jobs create` (both already held by
 * the list and read functions).
 *
 * The instance remembers where it last found a serving Pod for a server's world (a hint, not
 * state): it calls that Pod first and lists Pods only when the hint fails, so a warm read costs no
 * API call of its own. Any answer other than a result from the hinted Pod (it stopped, its address
 * now belongs to another Pod whose token check refuses ours) drops the hint. Results are never kept.
 *
 * `early` starts that call before the entry gates have answered (the route runs both at once), and
 * `run` uses its answer only when the gates let the request through and name the same world the
 * hint was for; otherwise the answer is thrown away unread. The Pod is read-only, so a call whose
 * answer is not used changes nothing.
 *
 * `run` answers the Result payload, or undefined when no session could answer within the start
 * budget: the caller then runs the one-shot Job, so a session never makes an answer worse, only
 * faster. Two instances starting a session at once converge: the Job name is derived from the
 * server, its world, the image and a 10-second time bucket, so both create the same Job and one
 * gets AlreadyExists; across a bucket edge both Pods serve, the oldest is used, the other idles out.
 * The key, the hints and the search are shared with edit sessions (session-finder.ts); what a
 * call's outcome means is this file's.
 * @module
 */
import { BROWSE_PORT, LABEL_FILES_BROWSE, renderBrowseJob } from '../job-spec/render.ts';
import type { JobSettings, Target } from '../job-spec/types.ts';
import { jobToken } from '../protocol/job-token.ts';
import { type OpQuery, queryKey, setQuery } from '../protocol/op-query.ts';
import { type BrowseOp, type CallOptions, type CallOutcome, callSession } from './call.ts';
import type { BrowseConfig } from './config.ts';
import { type BrowseApi, type BrowseLog, type Hint, SessionFinder } from './session-finder.ts';

export interface BrowseOptions {
  /** Injected in tests. */
  call?: (o: CallOptions) => Promise<CallOutcome>;
  now?: () => number;
  /** The key itself, instead of reading `cfg.keyFile` (tests). */
  key?: Buffer;
  port?: number;
  logger?: BrowseLog;
}

export type { BrowseOp } from './call.ts';

/** A call to a remembered Pod started before the gates answered (see `early`). Opaque to routes. */
export interface EarlyCall {
  /** Stops the call (the gates refused); its answer, if any, is never read. */
  cancel(): void;
}

interface Early extends EarlyCall {
  readonly owner: BrowseSessions;
  readonly server: string;
  readonly op: BrowseOp;
  readonly path: string;
  /** queryKey of the op's query: an early call answers only the same query. */
  readonly query: string;
  readonly hint: Hint;
  /** Never rejects: an aborted or failed call is an outcome like any other. */
  readonly outcome: Promise<CallOutcome | { kind: 'error'; err: unknown }>;
}

/** How a call may reach a session. */
export interface RunOptions {
  /**
   * `false`: only a Pod already serving answers; none is started and none starting is waited for
   * (undefined at once). For a caller that only saves a Job when one is warm (a copy's kind).
   */
  start?: boolean;
}

/** What a route needs of browse sessions (BrowseSessions, or a fake in route tests). */
export interface BrowseChannel {
  /** `query`: the op's paging and filter (lib/protocol/op-query.ts), carried to the Pod as is. */
  run(t: Target, op: BrowseOp, path: string, signal?: AbortSignal, early?: EarlyCall, query?: OpQuery, o?: RunOptions): Promise<string | undefined>;
  /** Starts the call to a remembered Pod before the gates answer; optional (fakes may leave it out). */
  early?(server: string, op: BrowseOp, path: string, signal?: AbortSignal, query?: OpQuery): EarlyCall | undefined;
}

export class BrowseSessions {
  readonly #cfg: BrowseConfig;
  readonly #call: (o: CallOptions) => Promise<CallOutcome>;
  readonly #port: number;
  readonly #log: BrowseLog | undefined;
  readonly #pods: SessionFinder;

  constructor(api: BrowseApi, settings: JobSettings, cfg: BrowseConfig, opts: BrowseOptions = {}) {
    this.#cfg = cfg;
    this.#call = opts.call ?? callSession;
    this.#port = opts.port ?? BROWSE_PORT;
    this.#log = opts.logger;
    const kind = { what: 'browse sessions', label: LABEL_FILES_BROWSE, opIdPrefix: 'b', render: renderBrowseJob };
    this.#pods = new SessionFinder(api, settings, cfg, kind, { now: opts.now, key: opts.key, logger: opts.logger });
  }

  /**
   * Starts the call to the Pod remembered for `server`, before the gates have said which world the
   * request is for; undefined when there is nothing to call. Pass it to `run`, or `cancel` it.
   */
  early(server: string, op: BrowseOp, path: string, signal?: AbortSignal, query?: OpQuery): EarlyCall | undefined {
    const key = this.#pods.key();
    const hint = this.#pods.hint(server);
    if (!key || !hint || !this.#pods.lifeLeft(hint)) return undefined;
    const stop = new AbortController();
    const sig = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
    const outcome = this.#callOnce(key, hint.job, hint.ip, op, path, sig, query).catch((err: unknown) => ({ kind: 'error' as const, err }));
    const e: Early = { owner: this, server, op, path, query: queryKey(query), hint, outcome, cancel: () => stop.abort(new Error('the request did not pass its gates')) };
    return e;
  }

  /**
   * The Result payload from a session, or undefined to run the one-shot Job instead. `early` is
   * this request's call started by `early`: its answer is used when it was for this same request
   * and world; in every other case it is cancelled and this request goes on as without it.
   */
  async run(t: Target, op: BrowseOp, path: string, signal?: AbortSignal, early?: EarlyCall, query?: OpQuery, o: RunOptions = {}): Promise<string | undefined> {
    const key = this.#pods.key();
    if (!key) {
      early?.cancel();
      return undefined;
    }
    const want = this.#pods.want(t);
    const e = early as Early | undefined;
    if (e && e.owner === this && e.server === t.server && e.op === op && e.path === path && e.query === queryKey(query) && this.#pods.sameWorld(e.hint, want)) {
      const outcome = await e.outcome;
      if (outcome.kind === 'ok') {
        this.#pods.remember(t.server, e.hint);
        return outcome.body;
      }
      this.#pods.forget(t.server, e.hint);
      if (outcome.kind === 'timeout') return undefined;
      // Aborted with the request, or unreachable: the listing below decides (and sees the abort).
    } else {
      early?.cancel();
      const hint = this.#pods.hint(t.server);
      if (hint && this.#pods.sameWorld(hint, want) && this.#pods.lifeLeft(hint)) {
        const outcome = await this.#callOnce(key, hint.job, hint.ip, op, path, signal, query);
        if (outcome.kind === 'ok') {
          this.#pods.remember(t.server, hint);
          return outcome.body;
        }
        this.#pods.forget(t.server, hint);
        // A Pod that took the whole call timeout is not asked again for this request.
        if (outcome.kind === 'timeout') return undefined;
      }
    }
    try {
      return await this.#pods.find(
        t,
        key,
        want,
        async (s) => {
          const outcome = await this.#callOnce(key, s.job, s.ip, op, path, signal, query);
          if (outcome.kind === 'ok') return { body: outcome.body };
          if (outcome.kind === 'status' || outcome.kind === 'timeout') {
            // It answered but not with a result (or not in time): the one-shot Job decides.
            this.#log?.warn({ pod: s.pod, outcome }, 'browse pod did not answer with a result; running a one-shot job');
            return 'stop';
          }
          // Unreachable: it may be just up and not listening yet, or just gone; try the next.
          return 'next';
        },
        o.start === false ? 'never' : 'wait',
        signal,
      );
    } catch (err) {
      if (signal?.aborted) throw err;
      // The Kubernetes API refused or failed: the one-shot path reports it properly, if it persists.
      this.#log?.warn({ server: t.server, err: String(err) }, 'browse session unavailable; running a one-shot job');
      return undefined;
    }
  }

  async #callOnce(key: Buffer, job: string, ip: string, op: BrowseOp, path: string, signal?: AbortSignal, query?: OpQuery): Promise<CallOutcome> {
    const q = setQuery(query);
    const o: CallOptions = { ip, port: this.#port, token: jobToken(key, job), op, path, ...(Object.keys(q).length ? { query: q } : {}), timeoutMs: this.#cfg.callTimeoutMs, signal };
    const first = await this.#call(o);
    // A kept-alive connection the Pod closed a moment ago fails once; a fresh one tells the truth.
    if (first.kind === 'unreachable' && /ECONNRESET|socket hang up/.test(first.detail)) return this.#call(o);
    return first;
  }
}
