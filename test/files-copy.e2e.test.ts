/**
 * Copy end to end: HTTP → files-copy → client-node → the cluster → the real Job program over a real
 * directory, and `files/ops` reading a background copy back. The sync limit is lowered
 * (FELIS_COPY_SYNC_MAX_BYTES, through the editor settings) so a "big" file is a few KiB.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import { LABEL_FILES_BROWSE } from '../lib/job-spec/render.ts';
import { admin } from './support/servers.ts';
import { FUNCTION_USER, q, type Stack, startStack, TOKEN, tierMs, until as waitUntil } from './support/stack.ts';
import { untilWarm } from './support/warm-cold.ts';

const SYNC_MAX = 4096;
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

type Op = { id: string; op: string; path: string; state: string; done: number; total: number; files?: number; bytes?: number; to?: string; skipped?: number; error?: { code: string } };

/** Every regular file under `dir` with its SHA-256, by relative path. */
function hashes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out[relative(dir, p)] = sha(readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

describe('files/copy through the cluster', () => {
  let s: Stack;
  let core: CoreV1Api;
  let batch: BatchV1Api;
  before(async () => {
    // The job key is on (browse sessions): a copy asks a session that already serves for the kind.
    // Edit sessions off: these count the one-shot Jobs a copy costs (a session's copy: edit-sessions.e2e).
    s = await startStack({ browse: { edits: false }, editor: { copySyncMaxBytes: SYNC_MAX } });
    core = s.cluster.kubeConfig(s.cluster.adminToken).makeApiClient(CoreV1Api);
    batch = s.cluster.kubeConfig(s.cluster.adminToken).makeApiClient(BatchV1Api);
  });
  after(async () => {
    await s?.close();
  });

  async function until(id: string): Promise<Op> {
    const end = Date.now() + tierMs(20_000);
    for (;;) {
      const r = await s.call('GET', '/api/v1/servers/survival/files/ops');
      assert.equal(r.status, 200, r.text);
      const op = (r.body.ops as Op[]).find((o) => o.id === id);
      if (op && op.state !== 'running') return op;
      if (Date.now() > end) throw new Error(`op ${id} did not end; last seen ${JSON.stringify(op)}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  /** Until nothing holds the world (a background copy's Job holds it until it ends). */
  async function settled(): Promise<void> {
    const end = Date.now() + tierMs(20_000);
    while ((await s.call('GET', '/api/v1/servers/survival/holder')).body.held !== false) {
      if (Date.now() > end) throw new Error('the world is still held');
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  test('plugins → `plugins copy` in the background, every file with the same hash; links inside kept', async () => {
    mkdirSync(join(s.world, 'plugins/Essentials/userdata'), { recursive: true });
    writeFileSync(join(s.world, 'plugins/Essentials/config.yml'), 'currency-symbol: $\n');
    writeFileSync(join(s.world, 'plugins/Essentials/userdata/steve.yml'), 'money: 100\n');
    writeFileSync(join(s.world, 'plugins/LuckPerms.jar'), Buffer.alloc(10_000, 7));
    symlinkSync('LuckPerms.jar', join(s.world, 'plugins/current.jar'));
    symlinkSync('/etc/passwd', join(s.world, 'plugins/outside'));
    const r = await s.call('POST', `/api/v1/servers/survival/files/copy?path=plugins`, {});
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.op.op, 'copy');
    assert.equal(r.body.op.path, 'plugins');
    const done = await until(r.body.op.id);
    assert.equal(done.state, 'succeeded', JSON.stringify(done));
    assert.equal(done.op, 'copy');
    assert.equal(done.to, 'plugins copy');
    assert.equal(done.skipped, 1);
    assert.equal(done.files, 4);
    assert.equal(done.total, done.done);
    assert.deepEqual(hashes(join(s.world, 'plugins copy')), hashes(join(s.world, 'plugins')));
    assert.equal(statSync(join(s.world, 'plugins copy/current.jar')).size, 10_000);
    const l = await s.call('GET', `/api/v1/servers/survival/files?path=`);
    assert.ok(l.body.entries.some((e: { name: string }) => e.name === 'plugins copy'));
    assert.ok(!l.body.entries.some((e: { name: string }) => e.name.startsWith('.felis-')), 'no working name left');
  });

  test('a small file: 200 at once with the sha256 of the copy; again: `<name> copy 2`', async () => {
    await settled();
    const r = await s.call('POST', `/api/v1/servers/survival/files/copy?path=eula.txt`, {});
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { path: 'eula.txt', to: 'eula copy.txt', status: 'copied', sha256: sha('eula=true\n') });
    assert.equal(readFileSync(join(s.world, 'eula copy.txt'), 'utf8'), 'eula=true\n');
    const again = await s.call('POST', `/api/v1/servers/survival/files/copy?path=eula.txt`, {});
    assert.equal(again.body.to, 'eula copy 2.txt', again.text);
    const to = await s.call('POST', `/api/v1/servers/survival/files/copy?path=eula.txt`, { to: 'plugins/eula.bak' });
    assert.equal(to.status, 200, to.text);
    assert.equal(to.body.to, 'plugins/eula.bak');
  });

  test('a file over the sync limit: 202, and files/ops shows the copy succeeded', async () => {
    await settled();
    const big = Buffer.alloc(SYNC_MAX + 1, 1);
    writeFileSync(join(s.world, 'world/big.dat'), big);
    const r = await s.call('POST', `/api/v1/servers/survival/files/copy?path=${q('world/big.dat')}`, { to: 'world/big-2.dat' });
    assert.equal(r.status, 202, r.text);
    const done = await until(r.body.op.id);
    assert.equal(done.state, 'succeeded', JSON.stringify(done));
    assert.equal(done.op, 'copy');
    assert.equal(done.to, 'world/big-2.dat');
    assert.equal(done.bytes, SYNC_MAX + 1);
    assert.equal(sha(readFileSync(join(s.world, 'world/big-2.dat'))), sha(big));
  });

  test('refusals: an existing to is 409 file_exists (file or folder), a missing source 404, the root and escapes 400', async () => {
    await settled();
    const cases: Array<[string, unknown, number, string]> = [
      ['eula.txt', { to: 'server.properties' }, 409, 'file_exists'],
      ['plugins', { to: 'config' }, 409, 'file_exists'],
      ['nope.txt', {}, 404, 'not_found'],
      ['.', {}, 400, 'bad_path'],
      ['eula.txt', { to: '../eula.txt' }, 400, 'bad_path'],
      ['config/paper-global.yml', { to: 'leak.yml' }, 400, 'bad_path'],
    ];
    for (const [path, body, status, code] of cases) {
      const r = await s.call('POST', `/api/v1/servers/survival/files/copy?path=${q(path)}`, body);
      assert.equal(r.status, status, `${path} ${JSON.stringify(body)}: ${r.text}`);
      assert.equal(r.body.error.code, code, r.text);
    }
  });

  test('a copy event delivered twice: a folder copied once, the same op answered again; a small file answered again from its sync Job', async () => {
    await settled();
    const deliver = (id: string, path: string) =>
      fetch(`${s.url}/`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          'ce-specversion': '1.0',
          'ce-id': id,
          'ce-source': '/tests/copy',
          'ce-type': 'dev.felis.files.copy',
        },
        body: JSON.stringify({ server: 'survival', path, body: {} }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { op: Op; to?: string; sha256?: string } }));
    const first = await deliver('copy-once-1', 'config');
    assert.equal(first.status, 202, JSON.stringify(first.body));
    assert.equal((await until(first.body.op.id)).state, 'succeeded');
    const again = await deliver('copy-once-1', 'config');
    assert.equal(again.status, 202, JSON.stringify(again.body));
    assert.equal(again.body.op.id, first.body.op.id);
    const jobs = await admin(s.cluster).batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: 'felis.lolicon.best/files-mode=copy,felis.lolicon.best/files-async=true' });
    assert.equal(jobs.items.filter((j) => j.metadata?.annotations?.['felis.lolicon.best/files-path'] === 'config').length, 1);
    assert.deepEqual(
      readdirSync(s.world).filter((n) => n.startsWith('config copy')),
      ['config copy'],
    );
    await settled();
    const small = await deliver('copy-once-2', 'server.properties');
    assert.equal(small.status, 200, JSON.stringify(small.body));
    const smallAgain = await deliver('copy-once-2', 'server.properties');
    assert.deepEqual(smallAgain.body, small.body);
    assert.deepEqual(
      readdirSync(s.world).filter((n) => n.startsWith('server copy')),
      ['server copy.properties'],
    );
    assert.doesNotMatch(readFileSync(join(s.world, 'server copy.properties'), 'utf8'), /hunter2/);
  });

  test('Jobs per folder copy: two with no browse session (the sync Job refuses, the background op copies), one with a session serving; a big file alike; a small file one either way', async () => {
    await settled();
    mkdirSync(join(s.world, 'kinds/inner'), { recursive: true });
    writeFileSync(join(s.world, 'kinds/inner/a.txt'), 'a\n');
    writeFileSync(join(s.world, 'kinds/big.dat'), Buffer.alloc(SYNC_MAX + 1, 2));
    const jobsFor = async (path: string, to: string | undefined, status: number) => {
      s.cluster.resetCounts();
      const r = await s.call('POST', `/api/v1/servers/survival/files/copy?path=${q(path)}`, to === undefined ? {} : { to });
      assert.equal(r.status, status, r.text);
      const created = s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0;
      if (status === 202) assert.equal((await until(r.body.op.id)).state, 'succeeded');
      await settled();
      return created;
    };
    // Cold (the session an earlier test's listing started is ended first): the copy never starts
    // a browse session for itself.
    const browsePods = () => core.listNamespacedPod({ namespace: 'minecraft', labelSelector: `${LABEL_FILES_BROWSE}=true` }).then((l) => l.items);
    // The browse Jobs go (a Pod deleted alone would be replaced by its Job).
    const browseJobs = await batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: `${LABEL_FILES_BROWSE}=true` });
    for (const j of browseJobs.items) await batch.deleteNamespacedJob({ namespace: 'minecraft', name: j.metadata!.name!, propagationPolicy: 'Background', gracePeriodSeconds: 0 });
    await waitUntil(
      async () => ((await browsePods()).every((p) => p.status?.phase !== 'Running' && p.status?.phase !== 'Pending') ? true : undefined),
      'the browse Pods to go',
      tierMs(15_000, 60_000),
    );
    // Two Jobs and no third: the copy started no browse session for itself.
    assert.equal(await jobsFor('kinds', undefined, 202), 2, 'cold: the refused sync Job, then the background op');
    // A panel browsing the folder has a session up; the same copy then costs only its background op.
    await untilWarm(s, '/api/v1/servers/survival/files?path=kinds', 'a browse session to serve');
    assert.equal(await jobsFor('kinds', undefined, 202), 1, 'warm: only the background op');
    assert.deepEqual(hashes(join(s.world, 'kinds copy 2')), hashes(join(s.world, 'kinds')));
    assert.equal(await jobsFor('kinds/big.dat', undefined, 202), 1, 'warm: a big file goes straight to the background too');
    assert.equal(await jobsFor('kinds/inner/a.txt', undefined, 200), 1, 'a small file is still copied at once by its one Job');
    assert.equal(readFileSync(join(s.world, 'kinds/inner/a copy.txt'), 'utf8'), 'a\n');
    // With a to, the sync Job judges the destination first, session or not.
    assert.equal(await jobsFor('kinds', 'kinds-to', 202), 2, 'with to: the sync Job, then the background op');
  });
});
