/**
 * Archives end to end with the real Job program: pack a folder of the world, extract it into
 * another folder, refuse a zip-slip archive leaving every byte as it was, and hold the world while
 * an extraction runs. These need the archive engine in the Job program; where it is not there yet
 * (the program refuses `--op unzip`), they are skipped with that reason, never silently passed.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { forge7z } from '../job/archive/7z.test-kit.ts';
import { type Codec, compress } from '../job/archive/codec.test-kit.ts';
import { forgeTar, forgeZip } from '../job/archive/forge.test-kit.ts';
import { forgeRar } from '../job/archive/rar.test-kit.ts';
import { waitOp } from './support/ops.ts';
import { q, ROOT, type Stack, startStack } from './support/stack.ts';

/** Why the archive tests cannot run here, or undefined when the Job program extracts archives. */
function engineMissing(): string | undefined {
  const program = join(ROOT, 'dist/felis.mjs');
  if (!existsSync(program)) return 'needs the archive engine: dist/felis.mjs is not built (npm run build)';
  const root = mkdtempSync(join(tmpdir(), 'felis-probe-'));
  try {
    const r = spawnSync(process.execPath, [program, 'files', '--op', 'unzip', '--path', 'probe.zip', '--worlds-root', root], { encoding: 'utf8', timeout: 15_000 });
    if (/not supported|not implemented/i.test(r.stderr)) return `needs the archive engine: the Job program says ${JSON.stringify(r.stderr.trim().split('\n')[0])}`;
    return undefined;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const SKIP = engineMissing();

/** Every name, type, mode, size, link target and content under `dir`, as one hash. */
function treeHash(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = lstatSync(p);
      h.update(`${relative(dir, p)}\0${st.mode}\0`);
      if (st.isSymbolicLink()) h.update(`link:${readlinkSync(p)}\0`);
      else if (st.isDirectory()) walk(p);
      else h.update(readFileSync(p)).update(`\0${st.size}\0`);
    }
  };
  walk(dir);
  return h.digest('hex');
}

describe('archives with the real Job program', { skip: SKIP }, () => {
  let s: Stack;
  before(async () => {
    s = await startStack();
  });
  after(async () => {
    s?.cluster.faults.clear();
    await s?.close();
  });

  test('pack world/ into a zip next to it, then extract it into another folder: the same tree', async () => {
    const z = await s.call('POST', `/api/v1/servers/survival/files/zip?path=${q('world')}`, {});
    assert.equal(z.status, 202, z.text);
    const packed = await waitOp(s, z.body.op.id);
    assert.equal(packed.state, 'succeeded', JSON.stringify(packed));
    const archive = join(s.world, 'world.zip');
    assert.ok(existsSync(archive), 'world.zip next to world/');
    assert.equal(packed.bytes, statSync(archive).size);
    assert.ok((packed.files ?? 0) >= 1);

    const m = await s.call('POST', `/api/v1/servers/survival/files/mkdir?path=${q('restored')}`);
    assert.equal(m.status, 200, m.text);
    const u = await s.call('POST', `/api/v1/servers/survival/files/unzip?path=${q('world.zip')}`, { overwrite: false, to: 'restored' });
    assert.equal(u.status, 202, u.text);
    const extracted = await waitOp(s, u.body.op.id);
    assert.equal(extracted.state, 'succeeded', JSON.stringify(extracted));
    // The archive holds world/ itself or its contents: either way the tree must be the same.
    const out = existsSync(join(s.world, 'restored/world')) ? join(s.world, 'restored/world') : join(s.world, 'restored');
    assert.equal(treeHash(out), treeHash(join(s.world, 'world')));
    assert.ok(extracted.total > 0 && extracted.done === extracted.total, JSON.stringify(extracted));
  });

  const formats: [ending: string, codec: Codec, single: boolean][] = [
    ['.tar.bz2', 'bzip2', false],
    ['.txz', 'xz', false],
    ['.tar.zst', 'zstd', false],
    ['.gz', 'gzip', true],
    ['.bz2', 'bzip2', true],
    ['.XZ', 'xz', true],
    ['.zst', 'zstd', true],
  ];
  for (const [ending, codec, single] of formats) {
    test(`a ${single ? 'single file' : 'tar'} in ${codec} (${ending}) extracts through the route: the same bytes`, async () => {
      const base = `fmt-${codec}-${single ? 'single' : 'tar'}`;
      const data = Buffer.from(`${base}\n`.repeat(20_000));
      const payload = single
        ? data
        : forgeTar([
            { name: `${base}/`, type: '5' },
            { name: `${base}/a.txt`, data },
            { name: `${base}/b/c.txt`, data: 'c\n' },
          ]);
      writeFileSync(join(s.world, `${base}${ending}`), await compress(codec, payload));
      const u = await s.call('POST', `/api/v1/servers/survival/files/unzip?path=${q(`${base}${ending}`)}`, { overwrite: false });
      assert.equal(u.status, 202, u.text);
      const op = await waitOp(s, u.body.op.id);
      assert.equal(op.state, 'succeeded', JSON.stringify(op));
      if (single) {
        assert.deepEqual(readFileSync(join(s.world, base)), data);
        assert.equal(op.files, 1);
      } else {
        assert.deepEqual(readFileSync(join(s.world, base, 'a.txt')), data);
        assert.equal(readFileSync(join(s.world, base, 'b/c.txt'), 'utf8'), 'c\n');
        assert.equal(op.files, 2);
      }
    });
  }

  for (const [ending, forge] of [
    ['7z', forge7z],
    ['rar', (e: Parameters<typeof forge7z>[0]) => forgeRar(e, 5)],
    ['rar4.rar', (e: Parameters<typeof forge7z>[0]) => forgeRar(e, 4)],
  ] as const) {
    test(`a .${ending} extracts through files/unzip with every file's bytes; a symlink in one is archive_symlink`, async () => {
      const files: Record<string, string> = { 'mods/a.jar': 'jar\n'.repeat(1000), 'config/x.yml': 'x: 1\n', 'empty.txt': '' };
      const name = `pack-${ending.replace(/\W/g, '')}.${ending.endsWith('rar') ? 'rar' : '7z'}`;
      writeFileSync(join(s.world, name), forge(Object.entries(files).map(([n, data]) => ({ name: n, data }))));
      const dest = `out-${ending.replace(/\W/g, '')}`;
      assert.equal((await s.call('POST', `/api/v1/servers/survival/files/mkdir?path=${q(dest)}`)).status, 200);
      const u = await s.call('POST', `/api/v1/servers/survival/files/unzip?path=${q(name)}`, { overwrite: false, to: dest });
      assert.equal(u.status, 202, u.text);
      const op = await waitOp(s, u.body.op.id);
      assert.equal(op.state, 'succeeded', JSON.stringify(op));
      const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
      for (const [n, data] of Object.entries(files)) assert.equal(sha(readFileSync(join(s.world, dest, n))), sha(data), n);

      const evil = `evil-${ending.replace(/\W/g, '')}.${ending.endsWith('rar') ? 'rar' : '7z'}`;
      writeFileSync(
        join(s.world, evil),
        forge([
          { name: 'ok.txt', data: 'ok' },
          { name: 'ln', type: '2', linkname: '../../etc/passwd' },
        ]),
      );
      const before = treeHash(s.dataDir);
      const v = await s.call('POST', `/api/v1/servers/survival/files/unzip?path=${q(evil)}`, { overwrite: true });
      assert.equal(v.status, 202, v.text);
      const bad = await waitOp(s, v.body.op.id);
      assert.equal(bad.error?.code, 'archive_symlink', JSON.stringify(bad));
      assert.equal(treeHash(s.dataDir), before);
    });
  }

  test('a zip-slip archive ends failed with archive_unsafe, and nothing in or beside the world changes', async () => {
    writeFileSync(
      join(s.world, 'evil.zip'),
      forgeZip([
        { name: 'harmless.txt', data: 'ok\n' },
        { name: '../escaped.txt', data: 'pwned\n' },
      ]),
    );
    const before = treeHash(s.dataDir);
    const u = await s.call('POST', `/api/v1/servers/survival/files/unzip?path=${q('evil.zip')}`, { overwrite: true });
    assert.equal(u.status, 202, u.text);
    const op = await waitOp(s, u.body.op.id);
    assert.equal(op.state, 'failed');
    assert.equal(op.error?.code, 'archive_unsafe', JSON.stringify(op));
    assert.equal(treeHash(s.dataDir), before);
    assert.equal(existsSync(join(s.world, 'harmless.txt')), false);
  });

  test('extracting into a folder that does not exist ends failed with not_found, changing nothing', async () => {
    writeFileSync(join(s.world, 'lost.zip'), forgeZip([{ name: 'lost.txt', data: 'x\n' }]));
    const before = treeHash(s.dataDir);
    const u = await s.call('POST', `/api/v1/servers/survival/files/unzip?path=${q('lost.zip')}`, { overwrite: false, to: 'nowhere' });
    assert.equal(u.status, 202, u.text);
    const op = await waitOp(s, u.body.op.id);
    assert.equal(op.state, 'failed');
    assert.equal(op.error?.code, 'not_found', JSON.stringify(op));
    assert.equal(treeHash(s.dataDir), before);
  });

  test('while an extraction runs, a write waits for it in turn and lands after it; one that cannot wait that long is 409 naming it', async () => {
    writeFileSync(join(s.world, 'small.zip'), forgeZip([{ name: 'small/a.txt', data: 'a\n' }]));
    // The extraction's Pod takes a while to start: its Job holds the world all that time.
    s.cluster.faults.pod('felis.lolicon.best/files-mode=unzip', { creatingMs: 3000 });
    try {
      const u = await s.call('POST', `/api/v1/servers/survival/files/unzip?path=${q('small.zip')}`, { overwrite: false });
      assert.equal(u.status, 202, u.text);
      const body = { content: '', content_sha256: createHash('sha256').digest('hex') };
      const quick = await s.call('PUT', `/api/v1/servers/survival/file?path=${q('notes.txt')}`, body, { prefer: 'wait=1' });
      assert.equal(quick.status, 409, quick.text);
      assert.equal(quick.body.error.code, 'maintenance_in_progress');
      assert.match(quick.body.error.message, /^this change waited \d+ s behind an archive extraction \(unzip of small\.zip\) on this server's world/);
      // The holder itself is still the kind Felis understands.
      const h = await s.call('GET', '/api/v1/servers/survival/holder');
      assert.equal(h.body.kind, 'file-write', h.text);
      const w = await s.call('PUT', `/api/v1/servers/survival/file?path=${q('notes.txt')}`, body);
      assert.equal(w.status, 200, w.text);
      // It ran after the extraction: the op had ended by the time the write was answered.
      const listed = await s.call('GET', '/api/v1/servers/survival/files/ops');
      assert.equal(listed.body.ops.find((o: { id: string }) => o.id === u.body.op.id)?.state, 'succeeded', listed.text);
      assert.equal(readFileSync(join(s.world, 'small/a.txt'), 'utf8'), 'a\n');
    } finally {
      s.cluster.faults.clear();
    }
  });
});
