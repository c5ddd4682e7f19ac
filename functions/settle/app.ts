/**
 * `POST /api/v1/restore-chains/settle` — one settle pass: restore chains, then the pulls that ended
 * staged and wait to be placed (lib/maintenance/pull-placement.ts). Felis ran chain settling every
 * 5 s in-process; here a scheduler (PingSource, CronJob) or an operator calls it, and Knative
 * sources deliver it as events: a PingSource tick (both), or an ApiServerSource's change of a
 * backup Job (chains) or of a pull Job (pulls).
 */

import { emit } from '../../lib/events/emit.ts';
import { JOB_CHANGE_TYPES, PING_TYPE, type SettleWork, settleWork } from '../../lib/events/settle-events.ts';
import type { Deps } from '../../lib/http/deps.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import type { OpenEvent } from '../../lib/http/event-entry.ts';
import { defineFunction } from '../../lib/http/routes/register.ts';
import { SETTLE_REASONS } from '../../lib/maintenance/settle.ts';

/** One pass over the restore chains, logged chain by chain; the answer lists every chain it looked at. */
async function chainPass(deps: Deps) {
  const chains = await deps.settler.settleOnce();
  for (const ch of chains) {
    if (ch.error) deps.logger.warn({ job: ch.job, server: ch.server, error: ch.error }, 'restore chain stays pending');
    else {
      deps.logger.info({ job: ch.job, server: ch.server, state: ch.state, reason: ch.reason }, 'restore chain settled');
      emit({ type: `dev.felis.restore.chain.${ch.state}`, subject: ch.job, data: { job: ch.job, server: ch.server, state: ch.state, ...(ch.reason ? { reason: ch.reason } : {}) } }, deps.logger);
    }
  }
  return chains.map((ch) => ({
    job: ch.job,
    server: ch.server,
    state: ch.state,
    ...(ch.reason ? { reason: ch.reason, message: SETTLE_REASONS[ch.reason] } : {}),
    ...(ch.error ? { error: 'the restore could not be started; it is retried on the next pass' } : {}),
  }));
}

/** One pass over the pulls waiting to be placed, logged pull by pull. */
async function pullPass(deps: Deps) {
  const pulls = (await deps.placer?.placeOnce()) ?? [];
  for (const p of pulls) {
    if (p.state === 'pending') deps.logger.warn({ job: p.job, server: p.server, op: p.op, error: p.error }, 'pulled file stays waiting to be placed');
    else deps.logger.info({ job: p.job, server: p.server, op: p.op, state: p.state, to: p.to, code: p.code }, p.state === 'placed' ? 'pulled file placed' : 'pulled file not placed');
  }
  return pulls.map((p) => ({
    job: p.job,
    server: p.server,
    op: p.op,
    state: p.state,
    ...(p.to ? { to: p.to } : {}),
    ...(p.code ? { code: p.code } : {}),
    // The detail stays in the log: an answer to a source names no cluster internals.
    ...(p.state === 'pending' ? { error: 'the pulled file could not be placed yet; it is retried on the next pass' } : {}),
  }));
}

async function settlePass(deps: Deps, work: SettleWork) {
  return {
    ...(work !== 'pulls' ? { chains: await chainPass(deps) } : {}),
    ...(work !== 'chains' ? { pulls: await pullPass(deps) } : {}),
  };
}

/**
 * A source's event starts one pass and carries no input, so it needs no token: the worst a
 * stranger can do is ask for a pass, which is idempotent and settles each chain and places each
 * pull single-flight.
 */
function sourceEvents(deps: Deps) {
  const fromSource: OpenEvent = {
    kind: 'open',
    handle: async (ev, c) => {
      const work = settleWork(ev);
      if (!work) return sendJson(c, 200, { skipped: true, reason: 'neither a backup Job nor a pull Job: nothing to settle' });
      return sendJson(c, 200, await settlePass(deps, work));
    },
  };
  return { [PING_TYPE]: fromSource, ...Object.fromEntries(JOB_CHANGE_TYPES.map((t) => [t, fromSource])) };
}

export const settleRoutes = defineFunction('settle', (deps) => ({ 'restore.settle': async (c) => sendJson(c, 200, await settlePass(deps, 'all')) }), sourceEvents);
