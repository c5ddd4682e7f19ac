/**
 * The one "list Jobs until finished" loop: after its answer, a Job still holds the world until the
 * Job controller marks it finished, so whoever answers after a Job (a mutating file op, an upload)
 * lists it, backing off from 20 ms to 250 ms, until every Job listed has a terminal condition.
 * @module
 */
import type { V1Job } from '@kubernetes/client-node';
import { sleep as plainSleep } from '../sleep.ts';
import { jobFinished } from './job-facts.ts';

export interface JobWait {
  /** Lists the Jobs; undefined when this listing did not come through (the loop lists again). */
  list: () => Promise<V1Job[] | undefined>;
  /** Stop listing at this `performance.now()` time and answer the last listing. */
  endAt?: number;
  /** Called between listings: true ends the wait early (the caller knows enough another way). */
  enough?: () => Promise<boolean>;
  sleep?: (ms: number) => Promise<void>;
}

/** Answers the Jobs as last listed: all finished (none listed counts), or whatever came before the end. */
export async function waitJobsFinished(w: JobWait): Promise<V1Job[]> {
  const sleep = w.sleep ?? plainSleep;
  let last: V1Job[] = [];
  for (let delay = 20; w.endAt === undefined || performance.now() < w.endAt; delay = Math.min(delay * 2, 250)) {
    const jobs = await w.list();
    if (jobs) last = jobs;
    if (jobs?.every(jobFinished)) return jobs;
    if (w.enough && (await w.enough())) return last;
    await sleep(delay);
  }
  return last;
}
