import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ArchiveNameError, checkZipName, isArchivePath } from './archive-names.ts';

test('an archive to extract is named by its ending, in any case', () => {
  for (const p of ['a.zip', 'maps/A.ZIP', 'PACK.Zip', 'dir.zip/inner.zip']) assert.equal(isArchivePath(p), true, p);
  for (const p of ['a.zip.bak', 'a.gz', 'x.tar', 'x.tar.gz', 'x.tgz', 'a.tar.bz2', 'zip', 'a.7z', '']) assert.equal(isArchivePath(p), false, p);
});

test('a new archive’s name is one .zip file name of at most 255 bytes', () => {
  assert.equal(checkZipName('world (2).zip'), 'world (2).zip');
  assert.equal(checkZipName(`${'é'.repeat(125)}.zip`), `${'é'.repeat(125)}.zip`, '254 bytes');
  for (const n of ['a/b.zip', '/b.zip', 'b.ZIP.txt', '.zip', '..', 'a\0.zip', `${'é'.repeat(126)}.zip`]) {
    assert.throws(() => checkZipName(n), ArchiveNameError, JSON.stringify(n));
  }
});
