/**
 * Pulls in the Job's tests, as the cluster runs them: the pull Job (with its op id, as the renderer
 * gives it), then, when it staged its download, the placement the placing pass runs. Not shipped.
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { ExecuteOptions, OpCall } from '../../../job/runtime/types.ts';
import type { World } from '../../../job/testing/world.ts';
import type { Result } from '../../../lib/protocol/result.ts';

/** A fresh op id, as a Job's op-id label holds it. */
export const newOpId = (): string => randomBytes(8).toString('hex');

/** Where a staged result says the file lands: its folder and its name. */
export function landingOf(to: string): { path: string; to: string } {
  const slash = to.lastIndexOf('/');
  return slash < 0 ? { path: '', to } : { path: to.slice(0, slash), to: to.slice(slash + 1) };
}

/**
 * Runs the pull `req` and, when it staged, its placement (with `placeOpts`, default `opts` without
 * the pull's connection spies). Returns the placement's result, or the pull's when it did not stage.
 */
export async function pulled(w: World, req: OpCall, opts: ExecuteOptions = {}, placeOpts?: ExecuteOptions): Promise<Result> {
  const opId = opts.opId ?? newOpId();
  const r = await w.run(req, { ...opts, opId });
  if (!r.staged || r.to === undefined) return r;
  const { pullConnect: _p, progress: _g, ...rest } = opts;
  return w.run({ op: 'pull-place', ...landingOf(r.to), pullOp: opId }, placeOpts ?? { ...rest, opId: newOpId() });
}
