import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeName, entryKind, fileMode, isUnsafeName, judgeEntry } from './names.ts';

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
