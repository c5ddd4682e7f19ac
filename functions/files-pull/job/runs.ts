/**
 * The pull's run, loaded only by a pull Job: the other ops never pay for the HTTP client and the
 * address tables (pull.ts is imported when a pull runs).
 * @module
 */
import type { OpContext, OpRequestOf } from '../../../job/runtime/types.ts';

export const runs = {
  pull: async (ctx: OpContext, req: OpRequestOf<'pull'>) => (await import('./pull.ts')).pull(ctx, req),
};
