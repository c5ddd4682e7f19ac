import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { errnoError, makeWorld, snapshot } from '../../../job/testing/world.ts';

test('mkdir config/sub/ works (trailing slash) with one chown on config/sub whose failure is ignored', async () => {
  const w = makeWorld();
  const chowns: string[] = [];
  const r = await w.run(
    { op: 'mkdir', path: 'config/sub/' },
    {
      chown: (p, uid, gid) => {
        chowns.push(fs.realpathSync(p));
        assert.deepEqual([uid, gid], [1000, 1000]);
        throw errnoError('EPERM');
      },
    },
  );
  assert.deepEqual(r, {});
  assert.ok(fs.statSync(w.p('config/sub')).isDirectory());
  assert.deepEqual(chowns, [w.p('config/sub')]);
});

test('mkdir makes mode 0755 (under the usual umask) and gives the folder to 1000:1000 when allowed', async () => {
  const w = makeWorld();
  const old = process.umask(0o022);
  try {
    assert.deepEqual(await w.run({ op: 'mkdir', path: 'plugins' }), {});
  } finally {
    process.umask(old);
  }
  const st = fs.statSync(w.p('plugins'));
  assert.equal(st.mode & 0o777, 0o755);
  if (process.getuid?.() === 0) assert.equal(st.uid, 1000);
});

test('an existing folder or file is exists; a missing parent is not_found with the exact message and is not created', async () => {
  const w = makeWorld();
  assert.deepEqual(await w.run({ op: 'mkdir', path: 'config' }), { code: 'exists', error: 'config already exists' });
  assert.deepEqual(await w.run({ op: 'mkdir', path: 'server.properties' }), { code: 'exists', error: 'server.properties already exists' });
  assert.deepEqual(await w.run({ op: 'mkdir', path: 'plugins/Essentials' }), { code: 'not_found', error: 'folder plugins does not exist' });
  assert.deepEqual(await w.run({ op: 'mkdir', path: 'a/b/c' }), { code: 'not_found', error: 'folder a/b does not exist' });
  assert.equal(fs.existsSync(w.p('plugins')), false);
  assert.equal(fs.existsSync(w.p('a')), false);
  // An existing link (even dangling) is an existing entry; its target is not created.
  fs.symlinkSync('nowhere', w.p('dangling'));
  assert.equal((await w.run({ op: 'mkdir', path: 'dangling' })).code, 'exists');
  assert.equal(fs.existsSync(w.p('nowhere')), false);
});

test('"", ".", "./" and "config/.." are bad_path', async () => {
  const w = makeWorld();
  for (const p of ['', '.', './', 'config/..']) {
    assert.deepEqual(await w.run({ op: 'mkdir', path: p }), { code: 'bad_path', error: 'a folder needs a name' }, p);
  }
});

test('escapes (../outside/made, through a dir link, absolute) are bad_path and nothing is created', async () => {
  const w = makeWorld();
  fs.symlinkSync(w.outside, w.p('out-link'));
  fs.symlinkSync('../outside', w.p('rel-out-link'));
  const before = snapshot(w.outside);
  for (const p of ['../outside/made', 'out-link/made', 'rel-out-link/made', path.join(w.outside, 'made'), '/made', 'config/../../outside/made']) {
    const r = await w.run({ op: 'mkdir', path: p });
    assert.equal(r.code, 'bad_path', p);
  }
  assert.deepEqual(snapshot(w.outside), before);
  assert.equal(fs.existsSync(path.join(w.base, 'made')), false);
  assert.equal(fs.existsSync('/made'), false);
});

test('mkdir of a 255-byte name works and a 256-byte name is bad_path; NUL is bad_path', async () => {
  const w = makeWorld();
  assert.deepEqual(await w.run({ op: 'mkdir', path: 'd'.repeat(255) }), {});
  assert.equal((await w.run({ op: 'mkdir', path: 'd'.repeat(256) })).code, 'bad_path');
  assert.equal((await w.run({ op: 'mkdir', path: 'x\0y' })).code, 'bad_path');
});

test('parents: a/b/c makes a, a/b and a/b/c top down, each 0755; again it is no error (mkdir -p); a file there stays exists', async () => {
  const w = makeWorld();
  const old = process.umask(0o022);
  try {
    assert.deepEqual(await w.run({ op: 'mkdir', path: 'a/b/c', parents: true }), {});
  } finally {
    process.umask(old);
  }
  for (const p of ['a', 'a/b', 'a/b/c']) assert.equal(fs.statSync(w.p(p)).mode & 0o777, 0o755, p);
  assert.deepEqual(await w.run({ op: 'mkdir', path: 'a/b/c', parents: true }), {});
  assert.deepEqual(await w.run({ op: 'mkdir', path: 'config', parents: true }), {});
  // Without parents an existing folder is still exists, as Felis answers.
  assert.deepEqual(await w.run({ op: 'mkdir', path: 'a/b/c' }), { code: 'exists', error: 'a/b/c already exists' });
  assert.deepEqual(await w.run({ op: 'mkdir', path: 'server.properties', parents: true }), { code: 'exists', error: 'server.properties already exists' });
  assert.equal((await w.run({ op: 'mkdir', path: 'server.properties/x', parents: true })).code, 'bad_path');
  assert.equal(fs.statSync(w.p('server.properties')).isFile(), true);
});

test('parents never makes a folder through a link leading out, nor a working name', async () => {
  const w = makeWorld();
  fs.symlinkSync(w.outside, w.p('out-link'));
  const before = snapshot(w.outside);
  assert.equal((await w.run({ op: 'mkdir', path: 'out-link/x/y', parents: true })).code, 'bad_path');
  assert.deepEqual(snapshot(w.outside), before);
  assert.equal((await w.run({ op: 'mkdir', path: 'a/.felis-edit-0123456789ab/c', parents: true })).code, 'bad_path');
  assert.equal(fs.existsSync(w.p('a')), false);
});
