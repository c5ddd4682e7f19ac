/**
 * Moves and links end to end on both tiers, through the real HTTP routes: a relative link that a
 * move would take to where it leads above the world's root is refused, by `files/move` and by
 * `files/rename`, naming the link, and stays where it was; one that stays inside moves.
 */

import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readlinkSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { q, type Stack, startStack, TIER } from './support/stack.ts';

const S = '/api/v1/servers/survival';
const LINK = 'plugins/links/secret-sym';
const TARGET = '../../config/paper-global.yml';

describe(`moves and links through the ${TIER} cluster`, () => {
  let s: Stack;
  before(async () => {
    s = await startStack();
    mkdirSync(join(s.world, 'plugins/links'), { recursive: true });
    symlinkSync(TARGET, join(s.world, LINK));
  });
  after(async () => {
    await s?.close();
  });

  /** The link is still where it was, as it was, and nothing landed at the root. */
  const unmoved = () => {
    assert.equal(lstatSync(join(s.world, LINK)).isSymbolicLink(), true);
    assert.equal(readlinkSync(join(s.world, LINK)), TARGET);
    assert.equal(existsSync(join(s.world, 'secret-sym')) || isLink(join(s.world, 'secret-sym')), false);
  };

  test('files/move of a link to the root, from where it would climb above the world, is 400 bad_path naming it; nothing moves', async () => {
    const r = await s.call('POST', `${S}/files/move`, { moves: [{ from: LINK, to: 'secret-sym' }] });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error.code, 'bad_path');
    assert.equal(r.body.error.path, LINK);
    assert.match(r.body.error.message, /plugins\/links\/secret-sym is a link that would lead outside the world from secret-sym; nothing was moved/);
    unmoved();
    // One that stays inside where it lands is moved.
    symlinkSync('../server.properties', join(s.world, 'plugins/links/props'));
    const ok = await s.call('POST', `${S}/files/move`, { moves: [{ from: 'plugins/links/props', to: 'plugins/props' }] });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body, { done: ['plugins/links/props'], failed: [] });
    assert.equal(readlinkSync(join(s.world, 'plugins/props')), '../server.properties');
  });

  test('files/rename of the same link is refused the same way; of its folder too', async () => {
    const r = await s.call('POST', `${S}/files/rename?path=${q(LINK)}`, { to: 'secret-sym' });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error.code, 'bad_path');
    assert.match(r.body.error.message, /plugins\/links\/secret-sym is a link that would lead outside the world from secret-sym; nothing was moved/);
    unmoved();
    const folder = await s.call('POST', `${S}/files/rename?path=${q('plugins/links')}`, { to: 'links' });
    assert.equal(folder.status, 400, folder.text);
    assert.match(folder.body.error.message, /plugins\/links\/secret-sym is a link that would lead outside the world from links\/secret-sym/);
    assert.equal(existsSync(join(s.world, 'links')), false);
    unmoved();
  });
});

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}
