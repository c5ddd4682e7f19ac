import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { LEDGER_DIR } from '../../../job/runtime/withheld.ts';
import { errnoError, makeWorld, OUTSIDE_TEXT, openFds, sha256, snapshot, tree, writeReq } from '../../../job/testing/world.ts';

const TEMP = /^\.felis-edit-[0-9a-f]{12}$/;
const noTemps = (dir: string) => fs.readdirSync(dir).filter((n) => n.startsWith('.felis-edit-') && n !== LEDGER_DIR);

test('a write replaces an existing file and creates a new one; chown once on the temp path, failure ignored', async () => {
  const w = makeWorld();
  const chowns: string[] = [];
  const chown = (p: string, uid: number, gid: number) => {
    assert.equal(uid, 1000);
    assert.equal(gid, 1000);
    chowns.push(p);
    throw errnoError('EPERM');
  };
  const r1 = await w.run(writeReq('config/paper.yml', 'paper: false\n'), { chown });
  assert.deepEqual(r1, { sha256: sha256('paper: false\n') });
  assert.equal(fs.readFileSync(w.p('config/paper.yml'), 'utf8'), 'paper: false\n');
  const r2 = await w.run(writeReq('new.txt', 'fresh'), { chown });
  assert.deepEqual(r2, { sha256: sha256('fresh') });
  assert.equal(fs.readFileSync(w.p('new.txt'), 'utf8'), 'fresh');
  assert.equal(chowns.length, 2);
  for (const c of chowns) assert.match(path.basename(c), TEMP);
  assert.deepEqual(noTemps(w.root), []);
  assert.deepEqual(noTemps(w.p('config')), []);
});

test('the default chown gives files to 1000:1000 when allowed, and never fails the write when not', async () => {
  const w = makeWorld();
  const r = await w.run(writeReq('owned.txt', 'x'));
  assert.equal(r.code, undefined);
  const st = fs.statSync(w.p('owned.txt'));
  if (process.getuid?.() === 0) {
    assert.equal(st.uid, 1000);
    assert.equal(st.gid, 1000);
  } else {
    assert.equal(st.uid, process.getuid?.());
  }
});

test('a write into a missing folder is not_found naming the folder, and does not create it', async () => {
  const w = makeWorld();
  assert.deepEqual(await w.run(writeReq('plugins/x.yml', 'x')), { code: 'not_found', error: 'folder plugins does not exist' });
  assert.equal(fs.existsSync(w.p('plugins')), false);
  // The deepest missing folder named as the caller wrote it, not only the first one missing.
  assert.deepEqual(await w.run(writeReq('plugins/a/b/x.yml', 'x')), { code: 'not_found', error: 'folder plugins/a/b does not exist' });
  // A link whose target's folder is missing names only the caller's path.
  fs.symlinkSync('gone/x.yml', w.p('via-link.yml'));
  assert.deepEqual(await w.run(writeReq('via-link.yml', 'x')), { code: 'not_found', error: 'via-link.yml does not exist' });
  assert.equal(fs.existsSync(w.p('gone')), false);
});

test('over 1 MiB (what a read shows) is too_large and nothing is touched; exactly 1 MiB is written; empty content is fine', async () => {
  const w = makeWorld();
  const big = Buffer.alloc((1 << 20) + 1, 0x61);
  const r = await w.run(writeReq('big.txt', big));
  assert.equal(r.code, 'too_large');
  assert.equal(fs.existsSync(w.p('big.txt')), false);
  const max = Buffer.alloc(1 << 20, 0x62);
  assert.deepEqual(await w.run(writeReq('max.txt', max)), { sha256: sha256(max) });
  assert.deepEqual(fs.readFileSync(w.p('max.txt')), max);
  assert.deepEqual(await w.run(writeReq('server.properties', '')), { sha256: sha256('') });
  assert.equal(fs.readFileSync(w.p('server.properties'), 'utf8'), '');
});

test('a content digest mismatch changes nothing and leaves no temp; the right digest writes', async () => {
  const w = makeWorld();
  const before = snapshot(w.root);
  const r = await w.run({ ...writeReq('server.properties', 'new'), sha256: sha256('other') });
  assert.equal(r.code, 'digest_mismatch');
  assert.deepEqual(snapshot(w.root), before);
  // Checked before the size: a mismatching oversize write is a digest_mismatch.
  const big = Buffer.alloc((256 << 10) + 1);
  assert.equal((await w.run({ ...writeReq('x', big), sha256: sha256('x') })).code, 'digest_mismatch');
  assert.deepEqual(await w.run(writeReq('server.properties', 'new')), { sha256: sha256('new') });
  // Without a digest (execute called directly), nothing is checked.
  assert.deepEqual(await w.run({ op: 'write', path: 'nodigest', content: Buffer.from('n') }), { sha256: sha256('n') });
});

test('ENOSPC from fsync → no_space, original intact, no temp left; EDQUOT too', async () => {
  const w = makeWorld();
  const before = fs.readFileSync(w.p('server.properties'));
  for (const code of ['ENOSPC', 'EDQUOT']) {
    const r = await w.run(writeReq('server.properties', 'replacement'), {
      fsync: () => {
        throw errnoError(code);
      },
    });
    assert.deepEqual(r, { code: 'no_space', error: "the server's volume is full; server.properties was left unchanged" });
    assert.deepEqual(fs.readFileSync(w.p('server.properties')), before);
    assert.deepEqual(noTemps(w.root), []);
  }
  // Another fsync failure is bad_path (fail closed), also cleaned up.
  const eio = await w.run(writeReq('server.properties', 'x'), {
    fsync: () => {
      throw errnoError('EIO');
    },
  });
  assert.equal(eio.code, 'bad_path');
  assert.deepEqual(noTemps(w.root), []);
});

test('a 0600 file keeps its mode; a new file gets 0644 whatever the umask', async () => {
  const w = makeWorld();
  fs.chmodSync(w.p('server.properties'), 0o600);
  await w.run(writeReq('server.properties', 'a=b\n'));
  assert.equal(fs.statSync(w.p('server.properties')).mode & 0o7777, 0o600);
  const old = process.umask(0o077);
  try {
    await w.run(writeReq('fresh.txt', 'x'));
  } finally {
    process.umask(old);
  }
  assert.equal(fs.statSync(w.p('fresh.txt')).mode & 0o7777, 0o644);
});

test('a 255-byte name can be created; a 256-byte name is bad_path', async () => {
  const w = makeWorld();
  const n255 = 'n'.repeat(255);
  assert.deepEqual(await w.run(writeReq(n255, 'ok')), { sha256: sha256('ok') });
  assert.equal(fs.readFileSync(w.p(n255), 'utf8'), 'ok');
  const r = await w.run(writeReq('n'.repeat(256), 'no'));
  assert.equal(r.code, 'bad_path');
  assert.match(r.error!, / has a name that is too long$/);
});

test('a write through an in-root symlink updates the target and leaves the link', async () => {
  const w = makeWorld();
  fs.symlinkSync('config/paper.yml', w.p('paper-link.yml'));
  fs.symlinkSync('config', w.p('cfg-link'));
  assert.deepEqual(await w.run(writeReq('paper-link.yml', 'via link\n')), { sha256: sha256('via link\n') });
  assert.ok(fs.lstatSync(w.p('paper-link.yml')).isSymbolicLink());
  assert.equal(fs.readFileSync(w.p('config/paper.yml'), 'utf8'), 'via link\n');
  await w.run(writeReq('cfg-link/paper.yml', 'via dir link\n'));
  assert.ok(fs.lstatSync(w.p('cfg-link')).isSymbolicLink());
  assert.equal(fs.readFileSync(w.p('config/paper.yml'), 'utf8'), 'via dir link\n');
  // A dangling in-root link (no create-only) creates its target.
  fs.symlinkSync('config/created.yml', w.p('dangling.yml'));
  assert.equal((await w.run(writeReq('dangling.yml', 'made'))).code, undefined);
  assert.equal(fs.readFileSync(w.p('config/created.yml'), 'utf8'), 'made');
  assert.ok(fs.lstatSync(w.p('dangling.yml')).isSymbolicLink());
});

test('links leading out are refused and the outside is unchanged; ../outside creates nothing', async () => {
  const w = makeWorld();
  fs.symlinkSync(path.join(w.outside, 'secret.txt'), w.p('planted.txt'));
  fs.symlinkSync('../../outside/secret.txt', w.p('config/climb.txt'));
  fs.symlinkSync(w.outside, w.p('out-dir'));
  fs.symlinkSync('../outside', w.p('rel-out-dir'));
  const outsideBefore = snapshot(w.outside);
  const cases: [string, RegExp][] = [
    ['planted.txt', /planted.txt is a symbolic link to .*secret.txt, outside the server's files/],
    ['config/climb.txt', /config\/climb.txt is a symbolic link to \.\.\/\.\.\/outside\/secret.txt, outside the server's files/],
    ['out-dir/secret.txt', /: the path leads out of the world$/],
    ['rel-out-dir/secret.txt', /: the path leads out of the world$/],
    ['out-dir/new.txt', /: the path leads out of the world$/],
    ['../outside/new.txt', /: the path leads out of the world$/],
    [path.join(w.outside, 'new.txt'), /: the path leads out of the world$/],
  ];
  for (const [p, re] of cases) {
    const r = await w.run(writeReq(p, 'pwned'));
    assert.equal(r.code, 'bad_path', p);
    assert.match(r.error!, re, p);
  }
  assert.deepEqual(snapshot(w.outside), outsideBefore);
  assert.equal(fs.readFileSync(path.join(w.outside, 'secret.txt'), 'utf8'), OUTSIDE_TEXT);
});

test('write link hops: 8 are followed, 9 are bad_path; a loop is bad_path', async () => {
  const w = makeWorld();
  fs.writeFileSync(w.p('t.txt'), 'T');
  fs.symlinkSync('t.txt', w.p('h1'));
  for (let i = 2; i <= 9; i++) fs.symlinkSync(`h${i - 1}`, w.p(`h${i}`));
  assert.deepEqual(await w.run(writeReq('h8', 'eight')), { sha256: sha256('eight') });
  assert.equal(fs.readFileSync(w.p('t.txt'), 'utf8'), 'eight');
  const r = await w.run(writeReq('h9', 'nine'));
  assert.equal(r.code, 'bad_path');
  assert.equal(fs.readFileSync(w.p('t.txt'), 'utf8'), 'eight');
  fs.symlinkSync('loop2', w.p('loop1'));
  fs.symlinkSync('loop1', w.p('loop2'));
  assert.equal((await w.run(writeReq('loop1', 'x'))).code, 'bad_path');
  // A link to a link's directory spelled relative to the link's own folder.
  fs.mkdirSync(w.p('d'));
  fs.symlinkSync('../t.txt', w.p('d/up.txt'));
  assert.deepEqual(await w.run(writeReq('d/up.txt', 'up')), { sha256: sha256('up') });
  assert.equal(fs.readFileSync(w.p('t.txt'), 'utf8'), 'up');
});

test('the final target must be a regular file: a folder (or a link to one) and a FIFO are bad_path', async () => {
  const w = makeWorld();
  fs.symlinkSync('config', w.p('cfg-link'));
  assert.deepEqual(await w.run(writeReq('config', 'x')), { code: 'bad_path', error: 'config is a directory, not a file' });
  assert.deepEqual(await w.run(writeReq('cfg-link', 'x')), { code: 'bad_path', error: 'cfg-link is a directory, not a file' });
  assert.deepEqual(await w.run(writeReq('', 'x')), { code: 'bad_path', error: '. is a directory, not a file' });
  assert.equal((await w.run(writeReq('config/.', 'x'))).code, 'bad_path');
  execFileSync('mkfifo', [w.p('fifo')]);
  assert.deepEqual(await w.run(writeReq('fifo', 'x')), { code: 'bad_path', error: 'fifo is not a regular file' });
  assert.ok(fs.statSync(w.p('config')).isDirectory());
});

test('felis-experience.json through a link is bad_path and the target is unchanged', async () => {
  const w = makeWorld();
  fs.writeFileSync(w.p('real.json'), '{"a":1}');
  fs.symlinkSync('real.json', w.p('felis-experience.json'));
  const r = await w.run(writeReq('felis-experience.json', '{"a":2}'));
  assert.equal(r.code, 'bad_path');
  assert.equal(fs.readFileSync(w.p('real.json'), 'utf8'), '{"a":1}');
  assert.ok(fs.lstatSync(w.p('felis-experience.json')).isSymbolicLink());
  // A regular file of that name is written; only the exact root name is special.
  fs.rmSync(w.p('felis-experience.json'));
  fs.writeFileSync(w.p('felis-experience.json'), '{}');
  assert.deepEqual(await w.run(writeReq('felis-experience.json', '{"b":1}')), { sha256: sha256('{"b":1}') });
  fs.symlinkSync('../real.json', w.p('config/felis-experience.json'));
  assert.equal((await w.run(writeReq('config/felis-experience.json', 'x'))).code, undefined);
});

test('a write to config/paper-global.yml is allowed', async () => {
  const w = makeWorld();
  assert.deepEqual(await w.run(writeReq('config/paper-global.yml', 'new: 1\n')), { sha256: sha256('new: 1\n') });
  assert.equal(fs.readFileSync(w.p('config/paper-global.yml'), 'utf8'), 'new: 1\n');
});

test('expect_sha256: stale → conflict with the current hash; matching → written; deleted → conflict, not recreated', async () => {
  const w = makeWorld();
  const current = fs.readFileSync(w.p('server.properties'));
  const stale = await w.run(writeReq('server.properties', 'v2', { expectSha256: sha256('something else') }));
  assert.deepEqual(stale, {
    code: 'conflict',
    error: 'server.properties has changed since it was opened; reload it, or save again to overwrite',
    sha256: sha256(current),
  });
  assert.deepEqual(fs.readFileSync(w.p('server.properties')), current);
  assert.deepEqual(await w.run(writeReq('server.properties', 'v2', { expectSha256: sha256(current) })), { sha256: sha256('v2') });
  assert.equal(fs.readFileSync(w.p('server.properties'), 'utf8'), 'v2');

  const gone = await w.run(writeReq('gone.txt', 'x', { expectSha256: sha256('x') }));
  assert.deepEqual(gone, {
    code: 'conflict',
    error: 'gone.txt was deleted since it was opened; reload it, or save again to overwrite',
  });
  assert.equal(fs.existsSync(w.p('gone.txt')), false);

  // Over 1 MiB now: "has changed", no hash.
  fs.writeFileSync(w.p('huge.txt'), Buffer.alloc((1 << 20) + 1));
  const huge = await w.run(writeReq('huge.txt', 'x', { expectSha256: sha256('x') }));
  assert.equal(huge.code, 'conflict');
  assert.match(huge.error!, /^huge.txt has changed since it was opened/);
  assert.equal(huge.sha256 ?? '', '');
  // Through a link, the target's hash is what counts.
  fs.symlinkSync('server.properties', w.p('props-link'));
  assert.deepEqual(await w.run(writeReq('props-link', 'v3', { expectSha256: sha256('v2') })), { sha256: sha256('v3') });
});

test('create_only creates a new file; an existing file, folder or dangling link is exists and the link target is not created', async () => {
  const w = makeWorld();
  assert.deepEqual(await w.run(writeReq('brand-new.txt', 'n', { createOnly: true })), { sha256: sha256('n') });
  fs.symlinkSync('config/not-there.yml', w.p('dangling'));
  const before = snapshot(w.root);
  for (const p of ['server.properties', 'config', 'dangling', 'brand-new.txt', 'config/', './server.properties']) {
    const r = await w.run(writeReq(p, 'x', { createOnly: true }));
    assert.equal(r.code, 'exists', p);
    assert.equal(r.error, `${p} already exists`);
  }
  assert.deepEqual(snapshot(w.root), before);
  assert.equal(fs.existsSync(w.p('config/not-there.yml')), false);
});

test('temp file naming: random bytes failure is bad_path; the temp is created beside the target and removed on failure', async () => {
  const w = makeWorld();
  const r = await w.run(writeReq('server.properties', 'x'), {
    randomBytes: () => {
      throw new Error('no entropy');
    },
  });
  assert.equal(r.code, 'bad_path');
  assert.match(r.error!, /no entropy/);
  let seenTemp = '';
  const fsync = (fd: number) => {
    const link = fs.readlinkSync(`/proc/self/fd/${fd}`);
    if (path.basename(link).startsWith('.felis-edit-')) seenTemp = link;
    throw errnoError('ENOSPC');
  };
  await w.run(writeReq('config/paper.yml', 'y'), { fsync, randomBytes: () => Buffer.from('a1b2c3d4e5f6', 'hex') });
  assert.equal(seenTemp, w.p('config/.felis-edit-a1b2c3d4e5f6'));
  assert.deepEqual(noTemps(w.p('config')), []);
  // An existing file of the temp's name is never clobbered (O_EXCL): the write fails closed.
  fs.writeFileSync(w.p('.felis-edit-000000000000'), 'keep');
  const clash = await w.run(writeReq('server.properties', 'z'), { randomBytes: () => Buffer.alloc(6) });
  assert.equal(clash.code, 'bad_path');
  assert.equal(fs.readFileSync(w.p('.felis-edit-000000000000'), 'utf8'), 'keep');
  assert.deepEqual(
    tree(w.root).filter((n) => n.startsWith('.felis-edit-')),
    ['.felis-edit-000000000000'],
  );
});

test('NUL bytes in a write path are bad_path, and writes leak no fds', async () => {
  const w = makeWorld();
  const before = openFds();
  assert.equal((await w.run(writeReq('a\0b', 'x'))).code, 'bad_path');
  for (let i = 0; i < 10; i++) {
    await w.run(writeReq('server.properties', `v${i}`));
    await w.run(writeReq('../outside/x', 'x'));
    await w.run(writeReq('missing/x', 'x'));
    await w.run(writeReq('server.properties', 'v', { expectSha256: 'ff' }));
  }
  assert.equal(openFds(), before);
});
