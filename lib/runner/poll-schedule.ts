/**
 * When to look again for a file Job's Pod. Without `pods watch` (the Role grants only `list`), the
 * runner polls, and every poll is an API request; so the schedule follows what the Pod can do next.
 *
 * - No Pod yet: the Job controller creates it within moments of the Job, so look again soon.
 * - Pod not bound to a node: a container cannot start before binding is followed by sandbox
 *   creation and the volume mount, so a slow poll (300 ms) loses nothing.
 * - Bound, container being created: that takes hundreds of milliseconds, so the first look comes
 *   200 ms after the stage was seen, then every 120 ms — under the ~100+ ms a program needs from
 *   container start to its result line, so the log is followed before the result is printed.
 *
 * While the container is created, each poll is itself the log request (`follow`): the poll that
 * finds the container started is already the stream, with no list-then-read round trip.
 * Pure. `npm run bench` compares the runner with Felis's fixed 150 ms and 500 ms polls.
 * @module
 */

export type PodStage = 'no-pod' | 'unscheduled' | 'creating';

export interface PollSchedule {
  /** Milliseconds to wait before the next look, given the stage and how long we have seen it. */
  next(stage: PodStage, msInStage: number): number;
}

export const stageAwareSchedule: PollSchedule = {
  next(stage, msInStage) {
    switch (stage) {
      case 'no-pod':
        return msInStage < 200 ? 50 : 200;
      case 'unscheduled':
        return 300;
      case 'creating':
        return msInStage < 1 ? 200 : 120;
    }
  },
};
