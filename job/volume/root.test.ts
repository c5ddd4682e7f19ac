import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { content, makeWorld, OUTSIDE_TEXT, openFds, snapshot, writeReq } from '../testing/world.ts';
import { ESCAPE, errCode, FsError, isNotExist, MAX_SYMLINK_HOPS, WorldRoot } from './root.ts';

const { O_RDONLY } = fs.constants;

function readVia(root: WorldRoot, p: string): string {
  const fd = root.openFile(p, O_RDONLY);
  try {
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return errCode(e);
  }
  return 'no error';
}

test('resolves plain paths, `.` and lexical `..` beneath the root', () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('a/b'), { recursive: true });
  fs.writeFileSync(w.p('a/b/f.txt'), 'F');
  const root = WorldRoot.open(w.root);
  try {
    assert.equal(readVia(root, 'a/b/f.txt'), 'F');
    assert.equal(readVia(root, './a//b/./f.txt'), 'F');
    assert.equal(readVia(root, 'a/b/../b/f.txt'), 'F');
    assert.equal(readVia(root, 'config/../a/b/f.txt'), 'F');
    assert.ok(root.stat('a/b/..').isDirectory());
    assert.equal(root.stat('a/..').ino, fs.statSync(w.root, { bigint: true }).ino);
    const parent = root.parentOf('a/b/f.txt');
    try {
      assert.equal(parent.name, 'f.txt');
      assert.equal(fs.fstatSync(parent.fd).ino, fs.statSync(w.p('a/b')).ino);
    } finally {
      parent.close();
    }
    fs.symlinkSync('server.properties', w.p('file-link'));
    assert.equal(
      codeOf(() => root.parentOf('file-link/.')),
      'ENOTDIR',
    );
    assert.equal(
      codeOf(() => root.openFile('server.properties/.', O_RDONLY)),
      'ENOTDIR',
    );
    const self = root.parentOf('a/b/.');
    try {
      assert.equal(self.name, null);
      assert.equal(fs.fstatSync(self.fd).ino, fs.statSync(w.p('a/b')).ino);
    } finally {
      self.close();
    }
  } finally {
    root.close();
  }
});

test('refuses escapes: leading `..`, climbing past the root, absolute paths, NUL bytes', () => {
  const w = makeWorld();
  const root = WorldRoot.open(w.root);
  try {
    for (const p of ['..', '../outside/secret.txt', 'config/../../outside/secret.txt', '../../../../../../etc/passwd', 'config/../..']) {
      assert.equal(
        codeOf(() => root.openFile(p, O_RDONLY)),
        ESCAPE,
        p,
      );
      assert.equal(
        codeOf(() => root.parentOf(p)),
        ESCAPE,
        p,
      );
    }
    // Like Go's os.Root, components are opened in order: a missing one is reported first.
    assert.equal(
      codeOf(() => root.openFile('missing/../..', O_RDONLY)),
      'ENOENT',
    );
    for (const p of ['/etc/passwd', `${w.outside}/secret.txt`, '/']) {
      assert.equal(
        codeOf(() => root.openFile(p, O_RDONLY)),
        ESCAPE,
        p,
      );
    }
    assert.equal(
      codeOf(() => root.openFile('config/pa\0per.yml', O_RDONLY)),
      'EINVAL',
    );
    assert.equal(
      codeOf(() => root.parentOf('\0')),
      'EINVAL',
    );
    // The message names the caller's path, never the internal /proc spelling.
    try {
      root.openFile('../outside/secret.txt', O_RDONLY);
      assert.fail('no error');
    } catch (e) {
      assert.ok(e instanceof FsError);
      assert.equal(e.message, '"../outside/secret.txt": the path leads out of the world');
    }
    try {
      root.openFile('config/missing/x', O_RDONLY);
      assert.fail('no error');
    } catch (e) {
      assert.ok(isNotExist(e));
      assert.doesNotMatch((e as Error).message, /proc/);
      // Plain words after the caller's path, no syscall name.
      assert.equal((e as Error).message, 'config/missing/x does not exist');
    }
  } finally {
    root.close();
  }
});

test('follows links that stay inside; refuses absolute targets and relative ones that climb out', () => {
  const w = makeWorld();
  fs.symlinkSync('paper.yml', w.p('config/rel.yml'));
  fs.symlinkSync('config', w.p('cfg-link'));
  fs.symlinkSync('../config/paper.yml', w.p('config/dotdot.yml'));
  fs.symlinkSync(w.p('config/paper.yml'), w.p('abs-inside.yml')); // absolute, even though it points inside
  fs.symlinkSync('../outside', w.p('rel-out'));
  fs.symlinkSync(w.outside, w.p('abs-out'));
  fs.symlinkSync('../../outside/secret.txt', w.p('config/climb.txt'));
  const root = WorldRoot.open(w.root);
  try {
    assert.equal(readVia(root, 'config/rel.yml'), 'paper: true\n');
    assert.equal(readVia(root, 'cfg-link/paper.yml'), 'paper: true\n');
    assert.equal(readVia(root, 'cfg-link/rel.yml'), 'paper: true\n');
    assert.equal(readVia(root, 'config/dotdot.yml'), 'paper: true\n');
    // `..` after a directory link pops to the link's parent's view of the target (config → root).
    assert.equal(readVia(root, 'cfg-link/../server.properties').startsWith('motd=hi'), true);
    assert.ok(root.lstat('cfg-link').isSymbolicLink());
    assert.ok(root.stat('cfg-link').isDirectory());
    for (const p of ['abs-inside.yml', 'rel-out/secret.txt', 'abs-out/secret.txt', 'config/climb.txt', 'rel-out', 'abs-out']) {
      assert.equal(
        codeOf(() => root.openFile(p, O_RDONLY)),
        ESCAPE,
        p,
      );
      assert.equal(
        codeOf(() => root.stat(p)),
        ESCAPE,
        p,
      );
    }
    // lstat and parentOf do not follow the final component, so they see the link itself.
    assert.ok(root.lstat('abs-out').isSymbolicLink());
    assert.equal(
      codeOf(() => root.parentOf('abs-out/secret.txt')),
      ESCAPE,
    );
  } finally {
    root.close();
  }
});

test(`link hops: a chain of ${MAX_SYMLINK_HOPS} resolves, one more is ELOOP, a loop is ELOOP`, () => {
  const w = makeWorld();
  fs.writeFileSync(w.p('target.txt'), 'T');
  // l1 → target, l2 → l1, ... l9 → l8
  fs.symlinkSync('target.txt', w.p('l1'));
  for (let i = 2; i <= MAX_SYMLINK_HOPS + 1; i++) fs.symlinkSync(`l${i - 1}`, w.p(`l${i}`));
  fs.symlinkSync('loop-b', w.p('loop-a'));
  fs.symlinkSync('loop-a', w.p('loop-b'));
  const root = WorldRoot.open(w.root);
  try {
    assert.equal(readVia(root, `l${MAX_SYMLINK_HOPS}`), 'T');
    assert.equal(
      codeOf(() => root.openFile(`l${MAX_SYMLINK_HOPS + 1}`, O_RDONLY)),
      'ELOOP',
    );
    assert.equal(
      codeOf(() => root.openFile('loop-a', O_RDONLY)),
      'ELOOP',
    );
    assert.equal(
      codeOf(() => root.openDir('loop-a')),
      'ELOOP',
    );
  } finally {
    root.close();
  }
});

test('trailing slash: the final component must be a directory (links to one are followed)', () => {
  const w = makeWorld();
  fs.symlinkSync('config', w.p('cfg-link'));
  const root = WorldRoot.open(w.root);
  try {
    assert.equal(
      codeOf(() => root.openFile('server.properties/', O_RDONLY)),
      'ENOTDIR',
    );
    const fd = root.openFile('cfg-link/', O_RDONLY);
    assert.ok(fs.fstatSync(fd).isDirectory());
    fs.closeSync(fd);
    assert.equal(
      codeOf(() => root.openDir('server.properties')),
      'ENOTDIR',
    );
    // A link whose target ends in "/" or "/." names a directory: a file there is ENOTDIR.
    fs.symlinkSync('server.properties/', w.p('slash-link'));
    fs.symlinkSync('server.properties/.', w.p('dot-link'));
    assert.equal(
      codeOf(() => root.openFile('slash-link', O_RDONLY)),
      'ENOTDIR',
    );
    assert.equal(
      codeOf(() => root.openFile('dot-link', O_RDONLY)),
      'ENOTDIR',
    );
    fs.symlinkSync('config/.', w.p('cfg-dot'));
    assert.ok(root.stat('cfg-dot').isDirectory());
  } finally {
    root.close();
  }
});

test('255-byte names work, 256-byte names are an OS error, 100 nested folders resolve', () => {
  const w = makeWorld();
  const root = WorldRoot.open(w.root);
  try {
    const ok = 'n'.repeat(255);
    fs.writeFileSync(w.p(ok), 'long');
    assert.equal(readVia(root, ok), 'long');
    assert.equal(
      codeOf(() => root.openFile('n'.repeat(256), O_RDONLY)),
      'ENAMETOOLONG',
    );
    assert.equal(
      codeOf(() => root.parentOf(`${'d'.repeat(256)}/x`)),
      'ENAMETOOLONG',
    );

    const deep = Array.from({ length: 100 }, (_, i) => `d${i}`).join('/');
    fs.mkdirSync(w.p(deep), { recursive: true });
    fs.writeFileSync(w.p(`${deep}/leaf.txt`), 'deep');
    const before = openFds();
    assert.equal(readVia(root, `${deep}/leaf.txt`), 'deep');
    const parent = root.parentOf(`${deep}/leaf.txt`);
    assert.equal(parent.name, 'leaf.txt');
    parent.close();
    // `..` all the way back up, lexically, and down again.
    const up = Array.from({ length: 100 }, () => '..').join('/');
    assert.equal(readVia(root, `${deep}/${up}/server.properties`).startsWith('motd'), true);
    assert.equal(
      codeOf(() => root.openFile(`${deep}/${up}/../x`, O_RDONLY)),
      ESCAPE,
    );
    assert.equal(openFds(), before);
  } finally {
    root.close();
  }
});

test('no fd leaks: every method, on success and on failure, closes what it opened', () => {
  const w = makeWorld();
  fs.symlinkSync('config', w.p('cfg-link'));
  fs.symlinkSync(w.outside, w.p('abs-out'));
  const before = openFds();
  const root = WorldRoot.open(w.root);
  assert.equal(openFds(), before + 1);
  for (let i = 0; i < 20; i++) {
    for (const p of ['cfg-link/paper.yml', 'abs-out/secret.txt', 'missing/x', 'config/paper.yml/x', '../x', 'cfg-link/../x']) {
      try {
        fs.closeSync(root.openFile(p, O_RDONLY));
      } catch {
        // counted below
      }
      try {
        root.stat(p);
      } catch {
        // counted below
      }
      try {
        root.parentOf(p).close();
      } catch {
        // counted below
      }
    }
  }
  assert.equal(openFds(), before + 1);
  root.close();
  assert.equal(openFds(), before);
  assert.throws(() => root.stat('config'), /closed/);
});

test('a directory swapped for a link to outside BETWEEN two steps: the walk keeps the directory it opened', () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('a'));
  fs.writeFileSync(w.p('a/x'), 'inside');
  fs.writeFileSync(path.join(w.outside, 'x'), OUTSIDE_TEXT);
  let swapped = false;
  const swap = (step: string) => {
    if (step === 'a/x' && !swapped) {
      swapped = true;
      fs.renameSync(w.p('a'), w.p('a.real'));
      fs.symlinkSync(w.outside, w.p('a'));
    }
  };
  const root = WorldRoot.open(w.root, { beforeStep: swap });
  try {
    // `a` was opened before the swap; `x` is looked up in that directory, now named a.real.
    assert.equal(readVia(root, 'a/x'), 'inside');
    assert.ok(swapped);
    // A fresh resolution sees the link and refuses it.
    assert.equal(
      codeOf(() => root.openFile('a/x', O_RDONLY)),
      ESCAPE,
    );
  } finally {
    root.close();
  }
});

test('a directory swapped for a link BEFORE its step is seen as a link and refused', () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('a'));
  fs.writeFileSync(w.p('a/x'), 'inside');
  fs.writeFileSync(path.join(w.outside, 'x'), OUTSIDE_TEXT);
  for (const target of [w.outside, '../outside']) {
    fs.rmSync(w.p('a'), { recursive: true, force: true });
    fs.mkdirSync(w.p('a'));
    const root = WorldRoot.open(w.root, {
      beforeStep: (step) => {
        if (step === 'a' && fs.lstatSync(w.p('a')).isDirectory()) {
          fs.rmSync(w.p('a'), { recursive: true });
          fs.symlinkSync(target, w.p('a'));
        }
      },
    });
    try {
      assert.equal(
        codeOf(() => root.openFile('a/x', O_RDONLY)),
        ESCAPE,
        target,
      );
    } finally {
      root.close();
    }
  }
});

test('ops under a mid-operation swap neither read nor write outside', async () => {
  const w = makeWorld();
  const outsideX = path.join(w.outside, 'x');
  fs.writeFileSync(outsideX, OUTSIDE_TEXT);
  const reset = () => {
    fs.rmSync(w.p('a'), { recursive: true, force: true });
    fs.rmSync(w.p('a.real'), { recursive: true, force: true });
    fs.mkdirSync(w.p('a'));
    fs.writeFileSync(w.p('a/x'), 'inside');
  };
  const swapAt = (at: string) => {
    let done = false;
    return (step: string) => {
      if (step === at && !done) {
        done = true;
        fs.renameSync(w.p('a'), w.p('a.real'));
        fs.symlinkSync(w.outside, w.p('a'));
      }
    };
  };
  const outsideBefore = snapshot(w.outside);

  reset();
  const r = await w.run({ op: 'read', path: 'a/x' }, { beforeStep: swapAt('a/x') });
  assert.equal(content(r).toString(), 'inside');

  reset();
  const wr = await w.run(writeReq('a/x', 'written'), { beforeStep: swapAt('a/x') });
  assert.equal(wr.code, undefined, JSON.stringify(wr));
  assert.equal(fs.readFileSync(w.p('a.real/x'), 'utf8'), 'written');

  reset();
  const d = await w.run({ op: 'delete', path: 'a/x' }, { beforeStep: swapAt('a/x') });
  assert.equal(d.code, undefined);
  assert.equal(fs.existsSync(w.p('a.real/x')), false);

  reset();
  const m = await w.run({ op: 'mkdir', path: 'a/new' }, { beforeStep: swapAt('a/new') });
  assert.equal(m.code, undefined);
  assert.ok(fs.statSync(w.p('a.real/new')).isDirectory());

  reset();
  const l = await w.run({ op: 'list', path: 'a/' }, { beforeStep: swapAt('a') });
  // Swapped before `a` was opened: the link is seen and refused.
  assert.equal(l.code, 'bad_path');

  reset();
  const rn = await w.run({ op: 'rename', path: 'a/x', to: 'a/y' }, { beforeStep: swapAt('a/x') });
  // The destination is resolved after the swap: `a` is now a link leading out, so it is refused.
  assert.equal(rn.code, 'bad_path', JSON.stringify(rn));
  assert.ok(fs.existsSync(w.p('a.real/x')));

  reset();
  const rn2 = await w.run({ op: 'rename', path: 'a/x', to: 'moved' }, { beforeStep: swapAt('a/x') });
  assert.equal(rn2.code, undefined, JSON.stringify(rn2));
  assert.equal(fs.readFileSync(w.p('moved'), 'utf8'), 'inside');

  assert.deepEqual(snapshot(w.outside), outsideBefore);
});

test('race: `a` flipping between a real folder and a link to outside never leaks or touches outside', async () => {
  const w = makeWorld();
  const outsideX = path.join(w.outside, 'x');
  fs.writeFileSync(outsideX, OUTSIDE_TEXT);
  fs.mkdirSync(w.p('a.real'));
  fs.writeFileSync(w.p('a.real/x'), 'inside');
  fs.symlinkSync(w.outside, w.p('a.link'));
  const outsideBefore = snapshot(w.outside);

  const flag = new SharedArrayBuffer(4);
  const stop = new Int32Array(flag);
  const worker = new Worker(
    `
    const { workerData, parentPort } = require('node:worker_threads');
    const fs = require('node:fs');
    const { root, flag, max } = workerData;
    const stop = new Int32Array(flag);
    const a = root + '/a', real = root + '/a.real', link = root + '/a.link';
    parentPort.postMessage('started');
    let i = 0;
    for (; i < max && Atomics.load(stop, 0) === 0; i++) {
      try { fs.renameSync(real, a); } catch {}
      try { fs.renameSync(a, real); } catch {}
      try { fs.renameSync(link, a); } catch {}
      try { fs.renameSync(a, link); } catch {}
    }
    parentPort.postMessage(i);
    `,
    { eval: true, workerData: { root: w.root, flag, max: 400_000 } },
  );
  // The worker says when it starts flipping, and later how many flips it made. On a loaded machine
  // it can start late, so the reads begin only once it runs.
  const started = new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
  await started;
  const flips = new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });

  let naiveLeaks = 0;
  const seen = { inside: 0, refused: 0, missing: 0, written: 0 };
  try {
    // At least 1500 rounds, and more (bounded) until every outcome has been seen at least once.
    const sawAll = () => seen.inside > 0 && seen.refused > 0 && seen.written > 0 && naiveLeaks > 0;
    for (let i = 0; i < 20_000 && (i < 1500 || !sawAll()); i++) {
      const r = await w.run({ op: 'read', path: 'a/x' });
      if (r.code === undefined) {
        const text = content(r).toString();
        assert.notEqual(text, OUTSIDE_TEXT, 'read returned the outside file');
        assert.ok(text === 'inside' || text.startsWith('w'), text);
        seen.inside++;
      } else if (r.code === 'not_found') seen.missing++;
      else {
        assert.equal(r.code, 'bad_path');
        seen.refused++;
      }
      const wr = await w.run(writeReq('a/x', `w${i}`));
      if (wr.code === undefined) seen.written++;
      else assert.ok(wr.code === 'bad_path' || wr.code === 'not_found', JSON.stringify(wr));
      // The same race through plain path resolution does reach outside: the test can see a leak.
      try {
        if (fs.readFileSync(w.p('a/x'), 'utf8') === OUTSIDE_TEXT) naiveLeaks++;
      } catch {
        // missing at that instant
      }
    }
  } finally {
    Atomics.store(stop, 0, 1);
  }
  const n = await flips;
  await worker.terminate();
  assert.ok(n > 0);
  assert.deepEqual(snapshot(w.outside), outsideBefore, 'outside was modified');
  assert.equal(fs.readFileSync(outsideX, 'utf8'), OUTSIDE_TEXT);
  assert.ok(seen.inside > 0 && seen.refused > 0 && seen.written > 0, JSON.stringify(seen));
  assert.ok(naiveLeaks > 0, 'the flipping never exposed outside to a naive reader; the race did not happen');
  // Whatever was written landed inside.
  assert.deepEqual(fs.readdirSync(w.p('a.real')), ['x']);
  assert.match(fs.readFileSync(w.p('a.real/x'), 'utf8'), /^(inside|w\d+)$/);
});

test('open refuses a missing root (an infrastructure error, not a result)', () => {
  assert.throws(() => WorldRoot.open('/nonexistent/felis-root'), { code: 'ENOENT' });
  const w = makeWorld();
  assert.throws(() => WorldRoot.open(w.p('server.properties')), { code: 'ENOTDIR' });
});
