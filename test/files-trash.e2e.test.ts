/**
 * The undo trash end to end on both tiers, through the real HTTP routes: a deleted folder listed
 * and put back byte for byte, an overwritten file that cannot go back over its replacement but can
 * go back elsewhere, a batch delete as one record purged for good, and the trash folder itself
 * never addressable.
 */

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { UNDO_DIR } from '../lib/protocol/working-names.ts';
import { q, type Stack, startStack, TIER } from './support/stack.ts';

const S = '/api/v1/servers/survival';
const ID = /^[0-9a-f]{16}$/;
const WEEK_MS = 7 * 24 * 3600 * 1000;
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const write = (content: string | Buffer) => ({ content: Buffer.from(content).toString('base64'), content_sha256: sha(content) });

/** Every entry under `dir` (itself not included): files by sha256, folders as 'dir'. */
function tree(dir: string, rel = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of readdirSync(join(dir, rel)).sort()) {
    const p = rel ? `${rel}/${name}` : name;
    const st = lstatSync(join(dir, p));
    if (st.isDirectory()) {
      out.set(p, 'dir');
      for (const [k, v] of tree(dir, p)) out.set(k, v);
    } else {
      out.set(p, sha(readFileSync(join(dir, p))));
    }
  }
  return out;
}

describe(`the undo trash through the ${TIER} cluster`, () => {
  let s: Stack;
  before(async () => {
    s = await startStack();
  });
  after(async () => {
    await s?.close();
  });

  const list = async () => {
    const r = await s.call('GET', `${S}/files/trash`);
    assert.equal(r.status, 200, r.text);
    return r.body as { items: Array<{ id: string; op: string; paths: string[]; bytes: number; entries: number; at: string; actor: string; expires_at: string }>; next?: string; trash_bytes: number };
  };

  test('a deleted folder is listed, hidden from the world listing, and restored byte for byte', async () => {
    // The demo world's world/ (level.dat, region/) with random files, nested.
    const world = join(s.world, 'world');
    mkdirSync(join(world, 'region'), { recursive: true });
    mkdirSync(join(world, 'data/deep/er'), { recursive: true });
    writeFileSync(join(world, 'region/r.0.0.mca'), randomBytes(65_537));
    writeFileSync(join(world, 'region/r.0.-1.mca'), randomBytes(4096));
    writeFileSync(join(world, 'data/raids.dat'), randomBytes(1234));
    writeFileSync(join(world, 'data/deep/er/x.bin'), randomBytes(777));
    writeFileSync(join(world, 'data/deep/empty.bin'), '');
    const was = tree(world);
    let bytes = 0;
    for (const [p, v] of was) if (v !== 'dir') bytes += lstatSync(join(world, p)).size;
    const entries = was.size + 1; // world/ itself and everything in it
    assert.ok(bytes > 70_000);

    const t0 = Date.now();
    const del = await s.call('DELETE', `${S}/file?path=world`);
    const t1 = Date.now();
    assert.equal(del.status, 200, del.text);
    assert.deepEqual(Object.keys(del.body).sort(), ['path', 'status', 'trash_id']);
    assert.equal(del.body.path, 'world');
    assert.equal(del.body.status, 'deleted');
    assert.match(del.body.trash_id, ID);
    assert.equal(existsSync(world), false, 'the folder is gone from the world');
    // Kept on the same volume, inside the world root's trash folder.
    assert.equal(existsSync(join(s.world, UNDO_DIR, del.body.trash_id)), true);

    const l = await list();
    assert.equal(l.items.length, 1, JSON.stringify(l));
    const item = l.items[0]!;
    assert.deepEqual(Object.keys(item), ['id', 'op', 'paths', 'bytes', 'entries', 'at', 'actor', 'expires_at']);
    assert.equal(item.id, del.body.trash_id);
    assert.equal(item.op, 'delete');
    assert.deepEqual(item.paths, ['world']);
    assert.equal(item.bytes, bytes);
    assert.equal(item.entries, entries);
    assert.equal(typeof item.actor, 'string');
    assert.ok(item.actor.length > 0, 'the record names who deleted');
    const at = Date.parse(item.at);
    assert.ok(at >= t0 - 2000 && at <= t1 + 2000, `at ${item.at} is the time of the delete`);
    assert.equal(Date.parse(item.expires_at) - at, WEEK_MS, 'kept 7 days by default');
    assert.equal(l.trash_bytes, bytes);
    assert.equal(l.next, undefined);

    const root = await s.call('GET', `${S}/files`);
    assert.equal(root.status, 200, root.text);
    const names = root.body.entries.map((e: { name: string }) => e.name);
    assert.ok(!names.includes(UNDO_DIR), `the trash folder is not listed: ${names.join(', ')}`);
    assert.ok(!names.includes('world'));
    assert.ok(names.includes('server.properties'));
    assert.equal(root.body.trash_bytes, bytes);
    if (root.body.free_bytes !== null) assert.ok(root.body.free_bytes >= bytes, 'free_bytes counts the trash');

    const back = await s.call('POST', `${S}/files/trash/${item.id}/restore`, {});
    assert.equal(back.status, 200, back.text);
    assert.deepEqual(back.body, { id: item.id, restored: ['world'] });
    assert.deepEqual(tree(world), was, 'every file and folder is back with its bytes');
    const empty = await list();
    assert.deepEqual(empty, { items: [], trash_bytes: 0 });
    assert.equal(existsSync(join(s.world, UNDO_DIR, item.id)), false);
  });

  test('an overwritten file does not go back over its replacement (409, nothing changed); it goes back under another folder', async () => {
    // Any file but the guarded ones (server.properties goes back only where it was: guarded-files.e2e).
    const F = 'config/paper-world-defaults.yml';
    const file = join(s.world, F);
    const old = readFileSync(file);
    const now = Buffer.from('entities:\n  spawning: {}\n');
    const w = await s.call('PUT', `${S}/file?path=${q(F)}`, write(now));
    assert.equal(w.status, 200, w.text);
    assert.deepEqual(readFileSync(file), now);

    const l = await list();
    const item = l.items.find((i) => i.paths.length === 1 && i.paths[0] === F);
    assert.ok(item, `the replaced file is in the trash: ${JSON.stringify(l)}`);
    assert.equal(item.bytes, old.length);
    assert.equal(item.entries, 1);

    const clash = await s.call('POST', `${S}/files/trash/${item.id}/restore`, {});
    assert.equal(clash.status, 409, clash.text);
    assert.equal(clash.body.error.code, 'file_exists');
    assert.equal(clash.body.error.path, F);
    assert.deepEqual(readFileSync(file), now, 'the file in the way is untouched');
    assert.deepEqual(
      (await list()).items.map((i) => i.id),
      l.items.map((i) => i.id),
      'the record is still held',
    );
    assert.equal(existsSync(join(s.world, 'old')), false);

    const moved = await s.call('POST', `${S}/files/trash/${item.id}/restore`, { to: 'old' });
    assert.equal(moved.status, 200, moved.text);
    assert.deepEqual(moved.body, { id: item.id, restored: [`old/${F}`] });
    assert.deepEqual(readFileSync(join(s.world, 'old', F)), old);
    assert.deepEqual(readFileSync(file), now);
    assert.ok(!(await list()).items.some((i) => i.id === item.id));
  });

  test('a batch delete is one record; purged it is gone for good (404 on restore); DELETE files/trash empties all', async () => {
    mkdirSync(join(s.world, 'b'), { recursive: true });
    const files: Record<string, Buffer> = { 'b/1.txt': randomBytes(100), 'b/2.txt': randomBytes(200), 'c.txt': randomBytes(300) };
    for (const [p, b] of Object.entries(files)) writeFileSync(join(s.world, p), b);
    const paths = Object.keys(files);
    const before = (await list()).items.length;

    const del = await s.call('POST', `${S}/files/delete`, { paths });
    assert.equal(del.status, 200, del.text);
    assert.deepEqual(Object.keys(del.body).sort(), ['done', 'failed', 'trash_id']);
    assert.deepEqual(del.body.done, paths);
    assert.deepEqual(del.body.failed, []);
    assert.match(del.body.trash_id, ID);
    for (const p of paths) assert.equal(existsSync(join(s.world, p)), false, p);

    const l = await list();
    assert.equal(l.items.length, before + 1, 'one record for the batch');
    const item = l.items.find((i) => i.id === del.body.trash_id);
    assert.ok(item, JSON.stringify(l));
    assert.equal(l.items[0]!.id, item.id, 'newest first');
    assert.equal(item.op, 'delete-many');
    assert.deepEqual([...item.paths].sort(), [...paths].sort());
    assert.equal(item.bytes, 600);
    assert.equal(item.entries, 3);

    const purge = await s.call('DELETE', `${S}/files/trash/${item.id}`);
    assert.equal(purge.status, 200, purge.text);
    assert.deepEqual(purge.body, { id: item.id, purged: 1, bytes: 600 });
    assert.equal(existsSync(join(s.world, UNDO_DIR, item.id)), false);
    const gone = await s.call('POST', `${S}/files/trash/${item.id}/restore`, {});
    assert.equal(gone.status, 404, gone.text);
    assert.equal(gone.body.error.code, 'trash_not_found');
    for (const p of paths) assert.equal(existsSync(join(s.world, p)), false, p);
    const again = await s.call('DELETE', `${S}/files/trash/${item.id}`);
    assert.equal(again.status, 404, again.text);
    assert.equal(again.body.error.code, 'trash_not_found');

    // Two more records, then everything at once.
    const d1 = await s.call('DELETE', `${S}/file?path=eula.txt`);
    assert.equal(d1.status, 200, d1.text);
    const d2 = await s.call('DELETE', `${S}/file?path=old`);
    assert.equal(d2.status, 200, d2.text);
    const full = await list();
    assert.ok(full.items.length >= 2, JSON.stringify(full));
    const all = await s.call('DELETE', `${S}/files/trash`);
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(all.body, { purged: full.items.length, bytes: full.trash_bytes });
    assert.deepEqual(await list(), { items: [], trash_bytes: 0 });
    const nothing = await s.call('DELETE', `${S}/files/trash`);
    assert.equal(nothing.status, 200, nothing.text);
    assert.deepEqual(nothing.body, { purged: 0, bytes: 0 });
  });

  test('a bad id is 400 bad_request; the trash folder is never addressable through the file routes', async () => {
    for (const [method, path, body] of [
      ['POST', `${S}/files/trash/not-an-id/restore`, {}],
      ['POST', `${S}/files/trash/0190A1B2C3D4E5F6/restore`, {}],
      ['DELETE', `${S}/files/trash/0190a1b2c3d4e5f`, undefined],
    ] as const) {
      const r = await s.call(method, path, body);
      assert.equal(r.status, 400, `${method} ${path}: ${r.text}`);
      assert.equal(r.body.error.code, 'bad_request');
    }
    const unknown = await s.call('POST', `${S}/files/trash/0190a1b2c3d4e5f6/restore`, {});
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal(unknown.body.error.code, 'trash_not_found');

    writeFileSync(join(s.world, 'secret-ish.txt'), 'kept\n');
    const del = await s.call('DELETE', `${S}/file?path=secret-ish.txt`);
    assert.equal(del.status, 200, del.text);
    const id = del.body.trash_id as string;
    assert.match(id, ID);
    // On disk the slot holds the file; no route reaches it.
    assert.equal(readFileSync(join(s.world, UNDO_DIR, id, '0'), 'utf8'), 'kept\n');
    for (const p of [`${UNDO_DIR}/${id}/0`, `${UNDO_DIR}/${id}/record.json`]) {
      const r = await s.call('GET', `${S}/file?path=${q(p)}`);
      assert.equal(r.status, 404, `${p}: ${r.text}`);
    }
    const dir = await s.call('GET', `${S}/files?path=${q(UNDO_DIR)}`);
    assert.equal(dir.status, 404, dir.text);
    const rm = await s.call('DELETE', `${S}/file?path=${q(`${UNDO_DIR}/${id}`)}`);
    assert.notEqual(rm.status, 200, rm.text);
    assert.equal(existsSync(join(s.world, UNDO_DIR, id, '0')), true, 'a delete cannot reach into the trash');
    const back = await s.call('POST', `${S}/files/trash/${id}/restore`, {});
    assert.equal(back.status, 200, back.text);
    assert.equal(readFileSync(join(s.world, 'secret-ish.txt'), 'utf8'), 'kept\n');
  });
});
