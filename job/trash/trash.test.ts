import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { test } from 'node:test';
import type { Result } from '../../lib/protocol/result.ts';
import { UNDO_DIR } from '../../lib/protocol/working-names.ts';
import type { ExecuteOptions, OpCall } from '../runtime/types.ts';
import { makeWorld, SECRET_TEXT, sha256, snapshot, TRASH_OFF, TRASH_ON, type World, writeReq } from '../testing/world.ts';
import { removeWithin } from './store.ts';

/** Runs an op with the trash on (unless the options say otherwise). */
function on(w: World, req: OpCall, opts: ExecuteOptions = {}): Promise<Result> {
  return w.run(req, { trash: TRASH_ON, ...opts });
}

/** The world as a snapshot, the trash folder left out (what a user of the routes sees). */
function visible(w: World): Record<string, string> {
  return Object.fromEntries(Object.entries(snapshot(w.root)).filter(([k]) => !k.startsWith(UNDO_DIR)));
}

/** A folder of nested random files; their sha256 by path. */
function seedTree(w: World, top: string): Record<string, string> {
  const sums: Record<string, string> = {};
  for (const [i, rel] of ['region/r.0.0.mca', 'region/r.0.1.mca', 'data/raids.dat', 'level.dat', 'playerdata/a/b/c.dat', 'empty'].entries()) {
    const p = w.p(`${top}/${rel}`);
    fs.mkdirSync(p.slice(0, p.lastIndexOf('/')), { recursive: true });
    const b = rel === 'empty' ? Buffer.alloc(0) : randomBytes(1000 + i * 4096);
    fs.writeFileSync(p, b);
    sums[rel] = sha256(b);
  }
  fs.mkdirSync(w.p(`${top}/empty-folder`));
  fs.symlinkSync('level.dat', w.p(`${top}/link-to-level`));
  return sums;
}

/** Entries (the top one too) and bytes of regular files under `p`, links not followed. */
function count(p: string): { bytes: number; entries: number } {
  const st = fs.lstatSync(p);
  const c = { bytes: st.isFile() ? st.size : 0, entries: 1 };
  if (st.isDirectory()) {
    for (const n of fs.readdirSync(p)) {
      const s = count(`${p}/${n}`);
      c.bytes += s.bytes;
      c.entries += s.entries;
    }
  }
  return c;
}

function sumsOf(w: World, top: string, rels: string[]): Record<string, string> {
  return Object.fromEntries(rels.map((r) => [r, sha256(fs.readFileSync(w.p(`${top}/${r}`)))]));
}

test('a deleted folder is kept in the trash, listed with its record, and restored byte for byte', async () => {
  const w = makeWorld();
  const sums = seedTree(w, 'world');
  const before = visible(w);
  const counted = count(w.p('world'));
  const del = await on(w, { op: 'delete', path: 'world' }, { now: () => Date.UTC(2026, 11, 1, 12) });
  assert.equal(del.code, undefined, del.error);
  assert.match(del.trash_id!, /^[0-9a-f]{16}$/);
  assert.equal(fs.existsSync(w.p('world')), false);

  const listed = await on(w, { op: 'trash-list', path: '' }, { now: () => Date.UTC(2026, 11, 1, 13) });
  assert.equal(listed.trash_items!.length, 1);
  const [item] = listed.trash_items!;
  assert.deepEqual(item, {
    id: del.trash_id,
    op: 'delete',
    paths: ['world'],
    bytes: counted.bytes,
    entries: counted.entries,
    at: '2026-12-01T12:00:00.000Z',
    expires_at: '2026-12-08T12:00:00.000Z',
    actor: 'alice',
  });
  assert.equal(counted.entries, 14);
  assert.equal(counted.bytes, 5 * 1000 + 4096 * (1 + 2 + 3 + 4));
  assert.equal(listed.trash_bytes, counted.bytes);

  // The listing leaves the trash out and says how much it holds.
  const root = await on(w, { op: 'list', path: '' });
  assert.ok(!root.entries!.some((e) => e.name === UNDO_DIR));
  assert.equal(root.trash_bytes, item!.bytes);

  const back = await on(w, { op: 'trash-restore', path: '', trashId: del.trash_id });
  assert.equal(back.code, undefined, back.error);
  assert.deepEqual(back.restored, ['world']);
  assert.deepEqual(visible(w), before);
  assert.deepEqual(sumsOf(w, 'world', Object.keys(sums)), sums);
  assert.equal(fs.readlinkSync(w.p('world/link-to-level')), 'level.dat');
  assert.deepEqual((await on(w, { op: 'trash-list', path: '' })).trash_items ?? [], []);
});

test('a write over a file keeps the old one; a restore over the new one is refused, one under `to` lands', async () => {
  const w = makeWorld();
  const old = fs.readFileSync(w.p('config/paper.yml'));
  const wr = await on(w, writeReq('config/paper.yml', 'paper: false\n'));
  assert.equal(wr.code, undefined, wr.error);
  assert.match(wr.trash_id!, /^[0-9a-f]{16}$/);
  assert.equal(fs.readFileSync(w.p('config/paper.yml'), 'utf8'), 'paper: false\n');

  const before = visible(w);
  const refused = await on(w, { op: 'trash-restore', path: '', trashId: wr.trash_id });
  assert.equal(refused.code, 'exists');
  assert.equal(refused.entry, 'config/paper.yml');
  assert.deepEqual(visible(w), before, 'a refused restore changes nothing');

  const under = await on(w, { op: 'trash-restore', path: '', trashId: wr.trash_id, to: 'old/copies' });
  assert.equal(under.code, undefined, under.error);
  assert.deepEqual(under.restored, ['old/copies/config/paper.yml']);
  assert.deepEqual(fs.readFileSync(w.p('old/copies/config/paper.yml')), old);
  assert.equal(fs.readFileSync(w.p('config/paper.yml'), 'utf8'), 'paper: false\n');
});

test('a delete-many is one record; purging it frees it for good and a second purge is trash_not_found', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('logs/old'), { recursive: true });
  for (const n of ['a.log', 'b.log', 'old/c.log']) fs.writeFileSync(w.p(`logs/${n}`), n.repeat(10));
  const del = await on(w, { op: 'delete-many', path: 'logs', batch: { paths: ['logs/a.log', 'logs/old', 'logs/b.log'] } });
  assert.deepEqual(del.done, ['logs/a.log', 'logs/old', 'logs/b.log']);
  const [item] = (await on(w, { op: 'trash-list', path: '' })).trash_items!;
  assert.deepEqual(item!.paths, ['logs/a.log', 'logs/old', 'logs/b.log']);
  assert.equal(item!.bytes, 50 + 90 + 50);
  const purged = await on(w, { op: 'trash-purge', path: '', trashId: del.trash_id });
  assert.deepEqual({ purged: purged.purged, bytes: purged.bytes }, { purged: 1, bytes: 190 });
  assert.deepEqual(fs.readdirSync(w.p(UNDO_DIR)), []);
  assert.equal((await on(w, { op: 'trash-purge', path: '', trashId: del.trash_id })).code, 'trash_not_found');
  assert.equal((await on(w, { op: 'trash-restore', path: '', trashId: del.trash_id })).code, 'trash_not_found');
});

test('restoring puts a file back into folders deleted since, and a batch with a folder and a path in it comes back whole', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('a/b'), { recursive: true });
  fs.writeFileSync(w.p('a/b/f.txt'), 'f');
  fs.writeFileSync(w.p('a/g.txt'), 'g');
  const first = await on(w, { op: 'delete', path: 'a/b/f.txt' });
  const second = await on(w, { op: 'delete-many', path: '', batch: { paths: ['a/g.txt', 'a'] } });
  assert.equal(fs.existsSync(w.p('a')), false);
  // The file's folders are remade (and handed to the game); then the rest comes back beside it.
  const chowned: string[] = [];
  const r1 = await on(w, { op: 'trash-restore', path: '', trashId: first.trash_id }, { chown: (p) => void chowned.push(p) });
  assert.deepEqual(r1.restored, ['a/b/f.txt']);
  assert.equal(chowned.length, 2);
  const r2 = await on(w, { op: 'trash-restore', path: '', trashId: second.trash_id });
  // `a` now exists (made for f.txt): it is in the way of the folder that was deleted.
  assert.equal(r2.code, 'exists');
  assert.equal(r2.entry, 'a');
  fs.rmSync(w.p('a'), { recursive: true });
  const r3 = await on(w, { op: 'trash-restore', path: '', trashId: second.trash_id });
  assert.equal(r3.code, undefined, r3.error);
  assert.equal(fs.readFileSync(w.p('a/g.txt'), 'utf8'), 'g');
});

test('a restore never lands a relative link where it leads above the root: a folder of its way now a link to a shallower one', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('deep/sub'), { recursive: true });
  fs.symlinkSync('../../server.properties', w.p('deep/sub/lnk'));
  fs.mkdirSync(w.p('deep/sub/keep'));
  fs.symlinkSync('../../../config/paper.yml', w.p('deep/sub/keep/cfg'));
  const one = await on(w, { op: 'delete', path: 'deep/sub/lnk' });
  const folder = await on(w, { op: 'delete', path: 'deep/sub/keep' });
  // deep/sub is now a link to the root: put back "where it was", each link would land at the root.
  fs.rmdirSync(w.p('deep/sub'));
  fs.symlinkSync('..', w.p('deep/sub'));
  const before = visible(w);
  const r = await on(w, { op: 'trash-restore', path: '', trashId: one.trash_id });
  assert.deepEqual(r, { code: 'bad_path', error: `deep/sub/lnk would be a link leading outside the world; nothing of ${one.trash_id} was restored`, entry: 'deep/sub/lnk' });
  const f = await on(w, { op: 'trash-restore', path: '', trashId: folder.trash_id });
  assert.deepEqual(f, { code: 'bad_path', error: `deep/sub/keep/cfg would be a link leading outside the world; nothing of ${folder.trash_id} was restored`, entry: 'deep/sub/keep' });
  assert.deepEqual(visible(w), before, 'nothing restored, both records still held');
  assert.equal((await on(w, { op: 'trash-list', path: '' })).trash_items!.length, 2);
  // Under a folder as deep as they were, or deeper, they come back as they were.
  fs.mkdirSync(w.p('x'));
  assert.deepEqual((await on(w, { op: 'trash-restore', path: '', trashId: one.trash_id, to: 'x' })).restored, ['x/deep/sub/lnk']);
  assert.equal(fs.readlinkSync(w.p('x/deep/sub/lnk')), '../../server.properties');
  fs.unlinkSync(w.p('deep/sub'));
  fs.mkdirSync(w.p('deep/sub'));
  assert.deepEqual((await on(w, { op: 'trash-restore', path: '', trashId: folder.trash_id })).restored, ['deep/sub/keep']);
  assert.equal(fs.readlinkSync(w.p('deep/sub/keep/cfg')), '../../../config/paper.yml');
});

test('what has expired goes with the next mutation of the world; a listing alone purges nothing', async () => {
  const w = makeWorld();
  const t0 = Date.UTC(2026, 0, 1);
  const del = await on(w, { op: 'delete', path: 'server.properties' }, { now: () => t0 });
  const later = () => t0 + TRASH_ON.seconds * 1000 + 1;
  assert.equal((await on(w, { op: 'trash-list', path: '' }, { now: later })).trash_items!.length, 1);
  assert.equal((await on(w, { op: 'mkdir', path: 'x' }, { now: () => t0 + 1000 })).code, undefined);
  assert.equal((await on(w, { op: 'trash-list', path: '' })).trash_items!.length, 1, 'not yet expired');
  await on(w, { op: 'mkdir', path: 'y' }, { now: later });
  assert.deepEqual((await on(w, { op: 'trash-list', path: '' })).trash_items ?? [], []);
  assert.equal(fs.readdirSync(w.p(UNDO_DIR)).length, 0);
  void del;
});

test('an op that needs room purges the oldest records first, only as many as it needs', async () => {
  const w = makeWorld();
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    fs.writeFileSync(w.p(`big${i}.bin`), Buffer.alloc(3000, i));
    ids.push((await on(w, { op: 'delete', path: `big${i}.bin` }, { now: () => Date.UTC(2026, 10, 1 + i) })).trash_id!);
  }
  // A volume with 500 bytes free plus whatever the trash gives back; the copy needs 2000 + 4096.
  const statfs = () => ({ bavail: BigInt(500 + (3 - fs.readdirSync(w.p(UNDO_DIR)).filter((n) => /^[0-9a-f]{16}$/.test(n)).length) * 3000), bsize: 1n });
  const src = Buffer.alloc(2000, 7);
  fs.mkdirSync(w.p('src'));
  fs.writeFileSync(w.p('src/in.bin'), src);
  const r = await on(w, { op: 'copy', path: 'src/in.bin', to: 'copied.bin' }, { statfs, now: () => Date.UTC(2026, 10, 5) });
  assert.equal(r.code, undefined, r.error);
  const left = (await on(w, { op: 'trash-list', path: '' })).trash_items!.map((i) => i.id);
  assert.deepEqual(left, [ids[2]], 'the two oldest went, the newest stays');
});

test('FELIS_TRASH=off deletes and replaces for good, as before the trash; what the trash holds stays usable', async () => {
  const w = makeWorld();
  const kept = await on(w, { op: 'delete', path: 'config/paper.yml' });
  const r = await w.run({ op: 'delete', path: 'server.properties' }, { trash: TRASH_OFF });
  assert.equal(r.trash_id, undefined);
  const wr = await w.run(writeReq('config/new.yml', 'a'), { trash: TRASH_OFF });
  assert.equal(wr.trash_id, undefined);
  assert.equal((await w.run({ op: 'trash-list', path: '' }, { trash: TRASH_OFF })).trash_items!.length, 1);
  assert.equal((await w.run({ op: 'trash-restore', path: '', trashId: kept.trash_id }, { trash: TRASH_OFF })).code, undefined);
  assert.equal(fs.existsSync(w.p('config/paper.yml')), true);
});

test('the trash is never addressable: read, list, delete and write of a path in it are refused', async () => {
  const w = makeWorld();
  const del = await on(w, { op: 'delete', path: 'server.properties' });
  const inside = `${UNDO_DIR}/${del.trash_id}/0`;
  assert.equal((await on(w, { op: 'read', path: inside })).code, 'not_found');
  assert.equal((await on(w, { op: 'list', path: UNDO_DIR })).code, 'not_found');
  assert.equal((await on(w, { op: 'delete', path: UNDO_DIR })).code, 'not_found');
  assert.equal((await on(w, { op: 'write', path: inside, content: Buffer.from('x'), sha256: sha256('x') })).code, 'bad_path');
  const found = await on(w, { op: 'search', path: '', q: 'server.properties' });
  assert.deepEqual(found.matches ?? [], []);
  // A restore under a working name is refused too.
  assert.equal((await on(w, { op: 'trash-restore', path: '', trashId: del.trash_id, to: UNDO_DIR })).code, 'bad_path');
});

test('the withheld file, trashed, is never read from the trash and comes back withheld; a second name of it is not kept', async () => {
  const w = makeWorld();
  // A second name of the secret, inside a folder that is deleted: removed for good, never kept.
  fs.mkdirSync(w.p('stash'));
  fs.linkSync(w.p('config/paper-global.yml'), w.p('stash/copy.yml'));
  fs.writeFileSync(w.p('stash/note.txt'), 'n');
  const stash = await on(w, { op: 'delete', path: 'stash' });
  assert.equal(stash.code, undefined, stash.error);
  const [item] = (await on(w, { op: 'trash-list', path: '' })).trash_items!;
  assert.equal(item!.entries, 2, 'the folder and note.txt; the link to the secret is gone');
  assert.equal(fs.statSync(w.p('config/paper-global.yml')).nlink, 1);
  // The file itself: deleted (it has one name now); under another folder it does not go back.
  const del = await on(w, { op: 'delete', path: 'config/paper-global.yml' });
  assert.equal(del.code, undefined, del.error);
  const elsewhere = await on(w, { op: 'trash-restore', path: '', trashId: del.trash_id, to: 'restored' });
  assert.equal(elsewhere.code, 'bad_path');
  assert.match(elsewhere.error!, /held the proxy forwarding secret.*restore it without "to"/);
  assert.equal(fs.existsSync(w.p('restored')), false);
  const back = await on(w, { op: 'trash-restore', path: '', trashId: del.trash_id });
  assert.deepEqual(back.restored, ['config/paper-global.yml']);
  assert.equal(fs.readFileSync(w.p('config/paper-global.yml'), 'utf8'), SECRET_TEXT);
  const read = await on(w, { op: 'read', path: 'config/paper-global.yml' });
  assert.equal(read.code, 'bad_path', 'it is withheld again');
  assert.ok(!JSON.stringify(read).includes('XYZZY'));
});

test('a trash folder that is not ours is never used: the op deletes for good and leaves it alone', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p(UNDO_DIR), { mode: 0o755 });
  fs.chmodSync(w.p(UNDO_DIR), 0o755);
  const r = await on(w, { op: 'delete', path: 'server.properties' });
  assert.equal(r.code, undefined, r.error);
  assert.equal(r.trash_id, undefined);
  assert.deepEqual(fs.readdirSync(w.p(UNDO_DIR)), []);
  // A link in its place is not followed either.
  fs.rmdirSync(w.p(UNDO_DIR));
  fs.symlinkSync(w.outside, w.p(UNDO_DIR));
  assert.equal((await on(w, { op: 'delete', path: 'config/paper.yml' })).trash_id, undefined);
  assert.deepEqual(fs.readdirSync(w.outside), ['secret.txt']);
});

test('a forged record (not ours, or naming a path outside) is never acted on', async () => {
  const w = makeWorld();
  const del = await on(w, { op: 'delete', path: 'server.properties' });
  const rec = w.p(`${UNDO_DIR}/${del.trash_id}/record.json`);
  const r = JSON.parse(fs.readFileSync(rec, 'utf8'));
  fs.writeFileSync(rec, JSON.stringify({ ...r, items: [{ ...r.items[0], path: '../outside/secret.txt' }] }));
  assert.equal((await on(w, { op: 'trash-restore', path: '', trashId: del.trash_id })).code, 'trash_not_found');
  fs.writeFileSync(rec, JSON.stringify(r));
  fs.chmodSync(rec, 0o666);
  assert.equal((await on(w, { op: 'trash-restore', path: '', trashId: del.trash_id })).code, 'trash_not_found');
  fs.chmodSync(rec, 0o600);
  assert.equal((await on(w, { op: 'trash-restore', path: '', trashId: del.trash_id })).code, undefined);
});

test('trash-list pages newest first, `after` an id', async () => {
  const w = makeWorld();
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    fs.writeFileSync(w.p(`f${i}`), 'x');
    ids.push((await on(w, { op: 'delete', path: `f${i}` }, { now: () => Date.now() - (5 - i) * 60_000 })).trash_id!);
  }
  const p1 = await on(w, { op: 'trash-list', path: '', limit: 2 });
  assert.deepEqual(
    p1.trash_items!.map((i) => i.id),
    [ids[4], ids[3]],
  );
  assert.equal(p1.trash_next, ids[3]);
  const p2 = await on(w, { op: 'trash-list', path: '', limit: 2, after: p1.trash_next });
  assert.deepEqual(
    p2.trash_items!.map((i) => i.id),
    [ids[2], ids[1]],
  );
  const p3 = await on(w, { op: 'trash-list', path: '', limit: 2, after: p2.trash_next });
  assert.deepEqual(
    p3.trash_items!.map((i) => i.id),
    [ids[0]],
  );
  assert.equal(p3.trash_next, undefined);
  assert.equal(p3.trash_bytes, 5);
  const all = await on(w, { op: 'trash-purge', path: '', all: true });
  assert.deepEqual({ purged: all.purged, bytes: all.bytes }, { purged: 5, bytes: 5 });
});

test('removal past its budget stops and leaves the rest aside, out of the listing, for the next mutation to finish', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('big/sub'), { recursive: true });
  for (let i = 0; i < 50; i++) fs.writeFileSync(w.p(`big/sub/${i}`), 'x');
  const del = await on(w, { op: 'delete', path: 'big' });
  // What a budget's end leaves: the record renamed aside, its tree partly removed.
  const trashDir = w.p(UNDO_DIR);
  fs.renameSync(`${trashDir}/${del.trash_id}`, `${trashDir}/.purge-${del.trash_id}`);
  const dirFd = fs.openSync(trashDir, 'r');
  try {
    assert.equal(removeWithin(dirFd, `.purge-${del.trash_id}`, performance.now() - 1), false);
  } finally {
    fs.closeSync(dirFd);
  }
  assert.ok(fs.existsSync(`${trashDir}/.purge-${del.trash_id}/0/sub`), 'stopped part way');
  assert.deepEqual((await on(w, { op: 'trash-list', path: '' })).trash_items ?? [], []);
  await on(w, { op: 'mkdir', path: 'next' });
  assert.deepEqual(fs.readdirSync(trashDir), []);
});

test('every read-write mode reads the trash env first: a bad value is a wiring mistake (exit 2) before anything runs', async () => {
  const { runCli } = await import('../cli.ts');
  const w = makeWorld();
  const before = snapshot(w.root);
  for (const args of [
    ['files', '--op', 'delete', '--path', 'server.properties'],
    ['files', '--op', 'write', '--receive', '--path', 'a', '--sha256', sha256('a')],
    ['files', '--receive'],
  ]) {
    const err: string[] = [];
    const io = { stdout: () => {}, stderr: (t: string) => void err.push(t) };
    for (const env of [{ FELIS_TRASH: 'maybe' }, { FELIS_TRASH_SECONDS: '5' }]) {
      assert.equal(await runCli([...args, '--worlds-root', w.root], env, io), 2, args.join(' '));
      assert.match(err.join(''), /FELIS_TRASH/);
    }
  }
  assert.deepEqual(snapshot(w.root), before);
  // A good env reaches the op: the actor is the record's.
  const out: string[] = [];
  const io = { stdout: (t: string) => void out.push(t), stderr: () => {} };
  assert.equal(await runCli(['files', '--op', 'delete', '--path', 'server.properties', '--worlds-root', w.root], { FELIS_ACTOR: 'system:serviceaccount:panel:web' }, io), 0);
  const [item] = (await on(w, { op: 'trash-list', path: '' })).trash_items!;
  assert.equal(item!.actor, 'system:serviceaccount:panel:web');
});
