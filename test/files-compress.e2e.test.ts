/**
 * Packing a selection end to end with the real Job program: HTTP → files-compress → client-node →
 * the cluster → a background Job → the archive in the selection's folder, read back by the Debian
 * tools (`tar --zstd`, `tar -z`) and by our own extraction; a taken name and a selection across
 * folders are refused, changing nothing.
 */

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { waitOp } from './support/ops.ts';
import { type Stack, startStack } from './support/stack.ts';

/** Every name, mode, size and content under `dir` (no links here), as one hash. */
function treeHash(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = lstatSync(p);
      h.update(`${relative(dir, p)}\0${st.mode & 0o7777}\0${st.isDirectory()}\0`);
      if (st.isDirectory()) walk(p);
      else h.update(readFileSync(p)).update(`\0${st.size}\0`);
    }
  };
  walk(dir);
  return h.digest('hex');
}

const hasZstd = spawnSync('zstd', ['--version'], { stdio: 'ignore' }).status === 0;
const URL = '/api/v1/servers/survival/files/compress';

describe('files/compress with the real Job program', () => {
  let s: Stack;
  let out: string;
  before(async () => {
    s = await startStack();
    out = mkdtempSync(join(tmpdir(), 'felis-compress-e2e-'));
    // Three folders and a file in one folder, with a link that must be left out.
    const sel = join(s.world, 'picks');
    for (const d of ['alpha/deep', 'beta', 'gamma']) mkdirSync(join(sel, d), { recursive: true });
    writeFileSync(join(sel, 'alpha/deep/a.bin'), Buffer.alloc(300_000, 5));
    writeFileSync(join(sel, 'alpha/ü-ñame.txt'), 'unicode\n');
    writeFileSync(join(sel, 'beta/b.yml'), 'b: 2\n', { mode: 0o600 });
    writeFileSync(join(sel, 'gamma/run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    writeFileSync(join(sel, 'notes.txt'), 'notes\n');
    writeFileSync(join(sel, 'left-out.txt'), 'not chosen\n');
    symlinkSync('../../server.properties', join(sel, 'beta/link'));
  });
  after(async () => {
    await s?.close();
    rmSync(out, { recursive: true, force: true });
  });

  test('three folders and a file as tar.zst under the default name: tar --zstd unpacks the same trees, links left out', { skip: hasZstd ? false : 'zstd is not installed' }, async () => {
    const r = await s.call('POST', URL, { paths: ['picks/alpha', 'picks/beta', 'picks/gamma', 'picks/notes.txt'], format: 'tar.zst' });
    assert.equal(r.status, 202, r.text);
    assert.deepEqual([r.body.op.op, r.body.op.path, r.body.op.state], ['compress', 'picks', 'running']);
    const op = await waitOp(s, r.body.op.id);
    assert.equal(op.state, 'succeeded', JSON.stringify(op));
    assert.match(op.to ?? '', /^picks\/archive-\d{4}-\d\d-\d\dT\d{6}\.tar\.zst$/);
    assert.equal(op.files, 5);
    assert.equal(op.skipped, 1, 'the link');
    assert.ok(op.total > 300_000 && op.done === op.total, JSON.stringify(op));
    const x = join(out, 'zst');
    mkdirSync(x);
    execFileSync('tar', ['--zstd', '-xf', join(s.world, op.to!), '-C', x]);
    assert.deepEqual(readdirSync(x).sort(), ['alpha', 'beta', 'gamma', 'notes.txt']);
    for (const d of ['alpha', 'gamma']) assert.equal(treeHash(join(x, d)), treeHash(join(s.world, 'picks', d)), d);
    assert.deepEqual(readdirSync(join(x, 'beta')), ['b.yml']);
    assert.equal(lstatSync(join(x, 'beta/b.yml')).mode & 0o777, 0o600);
    assert.equal(readFileSync(join(x, 'notes.txt'), 'utf8'), 'notes\n');
    assert.equal(readdirSync(join(s.world, 'picks')).filter((n) => n.startsWith('.felis')).length, 0, 'no working file left');
  });

  test('a zip of the selection extracts through files/unzip into the same trees', async () => {
    const r = await s.call('POST', URL, { paths: ['picks/alpha', 'picks/gamma'], format: 'zip', name: 'two.zip' });
    assert.equal(r.status, 202, r.text);
    const op = await waitOp(s, r.body.op.id);
    assert.equal(op.state, 'succeeded', JSON.stringify(op));
    assert.equal(op.to, 'picks/two.zip');
    assert.equal((await s.call('POST', '/api/v1/servers/survival/files/mkdir?path=back')).status, 200);
    const u = await s.call('POST', `/api/v1/servers/survival/files/unzip?path=${encodeURIComponent('picks/two.zip')}`, { overwrite: false, to: 'back' });
    assert.equal(u.status, 202, u.text);
    const ex = await waitOp(s, u.body.op.id);
    assert.equal(ex.state, 'succeeded', JSON.stringify(ex));
    for (const d of ['alpha', 'gamma']) assert.equal(treeHash(join(s.world, 'back', d)), treeHash(join(s.world, 'picks', d)), d);
  });

  test('a taken name ends the op failed with file_exists, and a selection across folders is 400 mixed_folders before any Job; nothing changes', async () => {
    writeFileSync(join(s.world, 'picks/taken.tar.gz'), 'taken');
    const before = treeHash(join(s.world, 'picks'));
    const r = await s.call('POST', URL, { paths: ['picks/alpha'], format: 'tar.gz', name: 'taken.tar.gz' });
    assert.equal(r.status, 202, r.text);
    const op = await waitOp(s, r.body.op.id);
    assert.equal(op.state, 'failed');
    assert.equal(op.error?.code, 'file_exists', JSON.stringify(op));
    assert.equal(readFileSync(join(s.world, 'picks/taken.tar.gz'), 'utf8'), 'taken');
    const jobs = (await s.call('GET', '/api/v1/servers/survival/files/ops')).body.ops.length;
    const m = await s.call('POST', URL, { paths: ['picks/alpha', 'world'], format: 'tar.gz' });
    assert.equal(m.status, 400, m.text);
    assert.equal(m.body.error.code, 'mixed_folders');
    assert.equal(m.body.error.path, 'world');
    assert.equal((await s.call('GET', '/api/v1/servers/survival/files/ops')).body.ops.length, jobs);
    assert.equal(treeHash(join(s.world, 'picks')), before);
    assert.equal(existsSync(join(s.world, 'archive.tar.gz')), false);
  });
});
