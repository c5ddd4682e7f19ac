/**
 * The withheld file's content stays withheld whatever happens to its inode: hard links made before
 * an API delete or replace, before a game-side atomic save (write a temp file, rename it over), a
 * hard link inside a folder being zipped or downloaded, a tampered ledger.
 */

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { forgeZip } from '../archive/forge.test-kit.ts';
import { packToStream, resolveSource } from '../archive/pack.ts';
import { isRefusal, openDownload } from '../export/open.ts';
import { content, makeWorld, SECRET_TEXT, sha256, type World, writeReq } from '../testing/world.ts';
import { WorldRoot } from '../volume/root.ts';
import { LEDGER_DIR, LEDGER_FILE, MAX_LEDGER_ENTRIES, parseLedger } from './withheld.ts';

const SECRET = 'config/paper-global.yml';
const ROTATED = 'proxies:\n  velocity:\n    secret: "rotated-QWERTY"\n';

/** Paper's own save at start: the new bytes in a temp file beside it, renamed over it. */
function paperSave(w: World, text: string): void {
  fs.writeFileSync(w.p('config/paper-global.yml.tmp'), text);
  fs.renameSync(w.p('config/paper-global.yml.tmp'), w.p(SECRET));
}

/** Everything a caller could get of `name`: read, list size, zip, download (file and folder). */
async function exposures(w: World, name: string): Promise<string[]> {
  const out: string[] = [];
  const r = await w.run({ op: 'read', path: name });
  if (r.code !== 'bad_path') out.push(`read: ${JSON.stringify(r)}`);
  if (r.content && content(r).includes('XYZZY')) out.push('read content');
  const folder = path.posix.dirname(name);
  const base = path.posix.basename(name);
  const l = await w.run({ op: 'list', path: folder === '.' ? '' : folder });
  const e = l.entries?.find((x) => x.name === base);
  if (e && e.size !== 0) out.push(`list size ${e.size}`);
  const root = WorldRoot.open(w.root);
  try {
    const d = openDownload(root, name, false);
    if (!isRefusal(d)) out.push(`download of the file: ${d.kind}`);
    if (!isRefusal(d) && d.kind === 'file') fs.closeSync(d.fd);
    for (const src of ['.' === folder ? null : folder, 'config'].filter((x): x is string => x !== null)) {
      const s = resolveSource(root, src);
      assert.ok('isDir' in s, JSON.stringify(s));
      const sink = new PassThrough();
      const chunks: Buffer[] = [];
      sink.on('data', (c: Buffer) => chunks.push(c));
      await packToStream(root, s, sink);
      const zip = Buffer.concat(chunks);
      if (zip.includes(Buffer.from('XYZZY')) || zip.includes(Buffer.from(base))) out.push(`zip of ${src} packs ${base}`);
    }
  } finally {
    root.close();
  }
  // The zip op, of the folder (the archive lands beside it) and of the file itself.
  for (const src of [folder === '.' ? null : folder, name].filter((x): x is string => x !== null)) {
    const z = await w.run({ op: 'zip', path: src, to: 'out.zip' });
    if (z.code !== undefined) {
      if (src !== name) out.push(`zip of ${src}: ${JSON.stringify(z)}`);
      continue;
    }
    if (src === name) out.push('zip op of the file itself allowed');
    const at = w.p(path.posix.join(path.posix.dirname(src), 'out.zip'));
    if (fs.readFileSync(at).includes(Buffer.from('XYZZY'))) out.push(`zip op of ${src} packs the secret`);
    fs.rmSync(at);
  }
  return out;
}

test('delete of the withheld file is refused while another hard link to it exists; the link stays withheld; deleting the link is allowed', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('plugins'));
  fs.linkSync(w.p(SECRET), w.p('plugins/stolen.yml'));
  const del = await w.run({ op: 'delete', path: SECRET });
  assert.equal(del.code, 'withheld_linked', JSON.stringify(del));
  assert.match(del.error!, /other link/);
  assert.equal(fs.readFileSync(w.p(SECRET), 'utf8'), SECRET_TEXT);
  // A folder that holds it: the same refusal, and nothing in it is gone.
  assert.equal((await w.run({ op: 'delete', path: 'config' })).code, 'withheld_linked');
  assert.ok(fs.existsSync(w.p('config/paper.yml')));
  assert.deepEqual(await exposures(w, 'plugins/stolen.yml'), []);
  // The other name is an ordinary one: it can go, and then the file itself can.
  assert.deepEqual(await w.run({ op: 'delete', path: 'plugins/stolen.yml' }), {});
  assert.deepEqual(await w.run({ op: 'delete', path: SECRET }), {});
});

test('the old content stays withheld at a hard link after the withheld file was deleted while it had one link (link made behind the API afterwards is the same inode: gone)', async () => {
  // A hard link planted after a Job saw the file, then the original deleted by the game: the
  // content is remembered, so the link reads as withheld.
  const w = makeWorld();
  assert.equal((await w.run({ op: 'mkdir', path: 'plugins' })).code, undefined);
  fs.linkSync(w.p(SECRET), w.p('plugins/stolen.yml'));
  fs.rmSync(w.p(SECRET));
  assert.deepEqual(await exposures(w, 'plugins/stolen.yml'), []);
});

test('a replace of the withheld file through the API (our atomic write) is refused while it has another link', async () => {
  const w = makeWorld();
  fs.linkSync(w.p(SECRET), w.p('stolen.yml'));
  const r = await w.run(writeReq(SECRET, ROTATED));
  assert.equal(r.code, 'withheld_linked', JSON.stringify(r));
  assert.equal(fs.readFileSync(w.p(SECRET), 'utf8'), SECRET_TEXT);
  // Through a symbolic link to it: the same.
  fs.symlinkSync('config/paper-global.yml', w.p('sym.yml'));
  assert.equal((await w.run(writeReq('sym.yml', ROTATED))).code, 'withheld_linked');
  assert.deepEqual(await exposures(w, 'stolen.yml'), []);
  // Writing the other name replaces only that name: allowed.
  assert.deepEqual(await w.run(writeReq('stolen.yml', 'mine\n')), { sha256: sha256('mine\n') });
  assert.deepEqual(await w.run(writeReq(SECRET, ROTATED)), { sha256: sha256(ROTATED) });
});

test('after a replace with one link, a hard link planted earlier by hand still reads as withheld (the old content is remembered)', async () => {
  const w = makeWorld();
  // The write's Job sees the current content before replacing it.
  assert.deepEqual(await w.run(writeReq(SECRET, ROTATED)), { sha256: sha256(ROTATED) });
  paperSave(w, SECRET_TEXT); // an admin puts the old secret back by hand
  assert.equal((await w.run({ op: 'mkdir', path: 'x' })).code, undefined);
  fs.linkSync(w.p(SECRET), w.p('stolen.yml'));
  paperSave(w, ROTATED);
  assert.deepEqual(await exposures(w, 'stolen.yml'), []);
});

test('a hard link made before the game saves the file (temp file renamed over it) stays withheld: same content and rotated content', async () => {
  const w = makeWorld();
  fs.linkSync(w.p(SECRET), w.p('same.yml'));
  paperSave(w, SECRET_TEXT); // Paper rewrites the same settings on start
  assert.deepEqual(await exposures(w, 'same.yml'), []);

  const v = makeWorld();
  // Any read-write Job that runs sees the file and remembers its content.
  assert.equal((await v.run({ op: 'mkdir', path: 'plugins' })).code, undefined);
  fs.linkSync(v.p(SECRET), v.p('plugins/old.yml'));
  paperSave(v, ROTATED);
  assert.deepEqual(await exposures(v, 'plugins/old.yml'), []);
  // The remembered content is no size either in a listing, and a conditional write cannot test it.
  const guess = await v.run(writeReq('plugins/old.yml', 'x', { expectSha256: sha256(SECRET_TEXT) }));
  assert.equal(guess.code, 'bad_path', JSON.stringify(guess));
  const wrong = await v.run(writeReq('plugins/old.yml', 'x', { expectSha256: sha256('wrong') }));
  assert.equal(wrong.code, 'bad_path');
  assert.equal(wrong.sha256, undefined);
});

test('the ledger is not addressable, and one planted as a symlink, a hard link to the secret, a FIFO or a folder is never followed and is rebuilt', async () => {
  const w = makeWorld();
  assert.equal((await w.run({ op: 'mkdir', path: 'a' })).code, undefined);
  const ledger = w.p(`${LEDGER_DIR}/${LEDGER_FILE}`);
  assert.ok(fs.lstatSync(ledger).isFile());
  assert.doesNotMatch(fs.readFileSync(ledger, 'utf8'), /XYZZY/);
  assert.equal((await w.run({ op: 'read', path: `${LEDGER_DIR}/${LEDGER_FILE}` })).code, 'not_found');
  assert.equal(
    (await w.run({ op: 'list', path: '' })).entries!.some((e) => e.name === LEDGER_DIR),
    false,
  );
  assert.equal((await w.run({ op: 'delete', path: LEDGER_DIR })).code, 'not_found');

  const outsideTarget = path.join(w.outside, 'target.txt');
  fs.writeFileSync(outsideTarget, 'outside\n');
  const plants: Array<[string, () => void]> = [
    ['a symlink out', () => fs.symlinkSync(outsideTarget, ledger)],
    ['a symlink to the secret', () => fs.symlinkSync('../config/paper-global.yml', ledger)],
    ['a hard link to the secret', () => fs.linkSync(w.p(SECRET), ledger)],
    ['a FIFO', () => execFileSync('mkfifo', [ledger])],
    [
      'a folder holding a link out',
      () => {
        fs.mkdirSync(ledger);
        fs.symlinkSync(w.outside, path.join(ledger, 'out'));
      },
    ],
    ['garbage', () => fs.writeFileSync(ledger, '{"v":1,"contents":[{"size":"x"}]}')],
  ];
  for (const [what, plant] of plants) {
    fs.rmSync(ledger, { recursive: true, force: true });
    plant();
    fs.linkSync(w.p(SECRET), w.p('stolen.yml'));
    // Read-only Jobs read it as empty and still withhold by identity and the current content.
    assert.deepEqual(await exposures(w, 'stolen.yml'), [], what);
    fs.rmSync(w.p('stolen.yml'));
    // A read-write Job replaces it with a regular file of its own.
    assert.equal((await w.run({ op: 'mkdir', path: `b-${what.replace(/\W/g, '')}` })).code, undefined, what);
    const st = fs.lstatSync(ledger);
    assert.ok(st.isFile() && st.nlink === 1, what);
    assert.equal(fs.readFileSync(w.p(SECRET), 'utf8'), SECRET_TEXT, what);
    assert.equal(fs.readFileSync(outsideTarget, 'utf8'), 'outside\n', what);
    assert.deepEqual(fs.readdirSync(w.outside).sort(), ['secret.txt', 'target.txt'], what);
  }
  // The ledger folder itself replaced by a symlink out of the world: nothing is written there.
  fs.rmSync(w.p(LEDGER_DIR), { recursive: true, force: true });
  fs.symlinkSync(w.outside, w.p(LEDGER_DIR));
  assert.equal((await w.run({ op: 'mkdir', path: 'c' })).code, undefined);
  assert.deepEqual(fs.readdirSync(w.outside).sort(), ['secret.txt', 'target.txt']);
  assert.ok(fs.lstatSync(w.p(LEDGER_DIR)).isDirectory());
});

test('rename of the withheld file or of a folder holding it is refused; rename onto its name is refused while it exists', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('a/b'), { recursive: true });
  fs.renameSync(w.p('config'), w.p('a/b/config'));
  fs.symlinkSync('a/b/config', w.p('config'));
  assert.equal((await w.run({ op: 'rename', path: 'a', to: 'z' })).code, 'bad_path');
  assert.equal((await w.run({ op: 'rename', path: 'a/b', to: 'a/c' })).code, 'bad_path');
  fs.writeFileSync(w.p('x.yml'), 'x');
  assert.equal((await w.run({ op: 'rename', path: 'x.yml', to: SECRET })).code, 'exists');
  assert.equal(fs.readFileSync(w.p(SECRET), 'utf8'), SECRET_TEXT);
});

test('an unzip entry landing on the withheld file is withheld_linked while it has other links, even with overwrite; nothing changes', async () => {
  const w = makeWorld();
  fs.linkSync(w.p(SECRET), w.p('stolen.yml'));
  fs.writeFileSync(
    w.p('a.zip'),
    forgeZip([
      { name: 'config/paper-global.yml', data: ROTATED },
      { name: 'config/new.txt', data: 'new\n' },
    ]),
  );
  const r = await w.run({ op: 'unzip', path: 'a.zip', overwrite: true });
  assert.equal(r.code, 'withheld_linked', JSON.stringify(r));
  assert.equal(fs.readFileSync(w.p(SECRET), 'utf8'), SECRET_TEXT);
  assert.equal(fs.existsSync(w.p('config/new.txt')), false);
  // The other link deleted, the same extraction replaces it like a write.
  assert.deepEqual(await w.run({ op: 'delete', path: 'stolen.yml' }), {});
  assert.equal((await w.run({ op: 'unzip', path: 'a.zip', overwrite: true })).code, undefined);
  assert.equal(fs.readFileSync(w.p(SECRET), 'utf8'), ROTATED);
});

test('a symbolic link chain: the withheld name leads through links to a file with another hard link; its replace is refused, and deleting the links on the way leaves every name withheld', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('real'));
  fs.renameSync(w.p(SECRET), w.p('real/secret.yml'));
  fs.symlinkSync('../real/hop.yml', w.p(SECRET));
  fs.symlinkSync('secret.yml', w.p('real/hop.yml'));
  fs.linkSync(w.p('real/secret.yml'), w.p('real/copy.yml'));
  // The entry the name resolves to has another link: no replace through the chain, no delete of it or its folder.
  assert.equal((await w.run(writeReq(SECRET, ROTATED))).code, 'withheld_linked');
  assert.equal((await w.run({ op: 'delete', path: 'real/secret.yml' })).code, 'withheld_linked');
  assert.equal((await w.run({ op: 'delete', path: 'real' })).code, 'withheld_linked');
  assert.equal((await w.run({ op: 'rename', path: 'real', to: 'elsewhere' })).code, 'bad_path');
  // The links themselves are ordinary names; once they are gone the old file and its link hold
  // a remembered content.
  assert.deepEqual(await w.run({ op: 'delete', path: SECRET }), {});
  assert.deepEqual(await w.run({ op: 'delete', path: 'real/hop.yml' }), {});
  assert.deepEqual(await exposures(w, 'real/secret.yml'), []);
  assert.deepEqual(await exposures(w, 'real/copy.yml'), []);
  // A hard link inside a folder being zipped, and a symlink to it: left out, bad_path.
  fs.symlinkSync('real/copy.yml', w.p('sym.yml'));
  assert.equal((await w.run({ op: 'read', path: 'sym.yml' })).code, 'bad_path');
});

test('the ledger is bounded: the newest contents are kept, each once, in the exact format only', async () => {
  const w = makeWorld();
  for (let i = 0; i < MAX_LEDGER_ENTRIES + 6; i++) {
    assert.equal((await w.run(writeReq(SECRET, `secret: v${i}\n`))).code, undefined);
    if (i % 10 === 0) assert.equal((await w.run({ op: 'mkdir', path: `d${i}` })).code, undefined); // seen again: not recorded twice
  }
  const text = fs.readFileSync(w.p(`${LEDGER_DIR}/${LEDGER_FILE}`), 'utf8');
  const contents = parseLedger(text);
  assert.equal(contents.length, MAX_LEDGER_ENTRIES);
  assert.equal(new Set(contents.map((c) => c.sha256)).size, MAX_LEDGER_ENTRIES);
  // The first one seen (the original secret) went first; the last written is known to the next Job.
  assert.ok(!contents.some((c) => c.sha256 === sha256(SECRET_TEXT)));
  assert.ok(contents.some((c) => c.sha256 === sha256(`secret: v${MAX_LEDGER_ENTRIES + 4}\n`)));
  assert.deepEqual(parseLedger('{"v":1,"contents":[{"size":3,"sha256":"ab"}]}'), []);
  assert.deepEqual(parseLedger('{"v":2,"contents":[]}'), []);
  assert.deepEqual(parseLedger('not json'), []);
  assert.deepEqual(parseLedger(JSON.stringify({ v: 1, contents: [{ size: 5, sha256: null }] })), [{ size: 5, sha256: null }]);
});

test('a file swapped for a hard link to the secret between the packer looking at it and opening it is left out', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('p'));
  fs.writeFileSync(w.p('p/a.txt'), 'an ordinary file of another size\n');
  const root = WorldRoot.open(w.root);
  try {
    const s = resolveSource(root, 'p');
    assert.ok('isDir' in s);
    const sink = new PassThrough();
    const chunks: Buffer[] = [];
    sink.on('data', (c: Buffer) => chunks.push(c));
    // The swap lands after both walks have looked at p/a.txt, right before the packer opens it.
    let swapped = false;
    const beforeOpen = (entry: string) => {
      if (swapped || entry !== 'p/a.txt') return;
      swapped = true;
      fs.rmSync(w.p('p/a.txt'));
      fs.linkSync(w.p(SECRET), w.p('p/a.txt'));
    };
    await packToStream(root, s, sink, undefined, undefined, { beforeOpen });
    assert.ok(swapped);
    assert.ok(!Buffer.concat(chunks).includes(Buffer.from('XYZZY')));
  } finally {
    root.close();
  }
});
