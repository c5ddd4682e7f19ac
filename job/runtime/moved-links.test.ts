import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { makeWorld } from '../testing/world.ts';
import { judgeMovedLinks, LinkBudget } from './moved-links.ts';

const mv = (path: string, to: string) => ({ op: 'rename' as const, path, to });

test('a tree not looked through within the budget is too_large, never moved unchecked', () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('a/b'), { recursive: true });
  for (let i = 0; i < 300; i++) fs.writeFileSync(w.p(`a/b/f${i}`), '');
  let now = 0;
  const budget = new LinkBudget(1000, () => now);
  now = 1001; // spent before the walk's first look at the clock
  const fd = fs.openSync(w.p('a'), 'r');
  try {
    const r = judgeMovedLinks({ dirFd: fd, name: 'b', fromDepth: 1, lands: 'b', shown: 'a/b', shownAfter: 'b', unchanged: 'nothing was moved' }, budget);
    assert.deepEqual(r, { code: 'too_large', error: 'the links in a/b could not be checked: what the op moves is more than can be looked through in 1 s; nothing was moved' });
    // Within the budget the same tree is looked through, and has no link to refuse.
    assert.equal(judgeMovedLinks({ dirFd: fd, name: 'b', fromDepth: 1, lands: 'b', shown: 'a/b', shownAfter: 'b', unchanged: 'nothing was moved' }, new LinkBudget()), null);
  } finally {
    fs.closeSync(fd);
  }
});

test('a name that is not UTF-8 is looked into by its bytes, and shown decoded', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('plugins/p'), { recursive: true });
  const odd = Buffer.concat([Buffer.from(`${w.p('plugins/p')}/`), Buffer.from([0x6f, 0xff])]);
  fs.mkdirSync(odd);
  fs.symlinkSync('../../../server.properties', Buffer.concat([odd, Buffer.from('/up')]));
  const r = await w.run(mv('plugins/p', 'p'));
  assert.deepEqual(r, { code: 'bad_path', error: 'plugins/p/o\uFFFD/up is a link that would lead outside the world from p/o\uFFFD/up; nothing was moved' });
  assert.deepEqual(fs.readdirSync(w.p('plugins/p'), { encoding: 'buffer' }), [Buffer.from([0x6f, 0xff])]);
  assert.equal(fs.existsSync(w.p('p')), false);
  fs.rmSync(odd, { recursive: true }); // by its bytes: the world's own clean-up goes by UTF-8 names
});
