import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { makeWorld, SECRET_TEXT, sha256, snapshot, writeReq } from '../testing/world.ts';

const SECRET = 'config/paper-global.yml';

test('a listing shows the withheld file, and every hard link to it, with size 0', async () => {
  const w = makeWorld();
  fs.linkSync(w.p(SECRET), w.p('hard.yml'));
  fs.symlinkSync('config/paper-global.yml', w.p('sym.yml'));
  const cfg = await w.run({ op: 'list', path: 'config' });
  const byName = Object.fromEntries(cfg.entries!.map((e) => [e.name, e]));
  assert.equal(byName['paper-global.yml'].size, 0);
  assert.equal(byName['paper.yml'].size, Buffer.byteLength('paper: true\n'));
  const root = await w.run({ op: 'list', path: '' });
  const r = Object.fromEntries(root.entries!.map((e) => [e.name, e]));
  assert.equal(r['hard.yml'].size, 0);
  // A symlink's own size is the length of its target text, which says nothing about the content.
  assert.equal(r['sym.yml'].size, Buffer.byteLength('config/paper-global.yml'));
  // Listing through a link to the folder: still 0.
  fs.symlinkSync('config', w.p('cfg'));
  assert.equal((await w.run({ op: 'list', path: 'cfg' })).entries!.find((e) => e.name === 'paper-global.yml')!.size, 0);
});

test('a conditional write to the withheld file is bad_path whether the guess is right or wrong, and changes nothing', async () => {
  const w = makeWorld();
  fs.linkSync(w.p(SECRET), w.p('hard.yml'));
  fs.symlinkSync('config/paper-global.yml', w.p('sym.yml'));
  const before = snapshot(w.root);
  const answers = new Set<string>();
  for (const name of [SECRET, './config/paper-global.yml', 'config//paper-global.yml', 'sym.yml', 'hard.yml']) {
    for (const extra of [{ expectSha256: sha256(SECRET_TEXT) }, { expectSha256: sha256('wrong guess') }, { createOnly: true }]) {
      const r = await w.run(writeReq(name, 'new secret\n', extra));
      assert.equal(r.code, 'bad_path', `${name} ${JSON.stringify(extra)}: ${JSON.stringify(r)}`);
      assert.equal(r.sha256, undefined);
      // The right and the wrong guess get the very same answer.
      answers.add(`${name}:${r.error}`);
    }
  }
  assert.equal(answers.size, 5);
  assert.deepEqual(snapshot(w.root), before);
});

test('a conditional write to the withheld name is bad_path even when the file does not exist (existence is not revealed)', async () => {
  const w = makeWorld();
  fs.rmSync(w.p(SECRET));
  for (const extra of [{ expectSha256: sha256('x') }, { createOnly: true }]) {
    assert.equal((await w.run(writeReq(SECRET, 'x', extra))).code, 'bad_path');
  }
  assert.equal(fs.existsSync(w.p(SECRET)), false);
});

test('an unconditional write to the withheld file is allowed and answers only the hash of the caller own content', async () => {
  const w = makeWorld();
  const r = await w.run(writeReq(SECRET, 'rotated secret\n'));
  assert.deepEqual(r, { sha256: sha256('rotated secret\n') });
  assert.equal(fs.readFileSync(w.p(SECRET), 'utf8'), 'rotated secret\n');
});

test('read, rename and delete answers carry nothing of the withheld content', async () => {
  const w = makeWorld();
  const read = await w.run({ op: 'read', path: SECRET });
  const rename = await w.run({ op: 'rename', path: SECRET, to: 'config/x.yml' });
  for (const r of [read, rename]) {
    assert.equal(r.code, 'bad_path');
    assert.equal(r.content, undefined);
    assert.equal(r.sha256, undefined);
    assert.doesNotMatch(JSON.stringify(r), /XYZZY|\d{2,} bytes/);
  }
  assert.deepEqual(await w.run({ op: 'delete', path: 'config/paper-global.yml' }), {});
});
