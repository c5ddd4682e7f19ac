/**
 * Waiting for the world instead of refusing, when a caller asked to (`Prefer: wait=N` on a file
 * mutation): an admission refused because another file mutation holds the world is tried again,
 * with a growing, jittered pause, until it is admitted or the wait is over. Anything else that
 * holds the world (a backup, a restore, a migration, an export, the reaper, a pending restart) and
 * every other refusal (server running, gone) is answered at once, as without the preference: those
 * last far longer than a caller should hold a connection for, or are not ours to wait out.
 *
 * Arrival order: the annotation lock has no queue, so across function instances the first to try
 * after the holder lets go wins. Within one instance, waiters for a server line up: only the first
 * in line tries, and a new waiter joins the end of the line rather than trying first, so one
 * instance admits its waiters in the order they came. A mutation of this instance that gives the
 * world back nudges the first in line to try at once rather than at its next try.
 * @module
 */
import { MaintenanceBusyError } from './errors.ts';
import type { HolderKind } from './holder.ts';

/** The kinds of holder a waiter waits out: file mutations, which end in seconds. */
export const WAITABLE_KINDS: ReadonlySet<HolderKind> = new Set<HolderKind>(['file-write', 'config-write']);

/** First pause after a refusal, the most a pause grows to, and the jitter (a fraction either way). */
export const WAIT_FIRST_MS = 50;
export const WAIT_MAX_MS = 500;
const JITTER = 0.25;

export interface WaitOptions {
  /** The longest to wait, from the first refusal. */
  waitMs: number;
  /** The caller went away: stop waiting (the last refusal is thrown). */
  signal?: AbortSignal;
  /** Told once when the wait is honoured: admitted (after waiting or not) or out of time after waiting. */
  applied?: () => void;
}

/** The wait ran out with the world still held by a file mutation: the 409 the caller would have had. */
export class WaitExpiredError extends MaintenanceBusyError {
  constructor(last: MaintenanceBusyError, seconds: number) {
    super(last.kind, last.activity, { retryAfterSeconds: last.retryAfterSeconds });
    this.message = `${this.message.replace(/; retry once it finishes$/, '')}; still held after waiting ${seconds} s: retry once it finishes`;
    this.name = 'WaitExpiredError';
  }
}

/** A refusal worth waiting out: a file mutation holds the world, or another admission raced ours. */
export function waitable(err: unknown): err is MaintenanceBusyError {
  if (!(err instanceof MaintenanceBusyError)) return false;
  return err.contended || (err.kind !== undefined && WAITABLE_KINDS.has(err.kind));
}

export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  random(): number;
}

export const realClock: Clock = {
  now: () => Date.now(),
  random: () => Math.random(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        clearTimeout(t);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const t = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    }),
};

/** One line of waiters per key (a server), in arrival order. */
export class ArrivalLine {
  readonly #lines = new Map<string, Array<() => void>>();
  readonly #nudges = new Map<string, Set<() => void>>();

  /**
   * This instance just gave `key`'s world back: a waiter pausing between tries tries again now
   * (and from the first, short pause on), instead of finding out at its next try.
   */
  nudge(key: string): void {
    for (const n of this.#nudges.get(key) ?? []) n();
  }

  /** Calls `fn` on each nudge of `key` until the returned function is called. */
  onNudge(key: string, fn: () => void): () => void {
    let set = this.#nudges.get(key);
    if (!set) this.#nudges.set(key, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0 && this.#nudges.get(key) === set) this.#nudges.delete(key);
    };
  }

  /** Joins the end of `key`'s line; resolves the returned `turn` once first in it. */
  join(key: string): { first: boolean; turn: Promise<void>; leave: () => void } {
    let line = this.#lines.get(key);
    if (!line) this.#lines.set(key, (line = []));
    let wake!: () => void;
    const turn = new Promise<void>((r) => (wake = r));
    line.push(wake);
    if (line.length === 1) wake();
    const leave = () => {
      const l = this.#lines.get(key);
      if (!l) return;
      const i = l.indexOf(wake);
      if (i < 0) return;
      l.splice(i, 1);
      if (l.length === 0) this.#lines.delete(key);
      else if (i === 0) l[0]!();
    };
    return { first: line.length === 1, turn, leave };
  }

  waiting(key: string): number {
    return this.#lines.get(key)?.length ?? 0;
  }
}

/**
 * `admit` until it succeeds, waiting out file-mutation holders for up to `opts.waitMs`. Throws
 * the first refusal that is not waitable, a WaitExpiredError once out of time, or the last refusal
 * when the caller went away.
 */
export async function admitWaiting<T>(key: string, admit: () => Promise<T>, opts: WaitOptions, line: ArrivalLine, clock: Clock = realClock): Promise<T> {
  const seconds = Math.round(opts.waitMs / 1000);
  let last: MaintenanceBusyError | undefined;
  /** One try: its value (told to `applied`), or a refusal worth waiting out; any other error throws. */
  const attempt = async (): Promise<{ value: T } | { refused: MaintenanceBusyError }> => {
    try {
      const value = await admit();
      opts.applied?.();
      return { value };
    } catch (err) {
      if (!waitable(err)) throw err;
      return { refused: err };
    }
  };
  // A caller who finds waiters already in line goes behind them instead of trying first.
  if (line.waiting(key) === 0) {
    const a = await attempt();
    if ('value' in a) return a.value;
    last = a.refused;
  }
  const end = clock.now() + opts.waitMs;
  const place = line.join(key);
  try {
    if (!place.first) {
      // Behind others: wait for our turn (or the end of the wait), then stop the timer.
      const stop = new AbortController();
      const signal = opts.signal ? AbortSignal.any([stop.signal, opts.signal]) : stop.signal;
      await Promise.race([place.turn, clock.sleep(Math.max(0, end - clock.now()), signal)]);
      stop.abort();
    }
    let pause = WAIT_FIRST_MS;
    // Right after a refusal, the holder is still there: pause before the next try.
    for (let rest = last !== undefined; ; rest = true) {
      if (rest) {
        const left = end - clock.now();
        let nudged = false;
        if (left > 0) {
          const wake = new AbortController();
          const off = line.onNudge(key, () => {
            nudged = true;
            wake.abort();
          });
          try {
            await clock.sleep(Math.min(pause * (1 - JITTER + 2 * JITTER * clock.random()), left), opts.signal ? AbortSignal.any([wake.signal, opts.signal]) : wake.signal);
          } finally {
            off();
          }
        }
        // A nudged waiter tries now; the holder's Job may still be finishing, so short pauses again.
        pause = nudged ? WAIT_FIRST_MS : Math.min(pause * 2, WAIT_MAX_MS);
      }
      if (opts.signal?.aborted) throw last ?? new MaintenanceBusyError();
      const a = await attempt();
      if ('value' in a) return a.value;
      last = a.refused;
      if (end - clock.now() <= 0) {
        opts.applied?.();
        throw new WaitExpiredError(last, seconds);
      }
    }
  } finally {
    place.leave();
  }
}
