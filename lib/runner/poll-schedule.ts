/**
 * When to look again for a file Job's Pod. Without `pods watch` (the Role grants only `list`), the
 * runner polls, and every poll is an API request; so the schedule follows what the Pod can do next.
 *
 * - No Pod yet: the Job controller creates it within moments of the Job, so look again soon.
 * - Pod not bound to a node: nothing can start before binding is followed by sandbox creation and
 *   the volume mount, which take hundreds of milliseconds, so a slow poll loses nothing.
 * - Bound, container being created: the chance that it has started grows with every moment, so
 *   the interval shrinks from 300 ms towards a 100 ms floor.
 *
 * Pure: the runner and the benchmark share it. `npm run bench` compares it with fixed intervals.
 * @module
 */

export type PodStage = 'no-pod' | 'unscheduled' | 'creating';

export interface PollSchedule {
  /** Milliseconds to wait before the next look, given the stage and how long it has lasted. */
  next(stage: PodStage, msInStage: number): number;
}

export const stageAwareSchedule: PollSchedule = {
  next(stage, msInStage) {
    switch (stage) {
      case 'no-pod':
        return msInStage < 200 ? 50 : 200;
      case 'unscheduled':
        return 250;
      case 'creating':
        return Math.max(100, Math.round(300 - msInStage / 5));
    }
  },
};

/** A fixed interval, as Felis's runner polls (150 ms; the seed used 500 ms). */
export function fixedSchedule(ms: number): PollSchedule {
  return { next: () => ms };
}
