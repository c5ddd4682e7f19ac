/**
 * When to look for a file Job's Pod and its container's start. Without `pods watch` (the Role grants
 * only `list`), the runner polls, and every poll is an API request; a poll that comes later than
 * the container's start plus the program's run to its result line makes the caller wait.
 *
 * The schedule works on one clock: milliseconds since the Job was sent. It holds samples of when
 * containers started on that clock — a prior (unscheduled 50–500 ms, then ContainerCreating
 * 300–2500 ms, as the benchmark draws them) and, as a hint only, the starts this instance has seen.
 * From them:
 * - the first look (the Pod list, needed once for the Pod's name) comes just before the earliest
 *   start seen: earlier, its answer is known;
 * - after that, each gap minimises expected lateness plus `costMs` per request: with S the share
 *   of starts still ahead and f their density now, the gap is √(2·costMs·S/f), clamped. Where starts
 *   are rare the looks are sparse; where they crowd (or past every start seen) they come every
 *   `minGapMs` (70 ms), under the time a program needs from its start to its result line (55–150
 *   ms measured, by machine load), so a start there is followed before its result is printed.
 * - While the Pod is unscheduled, no container can start before it is bound and its sandbox made,
 *   so the gap is at least `unscheduledGapMs`.
 *
 * Learning only moves looks; every look still asks the cluster, so an empty (scaled to zero) or
 * wrong memory costs requests or latency, never a different answer. Pure apart from that memory.
 * `npm run bench` compares this with Felis's fixed 150 ms and 500 ms polls.
 * @module
 */

export type PodStage = 'no-pod' | 'unscheduled' | 'creating';

export interface PollSchedule {
  /** Milliseconds after the Job was sent at which to list its Pod first. */
  firstLook(): number;
  /** Milliseconds to wait before the next look, given the stage last seen and the time since the Job was sent. */
  next(stage: PodStage, msSinceSent: number, msInStage: number): number;
  /** The container had not started `notBefore` ms after the Job was sent and had by `by`. */
  observeStart(notBefore: number, by: number): void;
}

export interface LearningScheduleOptions {
  /** Start times (ms after the Job was sent) assumed before any is seen. */
  prior?: readonly number[];
  /** How many seen starts to keep (oldest dropped). Default 64. */
  keep?: number;
  /** Expected lateness (ms) one request is worth. Default 10. */
  costMs?: number;
  minGapMs?: number;
  maxGapMs?: number;
  /** The width over which the density of starts is counted. Default 200 ms. */
  bandMs?: number;
  unscheduledGapMs?: number;
}

/** Evenly spread starts for unscheduled 50–500 ms, then ContainerCreating 300–2500 ms (8 × 8 grid). */
export function defaultPrior(): number[] {
  const out: number[] = [];
  for (let i = 0; i < 8; i++) for (let j = 0; j < 8; j++) out.push(50 + (450 * (i + 0.5)) / 8 + 300 + (2200 * (j + 0.5)) / 8);
  return out;
}

export class LearningSchedule implements PollSchedule {
  readonly #prior: readonly number[];
  readonly #seen: number[] = [];
  readonly #keep: number;
  readonly #cost: number;
  readonly #minGap: number;
  readonly #maxGap: number;
  readonly #band: number;
  readonly #unscheduledGap: number;

  constructor(opts: LearningScheduleOptions = {}) {
    this.#prior = opts.prior ?? defaultPrior();
    this.#keep = opts.keep ?? 64;
    this.#cost = opts.costMs ?? 10;
    this.#minGap = opts.minGapMs ?? 70;
    this.#maxGap = opts.maxGapMs ?? 600;
    this.#band = opts.bandMs ?? 200;
    this.#unscheduledGap = opts.unscheduledGapMs ?? 300;
  }

  /** The starts the gaps are computed from: the prior and what was seen. */
  samples(): number[] {
    return [...this.#prior, ...this.#seen];
  }

  firstLook(): number {
    const s = this.samples();
    return s.length === 0 ? 0 : Math.max(0, Math.min(...s) - this.#minGap);
  }

  next(stage: PodStage, msSinceSent: number, msInStage: number): number {
    // The Job controller makes the Pod within moments of the Job; until then look again soon.
    if (stage === 'no-pod') return msInStage < 200 ? 50 : 200;
    const gap = this.gapAt(msSinceSent);
    return stage === 'unscheduled' ? Math.max(gap, this.#unscheduledGap) : gap;
  }

  /** The cost-minimising gap at `t` ms after the Job was sent. */
  gapAt(t: number): number {
    const s = this.samples();
    let ahead = 0;
    let near = 0;
    for (const x of s) {
      if (x > t) ahead++;
      if (x > t && x <= t + this.#band) near++;
    }
    // Past every start seen nothing says how long it will be: look as often as a start needs.
    if (ahead === 0) return this.#minGap;
    if (near === 0) return this.#maxGap;
    const survival = ahead / s.length;
    const density = near / s.length / this.#band;
    return Math.min(this.#maxGap, Math.max(this.#minGap, Math.sqrt((2 * this.#cost * survival) / density)));
  }

  observeStart(notBefore: number, by: number): void {
    if (!Number.isFinite(notBefore) || !Number.isFinite(by) || by < notBefore) return;
    // The start lies somewhere between the two looks: the middle is the unbiased guess.
    this.#seen.push((notBefore + by) / 2);
    if (this.#seen.length > this.#keep) this.#seen.shift();
  }
}
