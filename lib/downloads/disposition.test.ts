import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contentDisposition, downloadFilename } from './disposition.ts';

test('ASCII names are quoted as they are', () => {
  assert.equal(contentDisposition('world.zip'), 'attachment; filename="world.zip"');
  assert.equal(contentDisposition('my plugin (1).jar'), 'attachment; filename="my plugin (1).jar"');
});

test('non-ASCII, quotes, backslashes, % and control characters: an ASCII fallback and the exact name in filename*', () => {
  assert.equal(contentDisposition('Ünïcode 世界.txt'), `attachment; filename="_n_code __.txt"; filename*=UTF-8''%C3%9Cn%C3%AFcode%20%E4%B8%96%E7%95%8C.txt`);
  assert.equal(contentDisposition('a"b\\c%.txt'), `attachment; filename="a_b_c_.txt"; filename*=UTF-8''a%22b%5Cc%25.txt`);
  const evil = contentDisposition('x\r\nSet-Cookie: a=b');
  assert.ok(!/[\r\n]/.test(evil), evil);
  assert.match(evil, /filename\*=UTF-8''x%0D%0ASet-Cookie%3A%20a%3Db$/);
});

test('the file name is the last name of the path, plus .zip for a folder', () => {
  assert.equal(downloadFilename('plugins/Essentials/config.yml', false), 'config.yml');
  assert.equal(downloadFilename('plugins/Essentials/', true), 'Essentials.zip');
  assert.equal(downloadFilename('./world', true), 'world.zip');
});
