import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HardLinks } from './hard-links.ts';

test('a file counts at its first name only; the same inode on another device is another file', () => {
  const h = new HardLinks();
  assert.equal(h.meet(1, 42, 'world'), 'count');
  assert.equal(h.meet(1, 42, 'world'), 'skip');
  assert.equal(h.meet(2, 42, 'world'), 'count');
  assert.equal(h.meet(1, '18446744073709551615', 'world'), 'count', 'an inode past 2^53, by its text');
  assert.equal(h.meet(1, '18446744073709551615', 'world'), 'skip');
  assert.equal(h.size, 3);
});

test('the world wins over the trash, whichever comes first, and only once', () => {
  const h = new HardLinks();
  assert.equal(h.meet(1, 7, 'trash'), 'count');
  assert.equal(h.meet(1, 7, 'trash'), 'skip');
  assert.equal(h.meet(1, 7, 'world'), 'move');
  assert.equal(h.meet(1, 7, 'world'), 'skip');
  assert.equal(h.meet(1, 7, 'trash'), 'skip');
  assert.equal(h.meet(1, 8, 'world'), 'count');
  assert.equal(h.meet(1, 8, 'trash'), 'skip');
});

test('bounded: past the cap a new file counts at each name, those remembered still count once', () => {
  const h = new HardLinks(2);
  h.meet(1, 1, 'world');
  h.meet(1, 2, 'world');
  assert.equal(h.meet(1, 3, 'world'), 'count');
  assert.equal(h.meet(1, 3, 'world'), 'count', 'not remembered: counted again');
  assert.equal(h.meet(1, 1, 'world'), 'skip');
  assert.equal(h.size, 2);
});
