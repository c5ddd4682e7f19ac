import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { makeWorld, snapshot } from '../../../job/testing/world.ts';

const mv = (path: string, to: string) => ({ op: 'rename' as const, path, to });

test('moves a file; a folder with a trailing slash moves with its contents; a link moves itself', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('plugins/Essentials'), { recursive: true });
  fs.writeFileSync(w.p('plugins/Essentials/config.yml'), 'e');
  fs.symlinkSync('config', w.p('cfg-link'));
  assert.deepEqual(await w.run(mv('config/paper.yml', 'config/paper.yml.bak')), {});
  assert.equal(fs.readFileSync(w.p('config/paper.yml.bak'), 'utf8'), 'paper: true\n');
  assert.equal(fs.existsSync(w.p('config/paper.yml')), false);
  assert.deepEqual(await w.run(mv('plugins/', 'plugins-off')), {});
  assert.equal(fs.readFileSync(w.p('plugins-off/Essentials/config.yml'), 'utf8'), 'e');
  assert.equal(fs.existsSync(w.p('plugins')), false);
  assert.deepEqual(await w.run(mv('cfg-link', 'cfg-link2')), {});
  assert.equal(fs.readlinkSync(w.p('cfg-link2')), 'config');
  assert.ok(fs.statSync(w.p('config')).isDirectory());
  // Into another existing folder.
  fs.mkdirSync(w.p('disabled'));
  assert.deepEqual(await w.run(mv('plugins-off', 'disabled/plugins-off')), {});
  assert.ok(fs.existsSync(w.p('disabled/plugins-off/Essentials/config.yml')));
});

test('an existing destination is exists and both stay; a missing destination folder is not_found, exactly', async () => {
  const w = makeWorld();
  fs.writeFileSync(w.p('a.txt'), 'A');
  fs.writeFileSync(w.p('b.txt'), 'B');
  fs.mkdirSync(w.p('emptydir'));
  fs.symlinkSync('nowhere', w.p('dangling'));
  assert.deepEqual(await w.run(mv('a.txt', 'b.txt')), { code: 'exists', error: 'b.txt already exists' });
  fs.mkdirSync(w.p('full/sub'), { recursive: true });
  assert.deepEqual(await w.run(mv('full', 'emptydir')), { code: 'exists', error: 'emptydir already exists' });
  assert.ok(fs.existsSync(w.p('full/sub')));
  assert.equal((await w.run(mv('a.txt', 'dangling'))).code, 'exists');
  assert.equal(fs.readFileSync(w.p('a.txt'), 'utf8'), 'A');
  assert.equal(fs.readFileSync(w.p('b.txt'), 'utf8'), 'B');
  assert.ok(fs.existsSync(w.p('config/paper.yml')));
  assert.deepEqual(await w.run(mv('a.txt', 'disabled/plugins-off')), { code: 'not_found', error: 'folder disabled does not exist' });
  assert.deepEqual(await w.run(mv('a.txt', 'x/y/z')), { code: 'not_found', error: 'folder x/y does not exist' });
  assert.equal(fs.existsSync(w.p('disabled')), false);
  assert.deepEqual(await w.run(mv('missing.txt', 'other.txt')), { code: 'not_found', error: 'missing.txt does not exist' });
});

test('the root on either side is bad_path', async () => {
  const w = makeWorld();
  for (const [from, to] of [
    ['', 'x'],
    ['.', 'x'],
    ['./', 'x'],
    ['config/..', 'x'],
    ['config', ''],
    ['config', '.'],
    ['server.properties', 'config/..'],
  ]) {
    assert.deepEqual(await w.run(mv(from, to)), { code: 'bad_path', error: "the server's root folder cannot be moved" }, `${from} -> ${to}`);
  }
});

test('guarded names are managed by felis, under every spelling', async () => {
  const w = makeWorld();
  fs.symlinkSync('config', w.p('cfg-link'));
  const before = snapshot(w.root);
  for (const p of ['server.properties', './server.properties', 'config/paper-global.yml', 'config//paper-global.yml', 'config', 'config/', './config', 'cfg-link/paper-global.yml']) {
    const r = await w.run(mv(p, 'moved'));
    assert.equal(r.code, 'bad_path', p);
    assert.match(r.error!, /managed by felis/, p);
  }
  assert.deepEqual(snapshot(w.root), before);
  // Hard links share the identity, so they are guarded too; other files in config are not.
  fs.linkSync(w.p('server.properties'), w.p('props-hard'));
  assert.match((await w.run(mv('props-hard', 'x'))).error!, /managed by felis/);
  assert.deepEqual(await w.run(mv('config/paper.yml', 'config/paper.yml.bak')), {});
  // A link elsewhere that points at a guarded file is not the file: moving the link moves nothing guarded.
  fs.symlinkSync('server.properties', w.p('props-alias'));
  assert.deepEqual(await w.run(mv('props-alias', 'props-alias2')), {});
});

test('when config and server.properties are links, both the link and its target are refused', async () => {
  const w = makeWorld();
  fs.renameSync(w.p('config'), w.p('real-config'));
  fs.symlinkSync('real-config', w.p('config'));
  fs.renameSync(w.p('server.properties'), w.p('real.properties'));
  fs.symlinkSync('real.properties', w.p('server.properties'));
  for (const p of ['config', 'real-config', 'server.properties', 'real.properties', 'real-config/paper-global.yml', 'config/paper-global.yml']) {
    const r = await w.run(mv(p, 'moved'));
    assert.equal(r.code, 'bad_path', p);
    assert.match(r.error!, /managed by felis/, p);
  }
  assert.deepEqual(await w.run(mv('real-config/paper.yml', 'paper.yml')), {});
});

test('escapes on either side are bad_path and nothing moves', async () => {
  const w = makeWorld();
  fs.symlinkSync(w.outside, w.p('out-link'));
  fs.writeFileSync(w.p('mine.txt'), 'm');
  const root = snapshot(w.root);
  const outside = snapshot(w.outside);
  const cases: [string, string][] = [
    ['../outside/secret.txt', 'stolen.txt'],
    ['out-link/secret.txt', 'stolen.txt'],
    [path.join(w.outside, 'secret.txt'), 'stolen.txt'],
    ['mine.txt', '../outside/planted.txt'],
    ['mine.txt', 'out-link/planted.txt'],
    ['mine.txt', path.join(w.outside, 'planted.txt')],
    ['mine.txt', 'config/../../planted.txt'],
    ['mine.txt', 'a\0b'],
  ];
  for (const [from, to] of cases) {
    assert.equal((await w.run(mv(from, to))).code, 'bad_path', `${from} -> ${to}`);
  }
  assert.deepEqual(snapshot(w.root), root);
  assert.deepEqual(snapshot(w.outside), outside);
  assert.equal(fs.existsSync(path.join(w.base, 'planted.txt')), false);
});

test('renaming a folder into itself is bad_path (an OS error), and a 256-byte destination is bad_path', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('d'));
  assert.equal((await w.run(mv('d', 'd/inner'))).code, 'bad_path');
  fs.writeFileSync(w.p('f'), 'f');
  assert.equal((await w.run(mv('f', 'n'.repeat(256)))).code, 'bad_path');
  assert.deepEqual(await w.run(mv('f', 'n'.repeat(255))), {});
});

/** plugins/links/secret-sym -> ../../config/paper-global.yml: inside the world where it is, two folders above it at the root. */
function withClimbingLink() {
  const w = makeWorld();
  fs.mkdirSync(w.p('plugins/links'), { recursive: true });
  fs.symlinkSync('../../config/paper-global.yml', w.p('plugins/links/secret-sym'));
  return w;
}

test('a relative link moved into a shallower folder, from where it would lead above the root, is bad_path naming it, and nothing moves', async () => {
  const w = withClimbingLink();
  const before = snapshot(w.root);
  assert.deepEqual(await w.run(mv('plugins/links/secret-sym', 'secret-sym')), {
    code: 'bad_path',
    error: 'plugins/links/secret-sym is a link that would lead outside the world from secret-sym; nothing was moved',
  });
  // One level up is one too many as well: from plugins/, `../../` is above the root.
  assert.equal((await w.run(mv('plugins/links/secret-sym', 'plugins/secret-sym'))).code, 'bad_path');
  assert.deepEqual(snapshot(w.root), before);
});

test('a folder holding such a link at any depth is refused whole, named by the link where it is now; as deep or deeper it moves', async () => {
  const w = withClimbingLink();
  fs.writeFileSync(w.p('plugins/links/a.txt'), 'a');
  fs.mkdirSync(w.p('deep/er'), { recursive: true });
  const before = snapshot(w.root);
  const r = await w.run(mv('plugins/links', 'links'));
  assert.deepEqual(r, { code: 'bad_path', error: 'plugins/links/secret-sym is a link that would lead outside the world from links/secret-sym; nothing was moved' });
  assert.deepEqual(snapshot(w.root), before);
  // Renamed in place, plugins/ stays at the root: its link leads where it did. Deeper, nowhere further.
  assert.deepEqual(await w.run(mv('plugins/', 'old')), {});
  assert.deepEqual(await w.run(mv('old', 'deep/er/old')), {});
  assert.equal(fs.readlinkSync(w.p('deep/er/old/links/secret-sym')), '../../config/paper-global.yml');
});

test('the link judged where it really lands: a destination spelled through a link to a shallower folder is refused too', async () => {
  const w = withClimbingLink();
  fs.mkdirSync(w.p('a/b'), { recursive: true });
  fs.symlinkSync('../..', w.p('a/b/top')); // a/b/top is the root
  const before = snapshot(w.root);
  const r = await w.run(mv('plugins/links/secret-sym', 'a/b/top/s'));
  assert.equal(r.code, 'bad_path', JSON.stringify(r));
  assert.match(r.error!, /^plugins\/links\/secret-sym is a link that would lead outside the world from a\/b\/top\/s;/);
  assert.deepEqual(snapshot(w.root), before);
});

test('links that stay inside, absolute links and links already outside moved no shallower are moved', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('plugins/x'), { recursive: true });
  fs.symlinkSync('../config/paper.yml', w.p('plugins/x/up-one'));
  fs.symlinkSync(path.join(w.outside, 'secret.txt'), w.p('plugins/x/abs'));
  fs.symlinkSync('../../../outside/secret.txt', w.p('plugins/x/out'));
  fs.mkdirSync(w.p('other'));
  // plugins/x → x: up-one then names ../config/paper.yml from the root's x, inside; but out climbs further.
  assert.equal((await w.run(mv('plugins/x', 'x'))).code, 'bad_path');
  fs.unlinkSync(w.p('plugins/x/out'));
  assert.deepEqual(await w.run(mv('plugins/x', 'x')), {});
  assert.equal(fs.readlinkSync(w.p('x/abs')), path.join(w.outside, 'secret.txt'));
  // An already escaping link moved no shallower (renamed in place, or deeper) leads no further out.
  fs.symlinkSync('../../../outside/secret.txt', w.p('x/out'));
  assert.deepEqual(await w.run(mv('x', 'y')), {});
  assert.deepEqual(await w.run(mv('y', 'other/y')), {});
  assert.equal(fs.readlinkSync(w.p('other/y/out')), '../../../outside/secret.txt');
});
