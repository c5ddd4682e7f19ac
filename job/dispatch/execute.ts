/**
 * One operation of `felis files`: opens the root, dispatches, closes. Returns the Result (a
 * caller-fault outcome carries a `code`) or throws for an infrastructure failure: the root cannot
 * be opened, the op is unknown, or an unexpected non-OS error.
 *
 * @module
 */

import { sweepExpiredPulls } from '../../functions/files-pull/job/pull-staging.ts';
import { holdsWorld, isOp, mutates, type Op, opHas } from '../../lib/protocol/ops.ts';
import type { Result } from '../../lib/protocol/result.ts';
import type { Recovered } from '../journal/recover.ts';
import { openContext, recoverWorld, reportRecovered } from '../op-kit/context.ts';
import type { ExecuteOptions, OpContext, OpRequest, OpRequestOf } from '../runtime/types.ts';
import { rememberWithheld } from '../runtime/withheld.ts';
import { refuseWorkingName } from '../runtime/working-files.ts';
import { roomToRunAgain } from '../trash/room.ts';
import { DEFAULT_SESSION_IDLE_MS, sweepStaleSessions } from '../upload/session.ts';
import { RUNS } from './runs.generated.ts';

export type { ExecuteOptions, OpCall, OpRequest, OpRequestOf } from '../runtime/types.ts';

/** Runs after the first: one is what a right estimate needs; the bound only keeps a wrong one short. */
const MAX_RERUNS = 3;

type Run<K extends Op> = (ctx: OpContext, req: OpRequestOf<K>) => Result | Promise<Result>;

/**
 * Each op's run, by its contract's name, collected from the capability folders (each run sits in
 * its op's job/ folder as `runs`): the compiler refuses a missing or an extra op. Ops run
 * synchronously except the archive ops, which stream and may take long.
 */
const OPS: { [K in Op]: Run<K> | undefined } = RUNS;
/** A run under a name no contract declares does not compile either. */
const ONLY_OPS: [Exclude<keyof typeof RUNS, Op>] extends [never] ? true : never = true;
void ONLY_OPS;

export async function execute(req: OpRequest, opts: ExecuteOptions = {}): Promise<Result> {
  if (req.op === 'pull' && req.pull && opts.pullConnect) req = { ...req, pull: { ...req.pull, ...opts.pullConnect } };
  const run = Object.hasOwn(OPS, req.op) ? (OPS[req.op] as Run<Op> | undefined) : undefined;
  if (!run) {
    if (isOp(req.op)) {
      throw new Error(`op ${JSON.stringify(req.op)} is not supported by this program`);
    }
    throw new Error(`unknown op ${JSON.stringify(req.op)}`);
  }
  const hidden = refuseWorkingName(req);
  if (hidden) return hidden;
  const ctx = openContext(req.worldsRoot, opts);
  let recovered: Recovered[] = [];
  try {
    // A pull writes only its own staging and holds nothing: another change may run beside it, so it
    // recovers, remembers and sweeps nothing (functions/files-pull/job/pull.ts). Every other mutation holds the world.
    const writes = isOp(req.op) && holdsWorld(req.op);
    // A stop signal while the op stages ends the Job at once; during a placement it waits for the end.
    if (isOp(req.op) && mutates(req.op)) opts.onSignal?.(() => ctx.stop.request());
    if (writes) {
      // An unfinished placement a dead Job left is finished or undone before anything else.
      recovered = recoverWorld(ctx);
      // A read-write Job remembers the withheld file's content before its op may replace it, so a
      // link left holding that content stays withheld (withheld.ts). Read-only Jobs only read it.
      rememberWithheld(ctx.root);
    }
    let result = await run(ctx, req);
    // A full volume met part way: when what the op needs fits in the free space and what the trash
    // holds, the oldest records go until it does and the op runs again; otherwise its no_space
    // stands and the trash is untouched. Only ops that read their input from the volume or the
    // spec run again; a stream (an upload, a pull) is not there twice.
    for (let round = 0; writes && result.code === 'no_space' && opHas(req.op, 'rerunnable') && round < MAX_RERUNS && roomToRunAgain(ctx, req, result); round++) {
      result = await run(ctx, req);
    }
    // Said again just before the result, where a reader of the log's tail (the ops listing) sees it.
    reportRecovered(ctx, recovered);
    // Upload sessions a lost receiver left and nobody came back to in time go now, rather than
    // wait for the next upload. A live session may exist (its receiver holds nothing between its
    // calls), but never past its idle period, which is what the sweep judges by. Only after one
    // that changed the world: a refused op changes nothing.
    if (result.code === undefined && writes) {
      sweepStaleSessions(ctx, DEFAULT_SESSION_IDLE_MS);
      // The same for a pull's staging nobody can place any more (functions/files-pull/job/pull-staging.ts).
      sweepExpiredPulls(ctx.root.fd, ctx.now());
    }
    return result;
  } finally {
    ctx.root.close();
  }
}
