/**
 * Background ops end to end: HTTP → files-unzip / files-zip → client-node → the cluster → a Job →
 * the kubelet, and `GET .../files/ops` reading it back. The Job runs a scripted stand-in of the file
 * program (test/support/scripted-files-job.ts) so every outcome can be produced on demand: progress
 * while running, a result, an OOM kill, a deadline. The real archive engine is tested in
 * test/archives.e2e.test.ts.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { V1Container } from '@kubernetes/client-node';
import { renderFilesJob } from '../lib/job-spec/render.ts';
import { admin, createJob, createServer, RUNNING, STOPPED, setServer } from './support/servers.ts';
import { q, ROOT, type Stack, startStack, TOKEN, tierMs } from './support/stack.ts';

const SCRIPT = join(ROOT, 'test/support/scripted-files-job.ts');
/** The Pods of background file Jobs run the scripted program with these arguments. */
const scripted = (args: string[]) => (c: V1Container) => (c.name === 'files' && c.args?.includes('--op') ? { command: [process.execPath, SCRIPT, ...args] } : undefined);

type Op = { id: string; op: string; path: string; state: string; done: number; total: number; finished_at?: string; files?: number; bytes?: number; error?: { code: string; message: string } };

async function ops(s: Stack): Promise<Op[]> {
  const r = await s.call('GET', '/api/v1/servers/survival/files/ops');
  assert.equal(r.status, 200, r.text);
  return r.body.ops as Op[];
}

/** Polls the listing until `ok` holds for the op `id`, bounded. */
async function until(s: Stack, id: string, ok: (o: Op) => boolean, ms = tierMs(15_000)): Promise<Op> {
  const end = Date.now() + ms;
  let last: Op | undefined;
  for (;;) {
    last = (await ops(s)).find((o) => o.id === id);
    if (last && ok(last)) return last;
    if (Date.now() > end) throw new Error(`op ${id} never reached the state wanted; last seen ${JSON.stringify(last)}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** Until no background Job of the server holds the world any more (the next op can start). */
/** Waits until nothing holds survival's world: the listing shows only the newest async ops, but an
 * older or a sync Job of an earlier test may still be finishing (slower on a real control plane). */
async function settled(s: Stack): Promise<void> {
  const end = Date.now() + tierMs(15_000);
  while ((await ops(s)).some((o) => o.state === 'running') || (await s.call('GET', '/api/v1/servers/survival/holder')).body.held !== false) {
    if (Date.now() > end) throw new Error('a background op is still running, or the world is still held');
    await new Promise((res) => setTimeout(res, 100));
  }
}

describe('background ops through the cluster', () => {
  let s: Stack;
  let tmp: string;
  before(async () => {
    s = await startStack();
    tmp = mkdtempSync(join(tmpdir(), 'felis-bg-'));
  });
  after(async () => {
    s.program = undefined;
    s.cluster.faults.clear();
    await s?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  test('progress shows while an op runs; the world is held meanwhile; then it succeeds with files and bytes', async () => {
    const release = join(tmp, 'release-1');
    s.program = scripted(['--progress', '10/100', '--progress', '40/100', '--hold', release, '--progress', '100/100', '--result', '{"files":3,"bytes":1234}']);
    const r = await s.call('POST', `/api/v1/servers/survival/files/unzip?path=${q('maps/pack.zip')}`, { overwrite: true });
    assert.equal(r.status, 202, r.text);
    const op = r.body.op as Op;
    assert.match(op.id, /^[0-9a-f]{16}$/);
    assert.deepEqual({ ...op, id: '', started_at: '' }, { id: '', op: 'unzip', path: 'maps/pack.zip', state: 'running', started_at: '', done: 0, total: 0 });

    const running = await until(s, op.id, (o) => o.done === 40);
    assert.deepEqual([running.state, running.total, running.finished_at, running.error], ['running', 100, undefined, undefined]);

    // The running op holds the world: a change waits for it in turn; one that may wait only a
    // second is refused, naming the holder. (A change that waits for it: files-join.e2e.test.ts.)
    const w = await s.call(
      'PUT',
      `/api/v1/servers/survival/file?path=${q('notes.txt')}`,
      { content: '', content_sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
      { prefer: 'wait=1' },
    );
    assert.equal(w.status, 409, w.text);
    assert.equal(w.body.error.code, 'maintenance_in_progress');
    assert.match(w.body.error.message, /behind an archive extraction \(unzip of maps\/pack\.zip\)/);

    writeFileSync(release, '');
    const done = await until(s, op.id, (o) => o.state !== 'running');
    assert.equal(done.state, 'succeeded', JSON.stringify(done));
    assert.deepEqual([done.done, done.total, done.files, done.bytes, done.error], [100, 100, 3, 1234, undefined]);
    assert.match(done.finished_at!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  test('a refusal printed by the Job shows as failed with its mapped code and details', async () => {
    await settled(s);
    s.program = scripted(['--result', '{"code":"exists","error":"2 files already exist","conflicts":["a.txt","b.txt"],"conflict_count":2}']);
    const r = await s.call('POST', `/api/v1/servers/survival/files/zip?path=world`, { name: 'world.zip' });
    assert.equal(r.status, 202, r.text);
    const done = await until(s, r.body.op.id, (o) => o.state !== 'running');
    assert.equal(done.state, 'failed');
    assert.equal(done.op, 'zip');
    assert.deepEqual(done.error, { code: 'file_exists', message: '2 files already exist', conflicts: ['a.txt', 'b.txt'], conflict_count: 2 });
  });

  test('an op OOM-killed in its files container shows failed, OOMKilled, with the split-the-archive message', async () => {
    await settled(s);
    s.program = scripted(['--progress', '5/50', '--hold', join(tmp, 'never')]);
    // Late enough for the program to have started and printed its progress.
    s.cluster.faults.pod('felis.lolicon.best/files-mode=unzip,felis.lolicon.best/files-async=true', { oomKillAfterMs: 2500 });
    try {
      const r = await s.call('POST', `/api/v1/servers/survival/files/unzip?path=${q('huge.zip')}`, { overwrite: false });
      assert.equal(r.status, 202, r.text);
      const done = await until(s, r.body.op.id, (o) => o.state !== 'running');
      assert.equal(done.state, 'failed');
      assert.deepEqual(done.error, {
        code: 'job_failed',
        message: 'the file operation ran out of memory (OOMKilled); an archive of this many files has to be split into smaller ones',
      });
      assert.deepEqual([done.done, done.total], [5, 50], 'the progress before the kill is kept');
    } finally {
      s.cluster.faults.clear();
    }
  });

  test('the listing is this server’s ten newest background ops: no older one, no sync Job, no other server', async () => {
    await settled(s);
    await createServer(s.cluster, 'creative', STOPPED);
    const job = (server: string, id: string, async: boolean) =>
      renderFilesJob({
        namespace: 'minecraft',
        server,
        opId: id,
        op: async ? 'unzip' : 'mkdir',
        path: `${id}.zip`,
        worldPvc: `world-${server}-0`,
        image: 'felis-test/scripted',
        command: ['sh', '-c', 'echo "FELIS-FILES-RESULT: {\\"files\\":1}"'],
        serviceAccount: 'default',
        worldsRoot: '/data',
        deadlineSeconds: 60,
        ttlSeconds: 600,
        async,
      });
    // Kubernetes creation times have whole seconds: the oldest is a second older than the rest.
    s.program = undefined;
    await createJob(s.cluster, job('survival', 'aaaaaaaaaaaaaa00', true));
    await new Promise((res) => setTimeout(res, 1100));
    const newer = Array.from({ length: 10 }, (_, i) => `bbbbbbbbbbbbbb${String(i).padStart(2, '0')}`);
    for (const id of newer) await createJob(s.cluster, job('survival', id, true));
    await new Promise((res) => setTimeout(res, 1100));
    await createJob(s.cluster, job('survival', 'cccccccccccccc00', false));
    await createJob(s.cluster, job('creative', 'dddddddddddddd00', true));

    const listed = await ops(s);
    assert.deepEqual(listed.map((o) => o.id).sort(), newer);
    const done = await until(s, newer[0]!, (o) => o.state !== 'running');
    assert.deepEqual([done.state, done.files], ['succeeded', 1]);
    const creative = await s.call('GET', '/api/v1/servers/creative/files/ops');
    assert.deepEqual(
      creative.body.ops.map((o: Op) => o.id),
      ['dddddddddddddd00'],
    );
  });

  test('a redelivered unzip event answers the same op and starts no second Job', async () => {
    await settled(s);
    const release = join(tmp, 'release-event');
    s.program = scripted(['--hold', release, '--result', '{"files":1,"bytes":1}']);
    const deliver = () =>
      fetch(`${s.url}/`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          'ce-specversion': '1.0',
          'ce-id': 'unzip-once-1',
          'ce-source': '/tests/background',
          'ce-type': 'dev.felis.files.unzip',
        },
        body: JSON.stringify({ server: 'survival', path: 'event.zip', body: { overwrite: false } }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { op: Op } }));
    const first = await deliver();
    assert.equal(first.status, 202, JSON.stringify(first.body));
    // The first op still runs and holds the world: the redelivery must not be refused as busy.
    const again = await deliver();
    assert.equal(again.status, 202, JSON.stringify(again.body));
    assert.deepEqual(again.body, first.body);
    writeFileSync(release, '');
    const after = await deliver();
    assert.deepEqual(after.body.op.id, first.body.op.id);
    const jobs = await admin(s.cluster).batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: 'felis.lolicon.best/files-mode=unzip' });
    assert.equal(jobs.items.filter((j) => j.metadata?.annotations?.['felis.lolicon.best/files-path'] === 'event.zip').length, 1);
    assert.equal((await until(s, first.body.op.id, (o) => o.state !== 'running')).state, 'succeeded');
  });

  test('an unknown server is 404; a running server can still list its ops', async () => {
    const none = await s.call('GET', '/api/v1/servers/nosuch/files/ops');
    assert.equal(none.status, 404);
    assert.equal(none.body.error.code, 'not_found');
    await setServer(s.cluster, 'survival', RUNNING);
    try {
      const refused = await s.call('POST', '/api/v1/servers/survival/files/zip?path=world', {});
      assert.equal(refused.status, 409, 'a change of a running server is refused');
      assert.equal(refused.body.error.code, 'not_stopped');
      const listed = await s.call('GET', '/api/v1/servers/survival/files/ops');
      assert.equal(listed.status, 200, listed.text);
      assert.ok(Array.isArray(listed.body.ops));
    } finally {
      await setServer(s.cluster, 'survival', STOPPED);
    }
  });
});

describe('a background op past its deadline', () => {
  let s: Stack;
  before(async () => {
    s = await startStack({ editor: { asyncDeadlineSeconds: 2 } });
  });
  after(async () => {
    s.program = undefined;
    await s?.close();
  });

  test('shows failed, DeadlineExceeded, outcome unknown: the op had run, so check the files rather than run it again', async () => {
    const hold = join(s.dataDir, 'never-released');
    s.program = scripted(['--progress', '7/70', '--hold', hold]);
    const r = await s.call('POST', `/api/v1/servers/survival/files/zip?path=plugins`, {});
    assert.equal(r.status, 202, r.text);
    const done = await until(s, r.body.op.id, (o) => o.state !== 'running', tierMs(20_000));
    assert.equal(done.state, 'failed');
    assert.deepEqual(done.error, {
      code: 'outcome_unknown',
      message: 'the file operation ran out of time (DeadlineExceeded) before it could report how it went; the outcome is unknown: check the files before running it again',
    });
    assert.ok(done.finished_at);
  });
});

describe("with Felis's rule (FELIS_JOIN_CHANGES=off): waiting for the world instead of a 409 (Prefer: wait)", () => {
  let s: Stack;
  before(async () => {
    s = await startStack({ joinChanges: false });
  });
  after(async () => {
    s.cluster.faults.clear();
    await s?.close();
  });

  const write = (path: string, text: string, headers: Record<string, string> = {}) => {
    const b = Buffer.from(text);
    return s.call('PUT', `/api/v1/servers/survival/file?path=${q(path)}`, { content: b.toString('base64'), content_sha256: createHash('sha256').update(b).digest('hex') }, headers);
  };

  test('two concurrent writes to one server: the second, with Prefer: wait=10, waits for the first and both succeed', async () => {
    // The first write's Pod is slow to start, so it holds the world for a while.
    s.cluster.faults.pod('felis.lolicon.best/files-mode=write', { creatingMs: tierMs(1500) });
    const first = write('first.txt', 'one\n');
    const end = Date.now() + tierMs(10_000);
    while ((await s.call('GET', '/api/v1/servers/survival/holder')).body.held !== true) {
      if (Date.now() > end) throw new Error('the first write never held the world');
      await new Promise((r) => setTimeout(r, 20));
    }
    const refused = await write('second.txt', 'two\n');
    assert.equal(refused.status, 409, 'without the preference: refused as before');
    assert.equal(refused.body.error.code, 'maintenance_in_progress');
    const second = write('second.txt', 'two\n', { prefer: 'wait=10' });
    const [a, b] = await Promise.all([first, second]);
    assert.equal(a.status, 200, a.text);
    assert.equal(b.status, 200, b.text);
    assert.equal(b.headers.get('preference-applied'), 'wait=10');
    assert.equal(readFileSync(join(s.dataDir, 'worlds', 'survival', 'second.txt'), 'utf8'), 'two\n');
    assert.equal(readFileSync(join(s.dataDir, 'worlds', 'survival', 'first.txt'), 'utf8'), 'one\n');
  });
});
