/**
 * `node bench/poll-replay.ts [--window MS] [--reps N]`: the poll schedule alone, replayed offline
 * (no cluster) against the sync bench's draws — unscheduled 50–500 ms, then ContainerCreating
 * 300–2500 ms — `--reps` times 40 ops (default 50), each rep with its own seed. A look at or after
 * the start opens the stream; it is in time if within `--window` ms (default 70) of the start, the
 * program's start-to-result time. Requests: the create, the looks, and one log read more when the
 * Pod list itself found the container started. Prints, for a fresh schedule per op (cold) and one
 * schedule per rep (warm, learning), the median over reps of the per-rep median requests, the share
 * of ops in time, and how many reps had most ops in time. Not part of `npm run bench`: it is quick.
 */
import { LearningSchedule, type PollSchedule } from '../lib/runner/poll-schedule.ts';
import { median, numberArg, prng } from './support.ts';

const argv = process.argv.slice(2);
const windowMs = numberArg(argv, '--window', 70);
const reps = numberArg(argv, '--reps', 50);
/** What one request to the cluster takes, between a look's decision and its answer. */
const REQUEST_MS = 3;

function op(s: PollSchedule, unscheduledMs: number, creatingMs: number): { requests: number; inTime: boolean } {
  const start = unscheduledMs + creatingMs;
  let t = s.firstLook();
  let requests = 1;
  let notStarted = 0;
  for (let first = true; ; first = false) {
    requests++;
    t += REQUEST_MS;
    if (t >= start) {
      s.observeStart(notStarted, t);
      return { requests: requests + (first ? 1 : 0), inTime: t <= start + windowMs };
    }
    notStarted = t;
    t += s.next(t < unscheduledMs ? 'unscheduled' : 'creating', t, 0);
  }
}

for (const mode of ['cold', 'warm'] as const) {
  const req: number[] = [];
  const share: number[] = [];
  for (let r = 0; r < reps; r++) {
    const rand = prng(1000 + r);
    const warm = new LearningSchedule();
    const runs = Array.from({ length: 40 }, () => op(mode === 'warm' ? warm : new LearningSchedule(), 50 + 450 * rand(), 300 + 2200 * rand()));
    req.push(median(runs.map((x) => x.requests)));
    share.push(runs.filter((x) => x.inTime).length / runs.length);
  }
  const most = share.filter((x) => x > 0.5).length;
  console.log(`${mode}: window ${windowMs} ms, median requests ${median(req)}, in time ${Math.round(median(share) * 100)} %, reps with most in time ${most}/${reps}`);
}
