/**
 * Disk usage end to end, on the embedded cluster (`npm test`) and the real control plane
 * (`npm run test:cluster`): the figures are the tree's own (checked against an lstat walk the test
 * makes), a hard link counts once, a link out of the world is never followed, the withheld file is
 * counted as a file of 0 bytes, the undo trash only in `trash_bytes`; the Job mounts the world
 * read-only and is labelled a read, so no holder is seen while it runs; bad input is refused
 * before any Job. With a browse session serving the world, its Pod answers instead (no Job), the
 * same figures as the one-shot Job's, and a file added since is seen at once.
 */

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { RACY_MS } from '../../job/volume/folder-stamps.ts';
import { isWorkingName } from '../../lib/protocol/working-names.ts';
import { admin } from '../../test/support/servers.ts';
import { FUNCTION_USER, q, type Stack, startStack } from '../../test/support/stack.ts';
import { oneShotEditor, SURVIVAL, untilWarm } from '../../test/support/warm-cold.ts';
import { decodeUsage } from './result.ts';

const S = '/api/v1/servers/survival';

/** What the test itself finds under `dir`: allocated and apparent bytes, each inode once, links not followed, working names left out. */
function walk(dir: string, seen = new Set<string>(), top = true): { bytes: number; apparent: number; files: number } {
  const t = { bytes: 0, apparent: 0, files: 0 };
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (top && isWorkingName(e.name)) continue;
    const p = join(dir, e.name);
    const st = lstatSync(p);
    if (e.isDirectory()) {
      const sub = walk(p, seen, false);
      t.bytes += sub.bytes + st.blocks * 512;
      t.apparent += sub.apparent + st.size;
      t.files += sub.files;
      continue;
    }
    t.files++;
    const id = `${st.dev}:${st.ino}`;
    if (seen.has(id)) continue;
    seen.add(id);
    // The withheld file counts as 0 bytes: its size would tell something of its content.
    if (p.endsWith('config/paper-global.yml')) continue;
    t.bytes += st.blocks * 512;
    t.apparent += st.size;
  }
  return t;
}

describe('files/usage', () => {
  let s: Stack;
  let outside: string;
  before(async () => {
    s = await startStack();
    mkdirSync(join(s.world, 'world', 'region'), { recursive: true });
    writeFileSync(join(s.world, 'world', 'region', 'r.0.0.mca'), randomBytes(1 << 20));
    writeFileSync(join(s.world, 'world', 'region', 'r.0.1.mca'), randomBytes(256 << 10));
    // A second name of the big region file: counted once.
    linkSync(join(s.world, 'world', 'region', 'r.0.0.mca'), join(s.world, 'world', 'backup-r.0.0.mca'));
    // A link out of the world to something much bigger: never followed.
    outside = mkdtempSync(join(tmpdir(), 'felis-outside-'));
    writeFileSync(join(outside, 'huge.bin'), randomBytes(4 << 20));
    symlinkSync(outside, join(s.world, 'plugins', 'escape'));
    // Something in the undo trash.
    writeFileSync(join(s.world, 'old.log'), randomBytes(64 << 10));
    const d = await s.call('DELETE', `${S}/file?path=old.log`);
    assert.equal(d.status, 200, d.text);
  });
  after(async () => {
    await s?.close();
    if (outside) rmSync(outside, { recursive: true, force: true });
  });

  test("the root's figures are the tree's: each file once, no link followed, the trash apart", async () => {
    const r = await s.call('GET', `${S}/files/usage?depth=2&top=3`);
    assert.equal(r.status, 200, r.text);
    const mine = walk(s.world);
    const rootDir = lstatSync(s.world);
    assert.equal(r.body.path, '');
    assert.equal(r.body.apparent_bytes, mine.apparent + rootDir.size);
    assert.equal(r.body.bytes, mine.bytes + rootDir.blocks * 512);
    assert.equal(r.body.files, mine.files);
    assert.ok(r.body.bytes < 3 << 20, `the 4 MiB outside the world is not counted: ${r.body.bytes}`);
    // The big region file is the largest, once, under one of its names.
    assert.equal(r.body.largest.length, 3);
    assert.equal(r.body.largest[0].apparent_bytes, 1 << 20);
    assert.match(r.body.largest[0].path, /^world\/(region\/r\.0\.0\.mca|backup-r\.0\.0\.mca)$/);
    assert.equal(r.body.largest.filter((l: { apparent_bytes: number }) => l.apparent_bytes === 1 << 20).length, 1);
    // Children largest first, `world` first, its own children below it (depth 2).
    assert.equal(r.body.children[0].name, 'world');
    assert.ok(r.body.children[0].children.some((c: { name: string }) => c.name === 'region'));
    const names = r.body.children.map((c: { name: string }) => c.name);
    assert.ok(!names.some(isWorkingName), `no working name is shown: ${names.join(', ')}`);
    const config = r.body.children.find((c: { name: string }) => c.name === 'config');
    const secret = config.children.find((c: { name: string }) => c.name === 'paper-global.yml');
    assert.deepEqual([secret.bytes, secret.apparent_bytes, secret.files], [0, 0, 1], 'the withheld file shows 0 bytes');
    assert.ok(r.body.trash_bytes >= 64 << 10, `the deleted file is in the trash: ${r.body.trash_bytes}`);
    assert.ok(r.body.capacity_bytes > 0 && r.body.free_bytes >= r.body.trash_bytes, JSON.stringify([r.body.capacity_bytes, r.body.free_bytes]));
    assert.equal(r.body.truncated, false);
    assert.equal(r.body.world_state, 'stopped');
    assert.ok(Date.now() - Date.parse(r.body.scanned_at) < 120_000, r.body.scanned_at);
  });

  test('a folder, a file; the Job is a read: read-only mount, labelled files-mode read', async () => {
    const r = await s.call('GET', `${S}/files/usage?path=${q('world/region')}`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      r.body.children.map((c: { name: string; apparent_bytes: number }) => [c.name, c.apparent_bytes]),
      [
        ['r.0.0.mca', 1 << 20],
        ['r.0.1.mca', 256 << 10],
      ],
    );
    const f = await s.call('GET', `${S}/files/usage?path=${q('world/region/r.0.1.mca')}`);
    assert.equal(f.status, 200, f.text);
    assert.equal(f.body.apparent_bytes, 256 << 10);
    assert.equal(f.body.files, 1);
    const jobs = (await admin(s.cluster).batch.listNamespacedJob({ namespace: 'minecraft', labelSelector: 'felis.lolicon.best/server=survival' })).items;
    const usageJobs = jobs.filter((j) => j.spec?.template.spec?.containers[0]?.args?.includes('usage'));
    assert.ok(usageJobs.length >= 2, `the usage Jobs: ${usageJobs.length}`);
    for (const j of usageJobs) {
      assert.equal(j.metadata?.labels?.['felis.lolicon.best/files-mode'], 'read', 'neither Felis nor felis-world counts it as a holder');
      const mount = j.spec?.template.spec?.containers[0]?.volumeMounts?.find((m) => m.mountPath === '/data');
      assert.equal(mount?.readOnly, true);
    }
  });

  test('a missing path is 404 not_found; a bad depth or top is 400 before any Job; a link out is bad_path', async () => {
    const missing = await s.call('GET', `${S}/files/usage?path=nope`);
    assert.equal(missing.status, 404, missing.text);
    assert.equal(missing.body.error.code, 'not_found');
    for (const bad of ['depth=0', 'depth=4', 'top=101', 'top=x']) {
      const r = await s.call('GET', `${S}/files/usage?${bad}`);
      assert.equal(r.status, 400, `${bad}: ${r.text}`);
      assert.match(r.body.error.message, /\?(depth|top)=/);
    }
    const out = await s.call('GET', `${S}/files/usage?path=${q('plugins/escape')}`);
    assert.equal(out.status, 400, out.text);
    assert.equal(out.body.error.code, 'bad_path');
  });
});

describe('files/usage from a browse Pod', () => {
  let s: Stack;
  let outside: string;
  before(async () => {
    s = await startStack({ browse: {} });
    mkdirSync(join(s.world, 'world', 'region'), { recursive: true });
    writeFileSync(join(s.world, 'world', 'region', 'r.0.0.mca'), randomBytes(128 << 10));
    outside = mkdtempSync(join(tmpdir(), 'felis-outside-'));
    writeFileSync(join(outside, 'huge.bin'), randomBytes(1 << 20));
    symlinkSync(outside, join(s.world, 'plugins', 'escape'));
    seeded = Date.now();
  });
  after(async () => {
    await s?.close();
    if (outside) rmSync(outside, { recursive: true, force: true });
  });
  let seeded = 0;

  /** The usage of `path` as the browse Pod answers it: no Job created for it. */
  async function warmUsage(path: string) {
    s.cluster.resetCounts();
    const r = await s.call('GET', `${S}/files/usage?path=${q(path)}&depth=2`);
    assert.equal(r.status, 200, r.text);
    assert.equal(s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0, 0, 'answered by the browse Pod, no Job');
    return r;
  }

  test("a session serving the world answers usage (no Job), equal to the one-shot Job's; a file added below is seen at once", async () => {
    // Usage never starts a session: a listing does, and usage finds it serving.
    await untilWarm(s, `${S}/files?path=world`, 'a listing answered by the browse Pod');
    // Folders changed less than RACY_MS before a walk are not trusted to show a change: let them age.
    await new Promise((r) => setTimeout(r, Math.max(0, seeded + RACY_MS + 200 - Date.now())));
    const warm = await warmUsage('world');
    const cold = decodeUsage(await oneShotEditor(s).run(SURVIVAL, 'usage', 'world', { depth: 2 }));
    for (const k of ['bytes', 'apparent_bytes', 'files', 'dirs', 'children', 'largest', 'truncated'] as const) assert.deepEqual(warm.body[k], cold[k], k);
    assert.equal(warm.body.world_state, 'stopped');
    // Asked again at once: the kept answer, its scan time the first walk's (the volume's free
    // space is read anew: other tests share the disk).
    const { free_bytes: _f1, ...kept } = (await warmUsage('world')).body;
    const { free_bytes: _f2, ...first } = warm.body;
    assert.deepEqual(kept, first);
    writeFileSync(join(s.world, 'world', 'region', 'r.0.1.mca'), randomBytes(64 << 10));
    const after1 = await warmUsage('world');
    assert.equal(after1.body.files, warm.body.files + 1);
    assert.equal(after1.body.apparent_bytes, warm.body.apparent_bytes + (64 << 10));
    assert.equal(after1.body.largest[1].path, 'world/region/r.0.1.mca');
    assert.notEqual(after1.body.scanned_at, warm.body.scanned_at, 'walked again');
  });

  test('through the Pod a link out of the world is bad_path and a missing path not_found, with no Job', async () => {
    await untilWarm(s, `${S}/files?path=world`, 'a listing answered by the browse Pod');
    s.cluster.resetCounts();
    const out = await s.call('GET', `${S}/files/usage?path=${q('plugins/escape')}`);
    assert.equal(out.status, 400, out.text);
    assert.equal(out.body.error.code, 'bad_path');
    const missing = await s.call('GET', `${S}/files/usage?path=nope`);
    assert.equal(missing.status, 404, missing.text);
    assert.equal(s.cluster.counts(FUNCTION_USER)['create jobs'] ?? 0, 0);
  });
});
