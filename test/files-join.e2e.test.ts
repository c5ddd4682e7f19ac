/**
 * Changes from many callers join, on both tiers: eight writes at once to eight files all land (200),
 * one at a time in the world's line; many uploads at once (a folder of fifty files, eight at a time)
 * all land; a holder that is not a felis-world change (a backup) is refused at once with a
 * Retry-After; and a start waits for the running change, lets no new one join meanwhile, then starts.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { forgeZip } from '../job/archive/forge.test-kit.ts';
import { createJob, getServer, holderJob, STOPPED, setServer } from './support/servers.ts';
import { q, type Stack, startStack, TOKEN, tierMs } from './support/stack.ts';

const S = '/api/v1/servers/survival';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const LOCK = 'felis.lolicon.best/maintenance';
const QUEUE = 'felis.lolicon.best/files-queue';

describe('changes that join', () => {
  let s: Stack;
  before(async () => {
    s = await startStack({ browse: {}, uploads: { idleSeconds: 20, lifetimeSeconds: 600 } });
  });
  after(async () => {
    s?.cluster.faults.clear();
    await s?.close();
  });

  const write = (path: string, text: string, headers: Record<string, string> = {}) => {
    const b = Buffer.from(text);
    return s.call('PUT', `${S}/file?path=${q(path)}`, { content: b.toString('base64'), content_sha256: sha(b) }, headers);
  };

  /** Until nothing of ours holds the world (the last change gave it back). */
  async function free(): Promise<void> {
    const end = Date.now() + tierMs(10_000);
    for (;;) {
      const a = (await getServer(s.cluster, 'survival')).metadata.annotations ?? {};
      if (a[LOCK] === undefined && a[QUEUE] === undefined) return;
      if (Date.now() > end) throw new Error(`the world is still held: ${JSON.stringify(a)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  test('eight writes at once to eight files: all 200, every file written, the world given back', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => write(`joined-${i}.txt`, `writer ${i}\n`)));
    for (const [i, a] of answers.entries()) assert.equal(a.status, 200, `writer ${i}: ${a.text}`);
    for (let i = 0; i < 8; i++) assert.equal(readFileSync(join(s.world, `joined-${i}.txt`), 'utf8'), `writer ${i}\n`);
    await free();
  });

  test('a folder of fifty files uploaded eight at a time: all 200', async () => {
    const files = Array.from({ length: 50 }, (_, i) => ({ path: `upload-folder/sub-${i % 5}/file-${i}.txt`, data: Buffer.from(`file ${i}\n`.repeat(i + 1)) }));
    const statuses: number[] = [];
    for (let k = 0; k < files.length; k += 8) {
      const batch = files.slice(k, k + 8).map(async (f) => {
        const res = await fetch(`${s.url}${S}/files/upload?path=${q(f.path)}&parents=true`, {
          method: 'PUT',
          body: f.data,
          headers: { authorization: `Bearer ${TOKEN}`, 'content-digest': `sha-256=:${createHash('sha256').update(f.data).digest('base64')}:` },
        });
        const text = await res.text();
        assert.equal(res.status, 200, `${f.path}: ${text}`);
        statuses.push(res.status);
      });
      await Promise.all(batch);
    }
    assert.equal(statuses.length, 50);
    for (const f of files) assert.deepEqual(readFileSync(join(s.world, f.path)), f.data);
    await free();
  });

  test('a backup holding the world: a change is refused at once, 409 with a Retry-After', async () => {
    await createJob(s.cluster, holderJob('mc-backup-join', 'survival', 'felis-backup', ['sh', '-c', 'sleep 3']));
    try {
      const t0 = Date.now();
      const w = await write('during-backup.txt', 'x\n');
      assert.equal(w.status, 409, w.text);
      assert.equal(w.body.error.code, 'maintenance_in_progress');
      assert.match(w.body.error.message, /backup/);
      assert.match(w.headers.get('retry-after') ?? '', /^\d+$/);
      assert.ok(Date.now() - t0 < tierMs(2500), 'not waited out: a backup is not a felis-world change');
    } finally {
      // The backup ends by itself; later tests need the world free.
      const end = Date.now() + tierMs(15_000);
      while ((await s.call('GET', `${S}/holder`)).body.held === true && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    }
  });

  test('a start waits for the running change, stops new changes from joining, then starts', async () => {
    // The running change: an extraction whose Pod is slow to start holds the world by its Job.
    writeFileSync(join(s.world, 'start-wait.zip'), forgeZip([{ name: 'start-wait/a.txt', data: 'a\n' }]));
    s.cluster.faults.pod('felis.lolicon.best/files-mode=unzip', { creatingMs: tierMs(2500) });
    try {
      const u = await s.call('POST', `${S}/files/unzip?path=${q('start-wait.zip')}`, { overwrite: false });
      assert.equal(u.status, 202, u.text);
      const start = s.call('POST', `${S}/start`);
      // The start now drains the line: a change that comes meanwhile does not join.
      const drainEnd = Date.now() + tierMs(2000);
      let late;
      for (;;) {
        late = await write('after-start.txt', 'two\n', { prefer: 'wait=1' });
        if ((late.status === 409 && /a start of this server is waiting/.test(late.body.error.message)) || Date.now() > drainEnd) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(late.status, 409, late.text);
      assert.equal(late.body.error.code, 'maintenance_in_progress');
      assert.match(late.body.error.message, /a start of this server is waiting/);
      assert.match(late.headers.get('retry-after') ?? '', /^\d+$/);
      const st = await start;
      assert.equal(st.status, 202, st.text);
      assert.equal(st.body.desiredState, 'Running');
      // It started only once the extraction was done.
      const listed = await s.call('GET', `${S}/files/ops`);
      assert.equal(listed.body.ops.find((o: { id: string }) => o.id === u.body.op.id)?.state, 'succeeded', listed.text);
      assert.equal(readFileSync(join(s.world, 'start-wait/a.txt'), 'utf8'), 'a\n');
      const a = (await getServer(s.cluster, 'survival')).metadata.annotations ?? {};
      assert.equal(a[LOCK], undefined);
      assert.equal(a[QUEUE], undefined);
    } finally {
      s.cluster.faults.clear();
      await setServer(s.cluster, 'survival', STOPPED);
    }
  });
});
