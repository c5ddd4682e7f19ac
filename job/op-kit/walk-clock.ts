/**
 * The clock of a walk over a tree (a search, a disk usage): asked every CLOCK_EVERY entries, it
 * says whether the walk's time budget is spent, and now and then lets the event loop turn, since in
 * a browse Pod the walk shares one thread with the lists and reads of whoever is browsing, which
 * must not wait out a whole walk.
 * @module
 */

/** Entries between two looks at the clock: cheap enough to not show, often enough to hold the budget. */
export const CLOCK_EVERY = 256;
/** The longest a walk holds the event loop. */
const YIELD_AFTER_MS = 20;

/** `pastBudget()`: true once `budgetMs` from now have passed; it yields to the event loop every YIELD_AFTER_MS. `now` is monotonic milliseconds (tests pass a fake). */
export function walkClock(budgetMs: number, now: () => number = () => performance.now()): () => Promise<boolean> {
  const start = now();
  const deadline = start + budgetMs;
  let turned = start;
  return async () => {
    const t = now();
    if (t > deadline) return true;
    if (t - turned >= YIELD_AFTER_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      turned = t;
    }
    return false;
  };
}
