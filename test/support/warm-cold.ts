/**
 * Warm against cold, for the e2e tests of the read routes a browse Pod serves: a GET repeated until
 * one is answered without a Job (the session is up), and an editor that always runs the one-shot
 * Job, to compare the two answers.
 * @module
 */
import assert from 'node:assert/strict';
import { configFromEnv } from '../../lib/config.ts';
import { FilesEditor } from '../../lib/files/editor.ts';
import type { Target } from '../../lib/job-spec/types.ts';
import { KubeJobPodApi } from '../../lib/kube/job-pods.ts';
import { SyncRunner } from '../../lib/runner/sync-runner.ts';
import { FUNCTION_USER, type Stack, tierMs, until } from './stack.ts';

/** The demo server's world, as the functions address it. */
export const SURVIVAL: Target = { server: 'survival', world: { claim: 'world-survival-0' } };

/** An editor with no browse sessions, acting as the functions' service account: every call is a one-shot Job. */
export function oneShotEditor(s: Stack): FilesEditor {
  const cfg = configFromEnv({ FELIS_IMAGE: 'felis-world/files:dev' }).editor!;
  return new FilesEditor(cfg, new SyncRunner(new KubeJobPodApi(s.cluster.kubeConfig(s.cluster.tokenFor('minecraft', 'felis-world')))));
}

/** GETs `url` until an answer comes without a Job created for it (the browse Pod's), and returns that answer. */
export function untilWarm(s: Stack, url: string, what: string): ReturnType<Stack['call']> {
  return until(
    async () => {
      s.cluster.resetCounts();
      const r = await s.call('GET', url);
      assert.equal(r.status, 200, r.text);
      return (s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0) === 0 ? r : undefined;
    },
    what,
    tierMs(20_000, 60_000),
  );
}
