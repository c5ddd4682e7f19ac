import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { pulled } from '../../functions/files-pull/job/pull.test-kit.ts';
import type { Result } from '../../lib/protocol/result.ts';
import { UNDO_DIR } from '../../lib/protocol/working-names.ts';
import { compress } from '../archive/codec.test-kit.ts';
import { forgeZip } from '../archive/forge.test-kit.ts';
import { openContext } from '../op-kit/context.ts';
import type { ExecuteOptions, OpCall, StatfsLike } from '../runtime/types.ts';
import { makeWorld, sha256, TRASH_ON, type World, writeReq } from '../testing/world.ts';
import { landUpload } from '../upload/land.ts';
import { SessionError, UploadSession } from '../upload/session.ts';
import { PER_ITEM_BYTES, roomFor } from './room.ts';

const T0 = Date.now();

/** Runs an op with the trash on, at a time after every record the test made. */
function on(w: World, req: OpCall, opts: ExecuteOptions = {}): Promise<Result> {
  return w.run(req, { trash: TRASH_ON, now: () => T0 + 60_000, ...opts });
}

/** The held records' ids, oldest first. */
function records(w: World): string[] {
  return fs
    .readdirSync(w.p(UNDO_DIR))
    .filter((n) => /^[0-9a-f]{16}$/.test(n))
    .sort();
}

/** `n` records, oldest first, each holding one deleted file of `bytes` bytes. */
async function trashed(w: World, n: number, bytes: number): Promise<string[]> {
  for (let i = 0; i < n; i++) {
    fs.writeFileSync(w.p(`old${i}.bin`), Buffer.alloc(bytes, i));
    const r = await on(w, { op: 'delete', path: `old${i}.bin` }, { now: () => T0 + i * 1000 });
    assert.ok(r.trash_id, JSON.stringify(r));
  }
  const ids = records(w);
  assert.equal(ids.length, n);
  return ids;
}

/**
 * A volume with `free` bytes free while every record made so far is held, and `each` more for every
 * one purged since (what deleting the record's file gives back), as statfs reports it.
 */
function volume(w: World, free: number, each: number): () => StatfsLike {
  const held = records(w).length;
  return () => ({ bavail: BigInt(free + (held - records(w).length) * each), bsize: 1n });
}

/** A file's fsync (outside the trash) fails for a full volume while `full()` says so. */
function fsyncFullWhile(full: () => boolean): (fd: number) => void {
  return (fd) => {
    if (fs.fstatSync(fd).isFile() && full() && !fs.readlinkSync(`/proc/self/fd/${fd}`).includes(UNDO_DIR)) {
      throw Object.assign(new Error('no space'), { code: 'ENOSPC' });
    }
    fs.fsyncSync(fd);
  };
}

async function* bytes(b: Buffer): AsyncGenerator<Buffer> {
  yield b;
}

test('an upload larger than the free space and all the trash holds is refused (no_space, 507 for a session) and purges nothing', async () => {
  const w = makeWorld();
  const ids = await trashed(w, 1, 3000);
  const ctx = openContext(w.root, { trash: TRASH_ON, statfs: volume(w, 1000, 3000) });
  try {
    const data = Buffer.alloc(5000, 1);
    const l = await landUpload(ctx, { path: 'big.bin', size: data.length, sha256: sha256(data), overwrite: false }, bytes(data));
    assert.equal(l.kind, 'result');
    const r = (l as { result: Result }).result;
    assert.deepEqual([r.code, r.need, r.avail], ['no_space', 5000, 1000]);
    assert.deepEqual(records(w), ids, 'the record is still there');
    const parents = await landUpload(ctx, { path: 'new/dir/big.bin', size: data.length, sha256: sha256(data), overwrite: false, parents: true }, bytes(data));
    assert.equal(parents.kind === 'result' && parents.result.code, 'no_space');
    assert.equal(fs.existsSync(w.p('new')), false, 'no folder made');
    assert.throws(
      () => UploadSession.begin(ctx, 'u-huge', 'huge.bin', 1e15),
      (e) => e instanceof SessionError && e.status === 507 && e.code === 'upload_staging_full',
    );
    assert.deepEqual(records(w), ids, 'the record is still there');
    assert.equal(fs.existsSync(w.p('big.bin')) || fs.existsSync(w.p('huge.bin')), false);
  } finally {
    ctx.root.close();
  }
});

/** A loopback origin that answers `/claim` with a Content-Length of `length` and one byte, then waits. */
async function claiming(length: number): Promise<string> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-length': length });
    res.write('x');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/claim`;
}

test('a pull whose Content-Length is past FELIS_PULL_MAX_BYTES or past the free space is refused, and never touches the trash: it holds no world', async () => {
  const w = makeWorld();
  const ids = await trashed(w, 2, 3000);
  const opts = { statfs: volume(w, 1000, 3000) };
  const pull = (url: string, env: Record<string, string> = {}): OpCall => ({
    op: 'pull',
    path: 'config',
    to: 'got.bin',
    pull: { url, env: { FELIS_PULL_ALLOW: '127.0.0.1', ...env } },
  });
  // 100 GiB against the default 4 GiB limit (the space would be short too: the limit speaks first).
  const huge = await pulled(w, pull(await claiming(100 * 1024 ** 3)), { trash: TRASH_ON, now: () => T0 + 60_000, ...opts });
  assert.equal(huge.code, 'too_large', JSON.stringify(huge));
  assert.deepEqual(records(w), ids);
  // Within a smaller limit's reach of the trash, but past the limit.
  const overLimit = await pulled(w, pull(await claiming(6000), { FELIS_PULL_MAX_BYTES: '5000' }), { trash: TRASH_ON, now: () => T0 + 60_000, ...opts });
  assert.equal(overLimit.code, 'too_large', JSON.stringify(overLimit));
  assert.deepEqual(records(w), ids);
  // Within the limit, past 1000 free + 6000 held.
  const short = await pulled(w, pull(await claiming(8000)), { trash: TRASH_ON, now: () => T0 + 60_000, ...opts });
  assert.deepEqual([short.code, short.need, short.avail], ['no_space', 8000, 1000]);
  assert.deepEqual(records(w), ids);
  // Within 1000 free + 6000 held, past the free space alone: a pull runs beside other changes (one
  // may be restoring from the trash), so it purges nothing and says what the trash holds.
  const fits = await pulled(w, pull(await claiming(5000)), { trash: TRASH_ON, now: () => T0 + 60_000, ...opts });
  assert.deepEqual([fits.code, fits.need, fits.avail], ['no_space', 5000, 1000]);
  assert.match(fits.error!, /the undo trash holds 6000 more, which a pull does not take back/);
  assert.deepEqual(records(w), ids);
  assert.equal(fs.existsSync(w.p('config/got.bin')), false);
});

test('an extraction whose planned bytes are past the free space and all the trash holds is refused (no_space) and purges nothing', async () => {
  const w = makeWorld();
  const ids = await trashed(w, 2, 3000);
  fs.writeFileSync(w.p('big.zip'), forgeZip([{ name: 'big.bin', data: Buffer.alloc(10_000, 3) }]));
  const r = await on(w, { op: 'unzip', path: 'big.zip' }, { statfs: volume(w, 1000, 3000) });
  assert.deepEqual([r.code, r.need, r.avail], ['no_space', roomFor(10_000, 1), 1000]);
  assert.deepEqual(records(w), ids, 'not in the op, nor in a rerun');
  assert.equal(fs.existsSync(w.p('big.bin')), false);
});

test('a single compressed file that decodes past the free space and all the trash holds is refused, the trash untouched; a stated size too', async () => {
  const w = makeWorld();
  const ids = await trashed(w, 2, 3000);
  const zeros = Buffer.alloc(8 << 20);
  fs.writeFileSync(w.p('bomb.gz'), await compress('gzip', zeros)); // no size stated: decoded to learn it
  fs.writeFileSync(w.p('bomb.zst'), await compress('zstd', zeros)); // states its size
  const opts = { statfs: volume(w, 1 << 20, 3000) };
  const gz = await on(w, { op: 'unzip', path: 'bomb.gz' }, opts);
  assert.equal(gz.code, 'no_space', JSON.stringify(gz));
  assert.equal(gz.need, undefined, 'decoding stopped past what the trash could add: the size is not known');
  assert.deepEqual(records(w), ids);
  const zst = await on(w, { op: 'unzip', path: 'bomb.zst' }, opts);
  assert.deepEqual([zst.code, zst.need], ['no_space', zeros.length + PER_ITEM_BYTES]);
  assert.deepEqual(records(w), ids);
  assert.equal(fs.existsSync(w.p('bomb')), false);
});

test('a single compressed file that fits once the oldest record is purged: its size is learned, then exactly that record goes', async () => {
  const w = makeWorld();
  const ids = await trashed(w, 3, 5 << 20);
  const zeros = Buffer.alloc(8 << 20, 1);
  fs.writeFileSync(w.p('data.gz'), await compress('gzip', zeros));
  // 4 MiB free; 8 MiB and a block needed; each record gives back 5 MiB.
  const r = await on(w, { op: 'unzip', path: 'data.gz' }, { statfs: volume(w, 4 << 20, 5 << 20) });
  assert.deepEqual(r, { files: 1, bytes: zeros.length });
  assert.equal(sha256(fs.readFileSync(w.p('data'))), sha256(zeros));
  assert.deepEqual(records(w), ids.slice(1), 'only the oldest went');
});

test('a write that met a full volume part way runs again after purging exactly the oldest of three records, the one it needed', async () => {
  const w = makeWorld();
  const ids = await trashed(w, 3, 20_000);
  const content = 'fits: now\n';
  const need = roomFor(content.length, 3);
  const statfs = volume(w, 5000, 20_000);
  const free = () => Number(statfs().bavail);
  let attempts = 0;
  const r = await on(w, writeReq('config/new.yml', content), {
    statfs,
    fsync: fsyncFullWhile(() => {
      if (free() >= need) return false;
      attempts++;
      return true;
    }),
  });
  assert.equal(r.code, undefined, r.error);
  assert.equal(fs.readFileSync(w.p('config/new.yml'), 'utf8'), content);
  assert.equal(attempts, 1, 'refused once, then it fit');
  assert.deepEqual(records(w), ids.slice(1), 'only the oldest went');
});

test('an op that met a full volume part way and needs more than the free space and all the trash holds answers no_space at once; the trash untouched', async () => {
  const w = makeWorld();
  const ids = await trashed(w, 3, 10);
  const opts = { statfs: volume(w, 1000, 10), fsync: fsyncFullWhile(() => true) };
  // A write needs its content and its blocks.
  const write = await on(w, writeReq('config/other.yml', 'x'), opts);
  assert.equal(write.code, 'no_space');
  assert.deepEqual(records(w), ids);
  // A zip reports the most its archive could take, and is not run again either.
  fs.mkdirSync(w.p('pack'));
  fs.writeFileSync(w.p('pack/a.bin'), Buffer.alloc(50_000, 2));
  const zip = await on(w, { op: 'zip', path: 'pack' }, opts);
  assert.equal(zip.code, 'no_space', JSON.stringify(zip));
  assert.ok(zip.need! >= 50_000, `need ${zip.need}`);
  assert.deepEqual(records(w), ids);
  assert.equal(fs.existsSync(w.p('pack.zip')), false);
});
