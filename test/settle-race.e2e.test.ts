/**
 * Single-flight settling end to end: many settle passes at once (as several replicas, repeated
 * triggers and Felis's own settler would run them) against one finished restore chain start
 * exactly one restore Job, and the chain ends `started`, never abandoned.
 */

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { admin, createPendingChain, restoreTemplateFile } from './support/servers.ts';
import { type Stack, startStack, tierMs } from './support/stack.ts';

const ROUNDS = Number(process.env.FELIS_SETTLE_ROUNDS ?? 20);
const PASSES = 20;

describe('restore-chain settling is single-flight', () => {
  let s: Stack;
  before(async () => {
    s = await startStack({ restoreTemplate: restoreTemplateFile() });
  });
  after(async () => {
    await s?.close();
  });

  test(`${PASSES} concurrent settle passes x ${ROUNDS} rounds: exactly one restore Job per chain, every chain started`, { timeout: tierMs(120_000, 600_000) }, async () => {
    const batch = admin(s.cluster).batch;
    const abandoned: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const server = `race-${round}`;
      await createPendingChain(s.cluster, server, tierMs(10_000, 60_000));
      // Each round releases a fresh chain into a crowd of passes (some already running when it is
      // still being read by others), then checks what they did.
      const answers = await Promise.all(
        Array.from({ length: PASSES }, async (_, i) => {
          await new Promise((r) => setTimeout(r, (i % 5) * 2));
          const r = await s.call('POST', '/api/v1/restore-chains/settle');
          assert.equal(r.status, 200, r.text);
          return r.body.chains as { job: string; state: string; reason?: string }[];
        }),
      );
      for (const chains of answers) {
        for (const c of chains) if (c.job === `snap-${server}` && c.state !== 'started') abandoned.push(`${server}: ${c.state} ${c.reason ?? ''}`);
      }
      const jobs = (await batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: `felis.lolicon.best/server=${server}` })).items;
      const restores = jobs.filter((j) => j.metadata!.labels!['app.kubernetes.io/managed-by'] === 'felis-restore');
      assert.equal(restores.length, 1, `${server}: ${restores.map((j) => j.metadata!.name).join(', ')}`);
      const chain = jobs.find((j) => j.metadata!.name === `snap-${server}`)!;
      assert.equal(chain.metadata!.labels!['felis.lolicon.best/then-restore'], 'started', server);
      assert.equal(chain.metadata!.annotations?.['felis.lolicon.best/then-restore-reason'], undefined, server);
    }
    assert.deepEqual(abandoned, []);
  });
});
