import assert from 'node:assert/strict';
import { test } from 'node:test';
import { archiveFormat, checkZipName, isArchivePath, requireArchivePath, singleFileTarget } from './archive-names.ts';
import { BadNameError } from './name-field.ts';

test('an archive to extract is named by its ending, in any case, and the ending decides the format', () => {
  const formats: [string, string][] = [
    ['a.zip', 'zip'],
    ['maps/A.ZIP', 'zip'],
    ['PACK.Zip', 'zip'],
    ['dir.zip/inner.zip', 'zip'],
    ['x.tar', 'tar'],
    ['X.TAR', 'tar'],
    ['x.tar.gz', 'tar.gz'],
    ['b.Tar.Gz', 'tar.gz'],
    ['x.tgz', 'tar.gz'],
    ['x.zip.tgz', 'tar.gz'],
    ['a.tar.bz2', 'tar.bz2'],
    ['a.TBZ2', 'tar.bz2'],
    ['a.tar.xz', 'tar.xz'],
    ['a.Txz', 'tar.xz'],
    ['a.tar.ZST', 'tar.zst'],
    ['a.tzst', 'tar.zst'],
    ['m.7Z', '7z'],
    ['m.rar', 'rar'],
    ['latest.log.gz', 'gz'],
    ['a.gz', 'gz'],
    ['a.BZ2', 'bz2'],
    ['a.xz', 'xz'],
    ['a.zst', 'zst'],
    ['a.tar.gz.xz', 'xz'],
    ['a.zip.gz', 'gz'],
  ];
  for (const [p, f] of formats) {
    assert.equal(isArchivePath(p), true, p);
    assert.equal(archiveFormat(p), f, p);
  }
  for (const p of ['a.zip.bak', 'x.tar.bak', 'x.targz', 'a.bz', 'a.lz', 'a.zstd', 'zip', 'tar', 'gz', '.gz', 'maps/.XZ', 'a.gz/', '']) {
    assert.equal(isArchivePath(p), false, p);
    assert.equal(archiveFormat(p), undefined, p);
    assert.throws(() => requireArchivePath(p), /only a \.zip, \.tar, \.tar\.gz\/\.tgz, .* or \.rar archive, or a single \.gz, \.bz2, \.xz or \.zst file, can be extracted/, p);
  }
});

test('a single compressed file extracts to its base name without the ending; an archive of entries has no such name', () => {
  assert.equal(singleFileTarget('logs/Latest.LOG.GZ'), 'Latest.LOG');
  assert.equal(singleFileTarget('a.tar.gz.xz'), 'a.tar.gz');
  assert.equal(singleFileTarget('x/.b.zst'), '.b');
  for (const p of ['a.tar.gz', 'a.tgz', 'a.zip', 'a.7z', '.gz', 'a.txt']) assert.equal(singleFileTarget(p), undefined, p);
});

test('a new archive’s name is one new .zip file name by the name rule (bad_name otherwise)', () => {
  assert.equal(checkZipName('world (2).zip'), 'world (2).zip');
  assert.equal(checkZipName(`${'é'.repeat(125)}.zip`), `${'é'.repeat(125)}.zip`, '254 bytes');
  for (const n of ['a/b.zip', '/b.zip', 'b.ZIP.txt', '.zip', '..', 'a\0.zip', `${'é'.repeat(126)}.zip`, 'tab\t.zip', 'evil\u202egpj.zip', 'c1\u0085.zip']) {
    assert.throws(
      () => checkZipName(n),
      (e: unknown) => e instanceof BadNameError && e.code === 'bad_name',
      JSON.stringify(n),
    );
  }
});
