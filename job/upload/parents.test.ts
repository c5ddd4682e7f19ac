import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { openContext } from '../op-kit/context.ts';
import type { ExecuteOptions } from '../runtime/types.ts';
import { makeWorld, sha256, snapshot, tree } from '../testing/world.ts';
import { type Landing, landUpload, type UploadRequest } from './land.ts';

/** Lands `body` at `path` with `parents=true` (unless told otherwise) in a fresh context. */
async function land(root: string, path: string, body: Buffer, o: Partial<UploadRequest> & { opts?: ExecuteOptions; sha?: string } = {}): Promise<Landing> {
  const { opts, sha, ...req } = o;
  const ctx = openContext(root, opts);
  try {
    return await landUpload(ctx, { path, size: body.length, sha256: sha ?? sha256(body), overwrite: false, parents: true, ...req }, Readable.from([body]));
  } finally {
    ctx.root.close();
  }
}

const code = (l: Landing) => (l.kind === 'result' ? l.result.code : `transfer:${l.reason}`);

test('parents=true makes every missing folder of a deep path, 0755 and handed to the game, then places the file', async () => {
  const w = makeWorld();
  const chowns: string[] = [];
  const body = Buffer.from('motd=deep\n');
  const old = process.umask(0o022);
  let l: Landing;
  try {
    l = await land(w.root, 'plugins/Pack/data/deep/a.yml', body, {
      opts: {
        chown: (p, uid, gid) => {
          chowns.push(`${fs.realpathSync(p)}:${uid}:${gid}`);
        },
      },
    });
  } finally {
    process.umask(old);
  }
  assert.deepEqual(l, { kind: 'result', result: { sha256: sha256(body) } });
  assert.deepEqual(fs.readFileSync(w.p('plugins/Pack/data/deep/a.yml')), body);
  for (const d of ['plugins', 'plugins/Pack', 'plugins/Pack/data', 'plugins/Pack/data/deep']) assert.equal(fs.statSync(w.p(d)).mode & 0o777, 0o755, d);
  // Each new folder once, top down, then the file; an existing folder is not touched.
  assert.deepEqual(
    chowns.slice(0, 4),
    ['plugins', 'plugins/Pack', 'plugins/Pack/data', 'plugins/Pack/data/deep'].map((d) => `${w.p(d)}:1000:1000`),
  );
  assert.equal(chowns.length, 5);
});

test('existing folders are kept as they are; only the missing rest is made', async () => {
  const w = makeWorld();
  fs.chmodSync(w.p('config'), 0o700);
  const chowns: string[] = [];
  const l = await land(w.root, 'config/new/x.yml', Buffer.from('x'), { opts: { chown: (p) => void chowns.push(fs.realpathSync(p)) } });
  assert.equal(code(l), undefined);
  assert.equal(fs.statSync(w.p('config')).mode & 0o777, 0o700, 'an existing folder keeps its mode');
  assert.deepEqual(chowns.slice(0, 1), [w.p('config/new')]);
});

test('without parents a missing folder stays not_found, and nothing is made', async () => {
  const w = makeWorld();
  const before = tree(w.root);
  const l = await land(w.root, 'plugins/Pack/a.yml', Buffer.from('x'), { parents: false });
  assert.deepEqual(l, { kind: 'result', result: { code: 'not_found', error: 'folder plugins/Pack does not exist' } });
  assert.deepEqual(tree(w.root), before);
});

test('a parent that is a file (the withheld file too) is bad_path, and nothing is made below or beside it', async () => {
  const w = makeWorld();
  const before = tree(w.root);
  const props = await land(w.root, 'server.properties/x/a.yml', Buffer.from('x'));
  assert.deepEqual(props, { kind: 'result', result: { code: 'bad_path', error: 'server.properties is a file, not a folder; no folder was created in its place' } });
  const secret = await land(w.root, 'config/paper-global.yml/a.yml', Buffer.from('x'));
  assert.equal(code(secret), 'bad_path');
  assert.deepEqual(tree(w.root), before);
  // Deeper: the folders above the file were made (they are harmless), none below it.
  fs.mkdirSync(w.p('a'));
  fs.writeFileSync(w.p('a/file'), 'f');
  const deep = await land(w.root, 'b/c/../../a/file/d/e.txt', Buffer.from('x'));
  assert.equal(code(deep), 'bad_path');
  assert.equal(fs.existsSync(w.p('a/file/d')), false);
  assert.equal(fs.readFileSync(w.p('a/file'), 'utf8'), 'f');
});

test('a link in the middle: leading out, to nothing or to a file is refused and nothing is made through it; to a folder inside it is followed, as mkdir follows it', async () => {
  const w = makeWorld();
  fs.symlinkSync(w.outside, w.p('out-abs'));
  fs.symlinkSync('../outside', w.p('out-rel'));
  fs.symlinkSync('nowhere', w.p('dangling'));
  fs.symlinkSync('server.properties', w.p('to-file'));
  fs.symlinkSync('config', w.p('to-config'));
  const outside = snapshot(w.outside);
  for (const p of ['out-abs/new/a.txt', 'out-rel/new/a.txt', 'out-rel/a.txt']) {
    const l = await land(w.root, p, Buffer.from('x'));
    assert.equal(code(l), 'bad_path', p);
  }
  assert.deepEqual(snapshot(w.outside), outside, 'nothing outside the world was made or written');
  const dangling = await land(w.root, 'dangling/new/a.txt', Buffer.from('x'));
  assert.deepEqual(dangling, { kind: 'result', result: { code: 'bad_path', error: 'dangling is a link to nothing; no folder is created through a link' } });
  assert.equal(fs.existsSync(w.p('nowhere')), false, "the link's target is not created");
  const toFile = await land(w.root, 'to-file/new/a.txt', Buffer.from('x'));
  assert.deepEqual(toFile, { kind: 'result', result: { code: 'bad_path', error: 'to-file is a link to a file, not a folder' } });
  assert.equal(code(await land(w.root, 'to-config/sub/a.txt', Buffer.from('in'))), undefined);
  assert.equal(fs.readFileSync(w.p('config/sub/a.txt'), 'utf8'), 'in');
  assert.ok(fs.lstatSync(w.p('to-config')).isSymbolicLink(), 'the link itself is left as it is');
});

test('.. out of the world and working names are bad_path, and nothing is made anywhere', async () => {
  const w = makeWorld();
  const inside = tree(w.root);
  const outside = snapshot(w.outside);
  for (const p of ['../outside/new/a.txt', 'a/../../outside/new/a.txt', '../a.txt', 'x/.felis-edit-0123456789ab/a.txt', '.felis-edit-0123456789ab/y/a.txt']) {
    const l = await land(w.root, p, Buffer.from('x'));
    assert.equal(code(l), 'bad_path', p);
  }
  assert.deepEqual(tree(w.root), inside);
  assert.deepEqual(snapshot(w.outside), outside);
});

test('an upload the volume cannot hold makes no folder; one whose bytes are wrong keeps the folders it made and leaves no file', async () => {
  const w = makeWorld();
  const before = tree(w.root);
  const full = await land(w.root, 'big/dir/a.bin', Buffer.alloc(100), { opts: { statfs: () => ({ bavail: 10n, bsize: 1n }) } });
  assert.equal(code(full), 'no_space');
  assert.deepEqual(tree(w.root), before, 'refused before any folder was made');
  const lie = await land(w.root, 'kept/dir/a.bin', Buffer.from('abc'), { sha: sha256('abd') });
  assert.equal(code(lie), 'transfer:digest');
  assert.deepEqual(
    tree(w.root).filter((p) => p.startsWith('kept')),
    ['kept/', 'kept/dir/'],
    'the folders stay (mkdir -p), the file was never placed',
  );
  // The retry lands in them.
  assert.equal(code(await land(w.root, 'kept/dir/a.bin', Buffer.from('abc'))), undefined);
  assert.equal(fs.readFileSync(w.p('kept/dir/a.bin'), 'utf8'), 'abc');
});

test('a path that names a folder (a trailing / or /.) is refused with no folder made', async () => {
  const w = makeWorld();
  const before = tree(w.root);
  // Refused as without parents (the folder is missing), and nothing is made for it.
  for (const p of ['new/dir/', 'new/dir/.', 'new/']) assert.equal(code(await land(w.root, p, Buffer.from('x'))), 'not_found', p);
  assert.deepEqual(tree(w.root), before);
  assert.equal(code(await land(w.root, 'config/', Buffer.from('x'), { overwrite: true })), 'bad_path', 'a folder is no file');
});

test('an existing target with parents is still file_exists without overwrite, and a folder at the target is no file', async () => {
  const w = makeWorld();
  assert.equal(code(await land(w.root, 'config/paper.yml', Buffer.from('x'))), 'exists');
  assert.equal(code(await land(w.root, 'config', Buffer.from('x'), { overwrite: true })), 'bad_path');
  assert.equal(fs.readFileSync(w.p('config/paper.yml'), 'utf8'), 'paper: true\n');
});
