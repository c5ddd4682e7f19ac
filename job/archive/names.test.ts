import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeName, entryKind, entryPathMax, fileMode, isUnsafeName, judgeEntry, WORK_SPELLING_BYTES } from './names.ts';

const unix = (3 << 8) | 20;
const fat = 20;

test('names: valid UTF-8 stays UTF-8 whatever the flag; anything else is read as GB18030', () => {
  assert.equal(decodeName(Buffer.from('ünï/ok.txt')), 'ünï/ok.txt');
  assert.equal(decodeName(Buffer.from([0xb4, 0xe6, 0xb5, 0xb5])), '存档');
  assert.equal(decodeName(Buffer.from([0x81, 0x30, 0x81, 0x30])), '\u0080'); // a GB18030 four-byte sequence
});

test('kinds: Unix modes give file, folder, link or special; MS-DOS attributes give folders; a trailing slash is a folder', () => {
  assert.deepEqual(entryKind({ versionMadeBy: unix, externalAttributes: (0o100755 << 16) >>> 0, name: 'a' }), { kind: 'file', perm: 0o755 });
  assert.equal(entryKind({ versionMadeBy: unix, externalAttributes: (0o040755 << 16) >>> 0, name: 'a' }).kind, 'dir');
  assert.equal(entryKind({ versionMadeBy: unix, externalAttributes: (0o120777 << 16) >>> 0, name: 'a' }).kind, 'symlink');
  for (const t of [0o010000, 0o020000, 0o060000, 0o140000]) {
    assert.equal(entryKind({ versionMadeBy: unix, externalAttributes: ((t | 0o644) << 16) >>> 0, name: 'a' }).kind, 'special');
  }
  assert.equal(entryKind({ versionMadeBy: unix, externalAttributes: 0, name: 'a' }).kind, 'file');
  assert.equal(entryKind({ versionMadeBy: fat, externalAttributes: 0x10, name: 'a' }).kind, 'dir');
  assert.equal(entryKind({ versionMadeBy: fat, externalAttributes: 0x20, name: 'a/' }).kind, 'dir');
  // An unknown host's attributes mean nothing: only the name decides.
  assert.equal(entryKind({ versionMadeBy: (10 << 8) | 20, externalAttributes: 0xffffffff, name: 'a' }).kind, 'file');
});

test('modes: any execute bit gives 0755, anything else 0644', () => {
  assert.equal(fileMode(0o700), 0o755);
  assert.equal(fileMode(0o001), 0o755);
  assert.equal(fileMode(0o666), 0o644);
  assert.equal(fileMode(0o000), 0o644);
});

test('judging: unsafe before __MACOSX before links; folders that clean to "." are skipped', () => {
  assert.equal(isUnsafeName('a/b/../c'), false);
  assert.equal(isUnsafeName('a/../../c'), true);
  assert.deepEqual(judgeEntry(Buffer.from('__MACOSX/../../x'), unix, 0), {
    action: 'refuse',
    code: 'archive_unsafe',
    entry: '__MACOSX/../../x',
    error: '__MACOSX/../../x leads outside the folder it would be extracted into',
  });
  assert.deepEqual(judgeEntry(Buffer.from('__MACOSX/link'), unix, (0o120777 << 16) >>> 0), { action: 'skip' });
  assert.deepEqual(judgeEntry(Buffer.from('./'), unix, 0), { action: 'skip' });
  assert.deepEqual(judgeEntry(Buffer.from('a/./b/'), unix, 0), { action: 'dir', name: 'a/b' });
  assert.deepEqual(judgeEntry(Buffer.from('a\\b.txt'), unix, (0o100600 << 16) >>> 0), { action: 'file', name: 'a/b.txt', mode: 0o644 });
});

test('judging: a NUL, a name part over 255 bytes (in UTF-8, after decoding), a path past where it lands; the limits only', () => {
  const refusedFor = (raw: Buffer, pathMax?: number): [string, string, string] => {
    const j = judgeEntry(raw, unix, 0, undefined, pathMax);
    assert.equal(j.action, 'refuse', JSON.stringify(j));
    return j.action === 'refuse' ? [j.code, j.entry, j.error] : ['', '', ''];
  };
  assert.deepEqual(refusedFor(Buffer.from('a\0b.txt')), ['archive_unsafe', 'a\0b.txt', 'a<U+0000>b.txt has a NUL byte in its name, which no file name can hold']);
  assert.deepEqual(judgeEntry(Buffer.from(`d/${'n'.repeat(255)}`), unix, 0), { action: 'file', name: `d/${'n'.repeat(255)}`, mode: 0o644 });
  assert.match(refusedFor(Buffer.from(`d/${'n'.repeat(256)}`))[2], /has a name of 256 bytes; a file or folder name has at most 255$/);
  // 86 GBK characters are 172 bytes in the archive and 258 on the volume, where they are UTF-8.
  assert.match(refusedFor(Buffer.concat(Array.from({ length: 86 }, () => Buffer.from([0xb4, 0xe6]))))[2], /has a name of 258 bytes/);
  // The path as it lands: `./` and `a/..` clean away before it is measured.
  assert.equal(judgeEntry(Buffer.from(`./a/../${'p'.repeat(100)}`), unix, 0, undefined, 100).action, 'file');
  assert.match(refusedFor(Buffer.from(`q/${'p'.repeat(98)}`), 99)[2], /has a path of 100 bytes; extracted here a path has at most 99$/);
  // Control and bidirectional characters are the owner's to name with: not refused here.
  assert.equal(judgeEntry(Buffer.from('odd\u0007\u202e.txt'), unix, 0).action, 'file');
});

test("an entry may have the path PATH_MAX leaves where it lands, less the extraction's own spelling of it", () => {
  assert.equal(entryPathMax('.'), 4096 - WORK_SPELLING_BYTES);
  assert.equal(entryPathMax('a'), 4096 - WORK_SPELLING_BYTES);
  assert.equal(entryPathMax('x'.repeat(100)), 4096 - 101);
  assert.equal(entryPathMax('é'.repeat(100)), 4096 - 201);
});
