/**
 * `POST /api/v1/restore-chains/settle` — one pass of restore-chain settling. Felis ran it every 5 s
 * in-process; here a scheduler (PingSource, CronJob) or an operator calls it.
 */
import type { Hono } from 'hono';
import type { Env } from '../../lib/http/app.ts';
import { sendJson } from '../../lib/http/envelope.ts';
import type { Deps } from '../../lib/http/deps.ts';
import { SETTLE_REASONS } from '../../lib/maintenance/settle.ts';

export const settleRoutes = (deps: Deps) => (app: Hono<Env>) => {
  app.post('/api/v1/restore-chains/settle', async (c) => {
    const chains = await deps.settler.settleOnce();
    for (const ch of chains) {
      if (ch.error) deps.logger.warn({ job: ch.job, server: ch.server, error: ch.error }, 'restore chain stays pending');
      else deps.logger.info({ job: ch.job, server: ch.server, state: ch.state, reason: ch.reason }, 'restore chain settled');
    }
    return sendJson(c, 200, {
      chains: chains.map((ch) => ({
        job: ch.job,
        server: ch.server,
        state: ch.state,
        ...(ch.reason ? { reason: ch.reason, message: SETTLE_REASONS[ch.reason] } : {}),
        ...(ch.error ? { error: 'the restore could not be started; it is retried on the next pass' } : {}),
      })),
    });
  });
};
