import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backgroundFromListing, sourceAt } from './known-kind.ts';

test('the source is asked about as its folder and name; the root, escapes and working names are not asked about', () => {
  assert.deepEqual(sourceAt('plugins/Essentials'), { folder: 'plugins', name: 'Essentials' });
  assert.deepEqual(sourceAt('./plugins//Essentials/'), { folder: 'plugins', name: 'Essentials' });
  assert.deepEqual(sourceAt('world'), { folder: '', name: 'world' });
  for (const p of ['', '.', './', '..', '../x', 'a/../../x', 'a/b/../c', '/etc', 'x/.felis-edit-0123456789ab']) assert.equal(sourceAt(p), undefined, p);
});

test('background only for exactly that name as a folder or a regular file over the limit, never a link', () => {
  const page = (...entries: object[]) => JSON.stringify({ entries, truncated: false });
  const e = (name: string, size: number, is_dir: boolean, is_symlink = false) => ({ name, size, is_dir, is_symlink, mod_time: '', mode: '644' });
  assert.equal(backgroundFromListing(page(e('w', 0, true)), 'w', 10), true);
  assert.equal(backgroundFromListing(page(e('w', 11, false)), 'w', 10), true);
  assert.equal(backgroundFromListing(page(e('w', 10, false)), 'w', 10), false, 'at the limit it is a sync copy');
  assert.equal(backgroundFromListing(page(e('w', 0, true, true)), 'w', 10), false);
  assert.equal(backgroundFromListing(page(e('W', 0, true), e('ww', 0, true)), 'w', 10), false);
  assert.equal(backgroundFromListing(page({ name: 'w', is_dir: true }), 'w', 10), false, 'no is_symlink: not a paged listing, unknown');
  assert.equal(backgroundFromListing('{"code":"not_found","error":"x"}', 'w', 10), false);
  assert.equal(backgroundFromListing('nope', 'w', 10), false);
  assert.equal(backgroundFromListing('null', 'w', 10), false);
});
