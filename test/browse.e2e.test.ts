/**
 * Browse sessions end to end, through the real client-node: reads and lists answered by a browse
 * Pod after the first, the same answers as a one-shot Job, the session never holding the world,
 * nothing left once it is idle, and the one-shot fallback when the browse Pod never starts.
 */

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import { LABEL_FILES_BROWSE } from '../lib/job-spec/render.ts';
import { FUNCTION_USER, q, REAL, type Stack, startStack, tierMs, until } from './support/stack.ts';
import { oneShotEditor, SURVIVAL } from './support/warm-cold.ts';

const BROWSE = `${LABEL_FILES_BROWSE}=true`;

describe('browse sessions', () => {
  let s: Stack;
  let core: CoreV1Api;
  let batch: BatchV1Api;
  before(async () => {
    // A short idle period so the session ends within the test.
    // The real tier's TTL controller is not scaled down as the embedded one is: a short TTL, so the
    // finished session Job is removed within the test there too.
    s = await startStack({ browse: { idleSeconds: 2, startBudgetMs: 300 }, editor: REAL ? { ttlSeconds: 2 } : undefined });
    const kc = s.cluster.kubeConfig(s.cluster.adminToken);
    core = kc.makeApiClient(CoreV1Api);
    batch = kc.makeApiClient(BatchV1Api);
  });
  after(async () => {
    await s?.close();
  });

  const browsePods = async () => (await core.listNamespacedPod({ namespace: 'minecraft', labelSelector: BROWSE })).items;

  test('ten reads in a row: after the first they come from one browse Pod, equal to a one-shot read', async () => {
    s.cluster.resetCounts();
    const answers: string[] = [];
    const created: number[] = [];
    const creates = () => s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0;
    for (let i = 0; i < 10; i++) {
      const before = creates();
      const r = await s.call('GET', `/api/v1/servers/survival/file?path=${q('server.properties')}`);
      assert.equal(r.status, 200, r.text);
      answers.push(r.text);
      created.push(creates() - before);
    }
    // The first read starts the session (and may be answered by a one-shot Job); on a loaded
    // machine a read or two more may be, while the Pod starts; from then on no Job is created.
    assert.ok(created[0]! >= 1 && created[0]! <= 2, `Jobs created per read: ${created}`);
    const firstServed = created.findIndex((n, i) => i > 0 && n === 0);
    assert.ok(firstServed > 0 && firstServed <= 5, `Jobs created per read: ${created}`);
    assert.ok(
      created.slice(firstServed).every((n) => n === 0),
      `Jobs created per read: ${created}`,
    );
    const pods = await browsePods();
    assert.equal(pods.length, 1, 'one browse Pod');
    assert.match(pods[0]!.status!.podIP ?? '', REAL ? /./ : /^127\.(?!0\.0\.1$)/);

    const body = JSON.parse(answers[9]!);
    assert.ok(!Buffer.from(body.content, 'base64').toString().includes('hunter2'), 'redacted as a one-shot read is');
    for (const a of answers) assert.equal(JSON.parse(a).content, body.content);

    // The same read as a one-shot Job, through the editor alone.
    const oneShot = oneShotEditor(s);
    const direct = await oneShot.read(SURVIVAL, 'server.properties');
    assert.equal(body.content, direct.content.toString('base64'));
    assert.equal(body.sha256, direct.sha256);
    assert.equal(body.content_sha256, direct.contentSha256);

    // The guarded file is refused through the session as by the Job, and a listing works too.
    s.cluster.resetCounts();
    const secret = await s.call('GET', `/api/v1/servers/survival/file?path=${q('config/paper-global.yml')}`);
    assert.equal(secret.status, 400);
    assert.equal(secret.body.error.code, 'bad_path');
    const l = await s.call('GET', '/api/v1/servers/survival/files?path=config');
    assert.equal(l.status, 200, l.text);
    assert.equal(l.body.entries.find((e: { name: string }) => e.name === 'paper-global.yml').size, 0);
    assert.equal(s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0, 0, 'no new Job for either');
  });

  test('the session never holds the world: the holder is free, a write goes through, and the next read sees it', async () => {
    assert.equal((await browsePods()).filter((p) => p.status?.phase === 'Running').length, 1, 'the session is up');
    const h = await s.call('GET', '/api/v1/servers/survival/holder');
    assert.equal(h.status, 200, h.text);
    assert.equal(h.body.held, false, h.text);
    const text = `written while browsing ${Date.now()}\n`;
    const w = await s.call('PUT', `/api/v1/servers/survival/file?path=${q('notes.txt')}`, {
      content: Buffer.from(text).toString('base64'),
      content_sha256: (await import('node:crypto')).createHash('sha256').update(text).digest('hex'),
    });
    assert.equal(w.status, 200, w.text);
    s.cluster.resetCounts();
    const r = await s.call('GET', `/api/v1/servers/survival/file?path=${q('notes.txt')}`);
    assert.equal(Buffer.from(r.body.content, 'base64').toString(), text);
    // Straight to disk, no caching: a change made outside any Job shows at once.
    writeFileSync(join(s.world, 'notes.txt'), 'changed on disk\n');
    const r2 = await s.call('GET', `/api/v1/servers/survival/file?path=${q('notes.txt')}`);
    assert.equal(Buffer.from(r2.body.content, 'base64').toString(), 'changed on disk\n');
    assert.equal(s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0, 0, 'both reads through the session');
  });

  test('after its idle period the session ends: no Pod, no Job, no process left', async () => {
    await until(async () => ((await browsePods()).length === 0 ? true : undefined), 'the browse Pod to go', tierMs(15_000, 60_000));
    // The finished Job is removed by its TTL with foreground deletion: its Pods go first, the Job a moment later.
    const jobsLeft = async () => (await batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: BROWSE })).items.length;
    await until(async () => ((await jobsLeft()) === 0 ? true : undefined), 'the browse Job to go', tierMs(5_000, 30_000));
    assert.equal(await jobsLeft(), 0);
    if (!REAL) {
      const cluster = s.cluster as unknown as { podAddressesInUse(): number };
      await until(async () => (cluster.podAddressesInUse() === 0 ? true : undefined), 'the kubelet to end every Pod', 5000);
    }
  });

  test('when the browse Pod never starts, reads still answer through one-shot Jobs', async () => {
    s.cluster.faults.pod(BROWSE, { neverStart: true });
    try {
      for (let i = 0; i < 3; i++) {
        const r = await s.call('GET', `/api/v1/servers/survival/file?path=${q('server.properties')}`);
        assert.equal(r.status, 200, r.text);
        assert.ok(!Buffer.from(r.body.content, 'base64').toString().includes('hunter2'));
      }
      const l = await s.call('GET', '/api/v1/servers/survival/files?path=');
      assert.equal(l.status, 200, l.text);
      const pods = await browsePods();
      assert.equal(pods.length, 1, 'one browse Job was tried, not one per request');
      assert.notEqual(pods[0]!.status?.phase, 'Running');
    } finally {
      s.cluster.faults.clear();
    }
  });
});
