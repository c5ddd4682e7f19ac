import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ArchiveNameError, archiveFormat, checkZipName, isArchivePath, requireArchivePath } from './archive-names.ts';

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
  ];
  for (const [p, f] of formats) {
    assert.equal(isArchivePath(p), true, p);
    assert.equal(archiveFormat(p), f, p);
  }
  for (const p of ['a.zip.bak', 'a.gz', 'x.tar.bak', 'x.targz', 'a.tar.bz2', 'a.tar.xz', 'a.rar', 'zip', 'tar', 'a.7z', '']) {
    assert.equal(isArchivePath(p), false, p);
    assert.equal(archiveFormat(p), undefined, p);
    assert.throws(() => requireArchivePath(p), /only a \.zip, \.tar, \.tar\.gz or \.tgz file can be extracted/, p);
  }
});

test('a new archive’s name is one .zip file name of at most 255 bytes', () => {
  assert.equal(checkZipName('world (2).zip'), 'world (2).zip');
  assert.equal(checkZipName(`${'é'.repeat(125)}.zip`), `${'é'.repeat(125)}.zip`, '254 bytes');
  for (const n of ['a/b.zip', '/b.zip', 'b.ZIP.txt', '.zip', '..', 'a\0.zip', `${'é'.repeat(126)}.zip`]) {
    assert.throws(() => checkZipName(n), ArchiveNameError, JSON.stringify(n));
  }
});
