/**
 * Many files in one call, end to end on both tiers: 500 deletes in one Job, a batch with one
 * escaping path changing nothing, two moves onto one name refused, modes set and links refused.
 */

import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BatchV1Api } from '@kubernetes/client-node';
import { LABEL_FILES_MODE } from '../lib/labels.ts';
import { FUNCTION_USER, REAL, type Stack, startStack, TIER, tierMs } from './support/stack.ts';

const S = '/api/v1/servers/survival';

describe(`many files in one call through the ${TIER} cluster`, () => {
  let s: Stack;
  let batch: BatchV1Api;
  before(async () => {
    s = await startStack();
    batch = s.cluster.kubeConfig(s.cluster.adminToken).makeApiClient(BatchV1Api);
  });
  after(async () => {
    await s?.close();
  });

  /** The names of the many-file Jobs of `mode` in the namespace. */
  const jobsOf = async (mode: string) => (await batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: `${LABEL_FILES_MODE}=${mode}` })).items.map((j) => j.metadata!.name!);

  test('deleting 500 files is one call and one Job', { timeout: tierMs(60_000) }, async () => {
    mkdirSync(join(s.world, 'logs'), { recursive: true });
    const paths = Array.from({ length: 500 }, (_, i) => `logs/${i}.log.gz`);
    for (const p of paths) writeFileSync(join(s.world, p), 'old log\n');
    writeFileSync(join(s.world, 'logs/latest.log'), 'keep\n');
    const before = await jobsOf('delete-many');
    if (!REAL) s.cluster.resetCounts();
    const r = await s.call('POST', `${S}/files/delete`, { paths });
    assert.equal(r.status, 200, r.text.slice(0, 500));
    // One undo-trash record keeps the whole batch (test/files-trash.e2e.test.ts restores and purges).
    assert.match(r.body.trash_id, /^[0-9a-f]{16}$/, r.text.slice(0, 500));
    assert.deepEqual(r.body, { done: paths, failed: [], trash_id: r.body.trash_id });
    // Every deleted log is gone, and what the call did not name (latest.log, the demo world's own logs) stays.
    const left = readdirSync(join(s.world, 'logs'));
    assert.deepEqual(
      left.filter((n) => paths.includes(`logs/${n}`)),
      [],
    );
    assert.ok(left.includes('latest.log'), left.join(', '));
    const made = (await jobsOf('delete-many')).filter((n) => !before.includes(n));
    assert.equal(made.length, 1, `one Job: ${made.join(', ')}`);
    if (!REAL) assert.equal(s.cluster.counts(FUNCTION_USER)['create jobs'], 1);
  });

  test('a batch with one escaping path changes nothing: 400 bad_path with its path', async () => {
    mkdirSync(join(s.world, 'old'), { recursive: true });
    writeFileSync(join(s.world, 'old/a.txt'), 'a');
    writeFileSync(join(s.world, 'old/b.txt'), 'b');
    const r = await s.call('POST', `${S}/files/delete`, { paths: ['old/a.txt', '../../etc/passwd', 'old/b.txt'] });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error.code, 'bad_path');
    assert.equal(r.body.error.path, '../../etc/passwd');
    assert.equal(existsSync(join(s.world, 'old/a.txt')), true);
    assert.equal(existsSync(join(s.world, 'old/b.txt')), true);
    const missing = await s.call('POST', `${S}/files/delete`, { paths: ['old/a.txt', 'old/nope.txt'] });
    assert.equal(missing.status, 404, missing.text);
    assert.equal(missing.body.error.path, 'old/nope.txt');
    assert.equal(existsSync(join(s.world, 'old/a.txt')), true);
  });

  test('two moves onto one name are 409 and nothing moves; a good batch moves them all', async () => {
    mkdirSync(join(s.world, 'mv/into'), { recursive: true });
    writeFileSync(join(s.world, 'mv/x.txt'), 'x');
    writeFileSync(join(s.world, 'mv/y.txt'), 'y');
    const clash = await s.call('POST', `${S}/files/move`, {
      moves: [
        { from: 'mv/x.txt', to: 'mv/z.txt' },
        { from: 'mv/y.txt', to: 'mv/z.txt' },
      ],
    });
    assert.equal(clash.status, 409, clash.text);
    assert.equal(clash.body.error.code, 'batch_conflict');
    assert.equal(clash.body.error.path, 'mv/z.txt');
    assert.equal(existsSync(join(s.world, 'mv/x.txt')), true);
    assert.equal(existsSync(join(s.world, 'mv/z.txt')), false);
    const onto = await s.call('POST', `${S}/files/move`, { moves: [{ from: 'mv/x.txt', to: 'mv/y.txt' }] });
    assert.equal(onto.status, 409, onto.text);
    assert.equal(onto.body.error.code, 'file_exists');
    const ok = await s.call('POST', `${S}/files/move`, {
      moves: [
        { from: 'mv/x.txt', to: 'mv/into/x.txt' },
        { from: 'mv/y.txt', to: 'mv/y2.txt' },
      ],
    });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body, { done: ['mv/x.txt', 'mv/y.txt'], failed: [] });
    assert.equal(existsSync(join(s.world, 'mv/into/x.txt')), true);
    assert.equal(existsSync(join(s.world, 'mv/y2.txt')), true);
  });

  test('chmod 755 sets the mode on disk; a link is refused and nothing changes', async () => {
    mkdirSync(join(s.world, 'bin'), { recursive: true });
    writeFileSync(join(s.world, 'bin/start.sh'), '#!/bin/sh\n', { mode: 0o644 });
    writeFileSync(join(s.world, 'bin/env.sh'), 'x=1\n', { mode: 0o644 });
    symlinkSync('start.sh', join(s.world, 'bin/link.sh'));
    const mode = (p: string) => (lstatSync(join(s.world, p)).mode & 0o777).toString(8);
    const r = await s.call('POST', `${S}/files/chmod`, { files: [{ path: 'bin/start.sh', mode: '755' }] });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { done: ['bin/start.sh'], failed: [] });
    assert.equal(mode('bin/start.sh'), '755');
    const link = await s.call('POST', `${S}/files/chmod`, {
      files: [
        { path: 'bin/env.sh', mode: '600' },
        { path: 'bin/link.sh', mode: '700' },
      ],
    });
    assert.equal(link.status, 400, link.text);
    assert.equal(link.body.error.code, 'bad_path');
    assert.equal(link.body.error.path, 'bin/link.sh');
    assert.equal(mode('bin/env.sh'), '644');
    const setuid = await s.call('POST', `${S}/files/chmod`, { files: [{ path: 'bin/start.sh', mode: '4755' }] });
    assert.equal(setuid.status, 400, setuid.text);
    assert.equal(setuid.body.error.code, 'bad_request');
  });
});
