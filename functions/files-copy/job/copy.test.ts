import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { openContext } from '../../../job/op-kit/context.ts';
import type { OpRequestOf } from '../../../job/runtime/types.ts';
import { errnoError, makeWorld, OUTSIDE_TEXT, sha256, snapshot, tree, type World } from '../../../job/testing/world.ts';
import { type CopyHooks, copyWith } from './copy.ts';

const WORKING = /^\.felis-(edit|unzip)-[0-9a-f]{12}$/;

function plugins(w: World): void {
  fs.mkdirSync(w.p('plugins/Essentials/data'), { recursive: true });
  fs.writeFileSync(w.p('plugins/a.jar'), 'jar bytes');
  fs.writeFileSync(w.p('plugins/Essentials/config.yml'), 'x: 1\n');
  fs.writeFileSync(w.p('plugins/Essentials/data/u.yml'), 'money: 5\n');
  fs.chmodSync(w.p('plugins/Essentials/config.yml'), 0o600);
  fs.chmodSync(w.p('plugins/Essentials/data'), 0o750);
}

/** Every regular file under `dir` with its SHA-256, by relative path. */
function hashes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of tree(dir)) if (!r.endsWith('/') && !r.endsWith('@')) out[r] = sha256(fs.readFileSync(path.join(dir, r)));
  return out;
}

/** Names anywhere under the root that are working names (what a failed copy must not leave). */
function workingLeft(root: string): string[] {
  return tree(root).filter((r) =>
    r
      .replace(/\/$/, '')
      .split('/')
      .some((c) => WORKING.test(c)),
  );
}

async function copyHooked(w: World, req: Omit<OpRequestOf<'copy'>, 'worldsRoot' | 'op'>, hooks: CopyHooks, opts: Parameters<typeof openContext>[1] = {}) {
  const ctx = openContext(w.root, opts);
  try {
    return copyWith(ctx, { op: 'copy', worldsRoot: w.root, ...req }, hooks);
  } finally {
    ctx.root.close();
  }
}

test('a file is copied beside it as `<name> copy<.ext>`, then `<name> copy 2<.ext>`; a sync copy says its sha256', async () => {
  const w = makeWorld();
  fs.writeFileSync(w.p('notes.txt'), 'hello');
  fs.chmodSync(w.p('notes.txt'), 0o640);
  const r1 = await w.run({ op: 'copy', path: 'notes.txt', maxSize: 1024 });
  assert.equal(r1.code, undefined, JSON.stringify(r1));
  assert.equal(r1.to, 'notes copy.txt');
  assert.equal(r1.sha256, sha256('hello'));
  assert.equal(r1.files, 1);
  assert.equal(r1.bytes, 5);
  assert.equal(fs.readFileSync(w.p('notes copy.txt'), 'utf8'), 'hello');
  assert.equal(fs.statSync(w.p('notes copy.txt')).mode & 0o777, 0o640);
  const r2 = await w.run({ op: 'copy', path: 'notes.txt' });
  assert.equal(r2.to, 'notes copy 2.txt');
  assert.equal(r2.sha256, undefined, 'a background copy does not hash');
  fs.writeFileSync(w.p('w.tar.gz'), 'gz');
  assert.equal((await w.run({ op: 'copy', path: 'w.tar.gz' })).to, 'w copy.tar.gz');
  assert.deepEqual(workingLeft(w.root), []);
});

test('a folder is copied recursively with the same bytes and modes, beside it or at to', async () => {
  const w = makeWorld();
  plugins(w);
  const r = await w.run({ op: 'copy', path: 'plugins' });
  assert.equal(r.code, undefined, JSON.stringify(r));
  assert.equal(r.to, 'plugins copy');
  assert.equal(r.files, 3);
  assert.equal(r.bytes, 9 + 5 + 9);
  assert.deepEqual(hashes(w.p('plugins copy')), hashes(w.p('plugins')));
  assert.deepEqual(tree(w.p('plugins copy')), tree(w.p('plugins')));
  assert.equal(fs.statSync(w.p('plugins copy/Essentials/config.yml')).mode & 0o777, 0o600);
  assert.equal(fs.statSync(w.p('plugins copy/Essentials/data')).mode & 0o777, 0o750);
  fs.mkdirSync(w.p('backups'));
  const t = await w.run({ op: 'copy', path: 'plugins', to: 'backups/plugins-old' });
  assert.equal(t.to, 'backups/plugins-old');
  assert.deepEqual(hashes(w.p('backups/plugins-old')), hashes(w.p('plugins')));
  assert.equal((await w.run({ op: 'copy', path: 'plugins' })).to, 'plugins copy 2');
  assert.deepEqual(workingLeft(w.root), []);
});

test('links inside are re-created when they stay inside the world; the others are skipped and counted', async () => {
  const w = makeWorld();
  plugins(w);
  fs.symlinkSync('a.jar', w.p('plugins/in-tree'));
  fs.symlinkSync('../server.properties', w.p('plugins/up'));
  fs.symlinkSync('../../outside/secret.txt', w.p('plugins/out'));
  fs.symlinkSync(path.join(w.outside, 'secret.txt'), w.p('plugins/abs'));
  fs.symlinkSync('nothing-here', w.p('plugins/dangling'));
  fs.symlinkSync('../config/paper-global.yml', w.p('plugins/secret-link'));
  const r = await w.run({ op: 'copy', path: 'plugins' });
  assert.equal(r.code, undefined, JSON.stringify(r));
  assert.equal(r.skipped, 4);
  assert.equal(fs.readlinkSync(w.p('plugins copy/in-tree')), 'a.jar');
  assert.equal(fs.readlinkSync(w.p('plugins copy/up')), '../server.properties');
  for (const n of ['out', 'abs', 'dangling', 'secret-link']) assert.equal(fs.existsSync(w.p(`plugins copy/${n}`)) || isLink(w.p(`plugins copy/${n}`)), false, n);
  // One level deeper, `../server.properties` leads elsewhere: judged from where the copy lands.
  fs.mkdirSync(w.p('deep'));
  const d = await w.run({ op: 'copy', path: 'plugins', to: 'deep/plugins' });
  assert.equal(d.skipped, 5, JSON.stringify(d));
  assert.equal(isLink(w.p('deep/plugins/up')), false);
  assert.equal(fs.readlinkSync(w.p('deep/plugins/in-tree')), 'a.jar');
  assert.ok(!JSON.stringify(snapshot(w.root)).includes(Buffer.from(OUTSIDE_TEXT).toString('base64')));
});

function isLink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

test('hard links become separate files; special files and the withheld file are never copied', async () => {
  const w = makeWorld();
  plugins(w);
  fs.linkSync(w.p('plugins/a.jar'), w.p('plugins/b.jar'));
  fs.linkSync(w.p('config/paper-global.yml'), w.p('plugins/stolen.yml'));
  execFileSync('mkfifo', [w.p('plugins/pipe')]);
  const sock = net.createServer().listen(w.p('plugins/s.sock'));
  await new Promise((r) => sock.once('listening', r));
  try {
    const r = await w.run({ op: 'copy', path: 'plugins' });
    assert.equal(r.code, undefined, JSON.stringify(r));
    assert.equal(r.skipped, 3, JSON.stringify(r)); // the secret's hard link, the fifo, the socket
    const a = fs.statSync(w.p('plugins copy/a.jar'));
    const b = fs.statSync(w.p('plugins copy/b.jar'));
    assert.notEqual(a.ino, b.ino);
    assert.equal(a.nlink, 1);
    for (const n of ['stolen.yml', 'pipe', 's.sock']) assert.equal(fs.existsSync(w.p(`plugins copy/${n}`)), false, n);
  } finally {
    sock.close();
  }
  // The config folder: everything but the secret; the secret itself is refused as a source.
  const c = await w.run({ op: 'copy', path: 'config' });
  assert.equal(c.code, undefined, JSON.stringify(c));
  assert.deepEqual(tree(w.p('config copy')), ['paper.yml']);
  for (const p of ['config/paper-global.yml', 'plugins/stolen.yml']) {
    const s = await w.run({ op: 'copy', path: p, to: 'leak.yml' });
    assert.equal(s.code, 'bad_path', JSON.stringify(s));
  }
  assert.equal(fs.existsSync(w.p('leak.yml')), false);
});

test('server.properties is copied redacted, as a zip or a download carries it', async () => {
  const w = makeWorld();
  const r = await w.run({ op: 'copy', path: 'server.properties', maxSize: 1 << 20 });
  assert.equal(r.code, undefined, JSON.stringify(r));
  const text = fs.readFileSync(w.p('server copy.properties'), 'utf8');
  assert.doesNotMatch(text, /hunter2/);
  assert.match(text, /motd=hi/);
  assert.equal(r.sha256, sha256(text));
});

test('working names are neither copied nor addressed', async () => {
  const w = makeWorld();
  plugins(w);
  fs.writeFileSync(w.p('plugins/.felis-edit-0123456789ab'), 'half a write');
  fs.mkdirSync(w.p('plugins/.felis-unzip-0123456789ab'));
  const r = await w.run({ op: 'copy', path: 'plugins' });
  assert.equal(r.code, undefined, JSON.stringify(r));
  assert.deepEqual(
    fs.readdirSync(w.p('plugins copy')).filter((n) => WORKING.test(n)),
    [],
  );
  assert.equal((await w.run({ op: 'copy', path: 'plugins', to: '.felis-edit-0123456789ab' })).code, 'bad_path');
  assert.equal((await w.run({ op: 'copy', path: 'plugins/.felis-edit-0123456789ab' })).code, 'not_found');
});

test('refusals: the root, escapes, an existing to, a missing parent, a missing source; nothing written', async () => {
  const w = makeWorld();
  plugins(w);
  fs.writeFileSync(w.p('taken'), '');
  const before = snapshot(w.root);
  const cases: [Partial<OpRequestOf<'copy'>>, string][] = [
    [{ path: '' }, 'bad_path'],
    [{ path: '.' }, 'bad_path'],
    [{ path: '../outside' }, 'bad_path'],
    [{ path: 'plugins', to: '../x' }, 'bad_path'],
    [{ path: 'plugins', to: '/tmp/x' }, 'bad_path'],
    [{ path: 'plugins', to: 'taken' }, 'exists'],
    [{ path: 'plugins', to: 'plugins' }, 'exists'],
    [{ path: 'plugins', to: 'no/such/folder' }, 'not_found'],
    [{ path: 'nope' }, 'not_found'],
  ];
  for (const [req, code] of cases) {
    const r = await w.run({ op: 'copy', path: '', ...req });
    assert.equal(r.code, code, `${JSON.stringify(req)}: ${JSON.stringify(r)}`);
  }
  assert.deepEqual(snapshot(w.root), before);
});

test('a sync copy (maxSize) refuses a folder or a bigger file with too_large before writing anything', async () => {
  const w = makeWorld();
  plugins(w);
  const before = snapshot(w.root);
  assert.equal((await w.run({ op: 'copy', path: 'plugins', maxSize: 1 << 20 })).code, 'too_large');
  assert.equal((await w.run({ op: 'copy', path: 'plugins/a.jar', maxSize: 3 })).code, 'too_large');
  assert.equal((await w.run({ op: 'copy', path: 'plugins/a.jar', maxSize: 9 })).code, undefined);
  delete before['plugins/a copy.jar'];
  const after = snapshot(w.root);
  delete after['plugins/a copy.jar'];
  assert.deepEqual(after, before);
});

test('space is checked before any byte is written: no_space with need and avail, nothing changed', async () => {
  const w = makeWorld();
  plugins(w);
  const before = snapshot(w.root);
  const r = await w.run({ op: 'copy', path: 'plugins' }, { statfs: () => ({ bavail: 4, bsize: 4096 }) });
  assert.equal(r.code, 'no_space', JSON.stringify(r));
  assert.ok(r.need! > r.avail!);
  assert.equal(r.avail, 4 * 4096);
  assert.deepEqual(snapshot(w.root), before);
  // Room enough: it goes.
  assert.equal((await w.run({ op: 'copy', path: 'plugins' }, { statfs: () => ({ bavail: 1 << 20, bsize: 4096 }) })).code, undefined);
});

test('all or nothing: a failure mid-copy leaves nothing at to and no working file', async () => {
  const w = makeWorld();
  plugins(w);
  const before = snapshot(w.root);
  let n = 0;
  const r = await copyHooked(
    w,
    { path: 'plugins', to: 'plugins-2' },
    {
      afterFile: () => {
        if (++n === 2) throw errnoError('EIO');
      },
    },
  );
  assert.equal(r.code, 'bad_path', JSON.stringify(r));
  assert.equal(n, 2);
  assert.deepEqual(snapshot(w.root), before);
  assert.deepEqual(workingLeft(w.root), []);
  const full = await copyHooked(
    w,
    { path: 'plugins/a.jar', to: 'a2.jar' },
    {
      afterFile: () =>
        void (() => {
          throw errnoError('ENOSPC');
        })(),
    },
  );
  assert.equal(full.code, 'no_space');
  assert.deepEqual(snapshot(w.root), before);
});

test('a copy the Job died in leaves only a hidden working folder, which the next mutation there sweeps', async () => {
  const w = makeWorld();
  plugins(w);
  const saved = path.join(w.base, 'saved');
  let work = '';
  // Stand-in for a kill just before the rename: keep the working folder as it was then.
  await copyHooked(
    w,
    { path: 'plugins' },
    {
      beforeRename: () => {
        work = fs.readdirSync(w.root).find((n) => WORKING.test(n))!;
        fs.cpSync(w.p(work), saved, { recursive: true });
      },
    },
  );
  assert.match(work, WORKING);
  fs.rmSync(w.p('plugins copy'), { recursive: true });
  fs.renameSync(saved, w.p(work));
  fs.chmodSync(w.p(work), 0o700);
  const l = await w.run({ op: 'list', path: '' });
  assert.deepEqual(
    l.entries!.filter((e) => WORKING.test(e.name)),
    [],
    'hidden from listings',
  );
  assert.equal((await w.run({ op: 'mkdir', path: 'new-folder' })).code, undefined);
  assert.equal(fs.existsSync(w.p(work)), false, 'swept by the next mutation in that folder');
});

test('progress lines count bytes up to the total, the last before the result', async () => {
  const w = makeWorld();
  plugins(w);
  const lines: string[] = [];
  const r = await w.run({ op: 'copy', path: 'plugins' }, { progress: (l) => lines.push(l) });
  assert.equal(r.code, undefined);
  assert.ok(lines.length >= 2, lines.join(''));
  assert.equal(lines.at(-1), 'FELIS-FILES-PROGRESS: {"done":23,"total":23}\n');
});

/** The progress lines as numbers. */
function progressOf(lines: string[]): Array<{ done: number; total: number }> {
  return lines.map((l) => JSON.parse(l.replace(/^FELIS-FILES-PROGRESS: /, '')) as { done: number; total: number });
}

test('a hard link to the root server.properties is planned at its redacted size: done never passes the total, and ends at it', async () => {
  const w = makeWorld();
  plugins(w);
  fs.linkSync(w.p('server.properties'), w.p('plugins/server.properties'));
  const lines: string[] = [];
  const r = await w.run({ op: 'copy', path: 'plugins' }, { progress: (l) => lines.push(l) });
  assert.equal(r.code, undefined, JSON.stringify(r));
  const written = fs.statSync(w.p('plugins copy/server.properties')).size;
  assert.doesNotMatch(fs.readFileSync(w.p('plugins copy/server.properties'), 'utf8'), /hunter2/);
  assert.notEqual(written, fs.statSync(w.p('server.properties')).size, 'the redacted form differs in size');
  const p = progressOf(lines);
  assert.ok(p.length >= 2, lines.join(''));
  for (const l of p) assert.ok(l.done <= l.total, lines.join(''));
  assert.deepEqual(p.at(-1), { done: 23 + written, total: 23 + written });
  assert.equal(r.bytes, 23 + written);
});

test('a file that grew since the plan counts no further than the total; a file left out since still ends the progress at it', async () => {
  const w = makeWorld();
  plugins(w);
  const lines: string[] = [];
  let first = true;
  const r = await copyHooked(
    w,
    { path: 'plugins' },
    {
      afterFile: (rel) => {
        // After the plan, before the other two files are copied: one grows, one goes.
        if (!first) return;
        first = false;
        const rest = ['a.jar', 'Essentials/config.yml', 'Essentials/data/u.yml'].filter((f) => f !== rel);
        fs.appendFileSync(w.p(`plugins/${rest[0]}`), 'y'.repeat(100));
        fs.unlinkSync(w.p(`plugins/${rest[1]}`));
      },
    },
    { progress: (l) => lines.push(l) },
  );
  assert.equal(r.code, undefined, JSON.stringify(r));
  const p = progressOf(lines);
  for (const l of p) assert.ok(l.done <= l.total, lines.join(''));
  assert.deepEqual(p.at(-1), { done: 23, total: 23 });
});

test('links are judged from where the copy really lands: a `to` through a link to a shallower folder leaves out a link that would climb out there', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('x/y/plugins/sub'), { recursive: true });
  fs.writeFileSync(w.p('x/server.properties'), 'x');
  fs.symlinkSync('../../../server.properties', w.p('x/y/plugins/sub/l')); // x/server.properties
  fs.mkdirSync(w.p('a/b'), { recursive: true });
  fs.writeFileSync(w.p('a/b/server.properties'), 'b');
  fs.symlinkSync('../..', w.p('a/b/top')); // the root
  const r = await w.run({ op: 'copy', path: 'x/y/plugins', to: 'a/b/top/p2' });
  assert.equal(r.code, undefined, JSON.stringify(r));
  // Really at p2/sub/l, `../../../` is above the root: left out, not kept as spelled from a/b/top/p2.
  assert.equal(isLink(w.p('p2/sub/l')), false);
  assert.equal(r.skipped, 1);
  // Copied as deep as it was, it stays inside and is kept.
  fs.mkdirSync(w.p('m/n'), { recursive: true });
  fs.writeFileSync(w.p('m/server.properties'), 'm');
  assert.equal((await w.run({ op: 'copy', path: 'x/y/plugins', to: 'm/n/p3' })).code, undefined);
  assert.equal(fs.readlinkSync(w.p('m/n/p3/sub/l')), '../../../server.properties');
});
