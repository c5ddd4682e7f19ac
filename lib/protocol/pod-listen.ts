/**
 * Reaching a Job Pod's program once the Pod has an address. A Pod gets its address before its
 * program listens, and the program then listens within a few dozen ms (on the embedded cluster
 * 50–60 ms), so a caller that knows the address asks the program again at short steps rather than
 * listing the Pod again: close together for the first second, then sparse for a program that is
 * slow to come up. One schedule for every such wait (downloads, upload receivers).
 * @module
 */
import { sleep } from '../sleep.ts';

/** How long to wait before asking again, `waitedMs` after the first refusal. */
export function connectRetryMs(waitedMs: number): number {
  return waitedMs < 1_000 ? 10 : 50;
}

/**
 * Asks `answers` until it says yes, on the schedule above, for at most `limitMs` (or until
 * `deadline`, a `performance.now()` time, if that comes first). False when it never did: the
 * caller then looks at the Pod again (it may have ended).
 */
export async function untilAnswers(answers: () => Promise<boolean>, limitMs: number, deadline: number, signal?: AbortSignal): Promise<boolean> {
  const t = performance.now();
  for (;;) {
    if (await answers()) return true;
    const waited = performance.now() - t;
    const wait = connectRetryMs(waited);
    if (waited + wait > limitMs || performance.now() + wait > deadline) return false;
    await sleep(wait, signal);
  }
}
