import assert from 'node:assert/strict';
import { test } from 'node:test';
import { copyName, freeCopyName, splitEnding } from './copy-name.ts';

test('a file copy is named `<name> copy<.ext>`, then numbered', () => {
  assert.equal(copyName('a.txt', false, 1), 'a copy.txt');
  assert.equal(copyName('a.txt', false, 2), 'a copy 2.txt');
  const taken = new Set(['a copy.txt', 'a copy 2.txt']);
  assert.equal(
    freeCopyName('a.txt', false, (c) => taken.has(c)),
    'a copy 3.txt',
  );
  assert.equal(
    freeCopyName('a.txt', false, () => false),
    'a copy.txt',
  );
});

test('a .tar.gz-style double ending counts as one ending', () => {
  assert.equal(copyName('x.tar.gz', false, 1), 'x copy.tar.gz');
  assert.equal(copyName('x.tar.zst', false, 2), 'x copy 2.tar.zst');
  assert.equal(copyName('world.backup.tar.gz', false, 1), 'world.backup copy.tar.gz');
  assert.equal(copyName('x.gz', false, 1), 'x copy.gz');
});

test('a folder and a dotfile have no ending', () => {
  assert.equal(copyName('plugins', true, 1), 'plugins copy');
  assert.equal(copyName('world.old', true, 1), 'world.old copy');
  assert.equal(copyName('.env', false, 1), '.env copy');
  assert.equal(copyName('..env', false, 1), '..env copy');
  assert.equal(copyName('.env.local', false, 1), '.env copy.local');
  assert.equal(copyName('.tar.gz', false, 1), '.tar copy.gz');
  assert.equal(copyName('trailing.', false, 1), 'trailing. copy');
  assert.equal(copyName('Makefile', false, 1), 'Makefile copy');
  assert.deepEqual(splitEnding('a.b.c', false), { stem: 'a.b', ending: '.c' });
});

test('no name when every numbered one is taken or the name grows too long', () => {
  assert.equal(
    freeCopyName('a.txt', false, () => true),
    undefined,
  );
  assert.equal(
    freeCopyName('a'.repeat(251) + '.txt', false, () => false),
    undefined,
  );
});
