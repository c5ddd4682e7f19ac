/**
 * `POST /api/v1/restore-chains/settle` — one pass of restore-chain settling. Felis ran it every 5 s
 * in-process; here a scheduler (PingSource, CronJob) or an operator calls it, and Knative sources
 * deliver it as events: a PingSource tick, or an ApiServerSource's change of a backup Job.
 */
import type { OpenEvent } from '../../lib/http/event-entry.ts';
import { emit } from '../../lib/events/emit.ts';
import { isSettleTrigger, JOB_CHANGE_TYPES, PING_TYPE } from '../../lib/events/settle-events.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import type { Deps } from '../../lib/http/deps.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { SETTLE_REASONS } from '../../lib/maintenance/settle.ts';

/** One pass, logged chain by chain; the answer lists every chain the pass looked at. */
async function settlePass(deps: Deps) {
  const chains = await deps.settler.settleOnce();
  for (const ch of chains) {
    if (ch.error) deps.logger.warn({ job: ch.job, server: ch.server, error: ch.error }, 'restore chain stays pending');
    else {
      deps.logger.info({ job: ch.job, server: ch.server, state: ch.state, reason: ch.reason }, 'restore chain settled');
      emit({ type: `dev.felis.restore.chain.${ch.state}`, subject: ch.job, data: { job: ch.job, server: ch.server, state: ch.state, ...(ch.reason ? { reason: ch.reason } : {}) } }, deps.logger);
    }
  }
  return {
    chains: chains.map((ch) => ({
      job: ch.job,
      server: ch.server,
      state: ch.state,
      ...(ch.reason ? { reason: ch.reason, message: SETTLE_REASONS[ch.reason] } : {}),
      ...(ch.error ? { error: 'the restore could not be started; it is retried on the next pass' } : {}),
    })),
  };
}

/**
 * A source's event starts one pass and carries no input, so it needs no token: the worst a
 * stranger can do is ask for a pass, which is idempotent and settles each chain single-flight.
 */
function sourceEvents(deps: Deps) {
  const fromSource: OpenEvent = {
    kind: 'open',
    handle: async (ev, c) => {
      if (!isSettleTrigger(ev)) return sendJson(c, 200, { skipped: true, reason: 'not a backup Job: nothing to settle' });
      return sendJson(c, 200, await settlePass(deps));
    },
  };
  return { [PING_TYPE]: fromSource, ...Object.fromEntries(JOB_CHANGE_TYPES.map((t) => [t, fromSource])) };
}

export const settleRoutes = defineFunction(
  'settle',
  (deps) => ({ 'restore.settle': async (c) => sendJson(c, 200, await settlePass(deps)) }),
  sourceEvents,
);
