import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { parseFlags } from '../../../job/program/flags.ts';
import { WARM_MAX_AGE_MS, WarmResults } from '../../../job/runtime/warm-results.ts';
import { makeWorld } from '../../../job/testing/world.ts';
import { usage } from '../op.ts';

type Report = { path: string; apparent_bytes: number; capacity: number; free: number; scanned_at: string; children: { name: string }[] };

test('the usage op reports the walk with the volume beside it: capacity and free from statfs, the scan time from the clock', async () => {
  const w = makeWorld();
  fs.writeFileSync(w.p('big.bin'), Buffer.alloc(10_000, 1));
  const statfs = () => ({ bavail: 5n, bsize: 4096n, blocks: 100n });
  const r = await w.run({ op: 'usage', path: '', depth: 1, top: 2 }, { statfs, now: () => Date.UTC(2026, 11, 7, 12) });
  assert.equal(r.code, undefined, r.error);
  const u = r.report as Report;
  assert.equal(u.path, '');
  assert.equal(u.capacity, 100 * 4096);
  assert.equal(u.free, 5 * 4096, 'free: the volume free plus an empty trash');
  assert.equal(u.scanned_at, '2026-12-07T12:00:00.000Z');
  assert.equal(u.children[0]!.name, 'big.bin');
  // A statfs that fails, or tells no size: -1, which the function answers as null.
  const blind = await w.run({ op: 'usage', path: '' }, { statfs: () => ({ bavail: 1n, bsize: 1n }) });
  assert.equal((blind.report as Report).capacity, -1);
  const broken = await w.run(
    { op: 'usage', path: '' },
    {
      statfs: () => {
        throw new Error('EIO');
      },
    },
  );
  assert.deepEqual([(broken.report as Report).capacity, (broken.report as Report).free], [-1, -1]);
});

test('a refusal of the walk is the op answer, with no report', async () => {
  const w = makeWorld();
  const r = await w.run({ op: 'usage', path: 'nope' });
  assert.equal(r.code, 'not_found');
  assert.equal(r.report, undefined);
});

test('the Job program takes -depth and -top as the contract declares them, and refuses them out of bounds', () => {
  const flags = parseFlags(['--op', 'usage', '--path', '', '--depth', '3', '--top', '100']).flags;
  assert.deepEqual(usage.decode(flags), { depth: 3, top: 100 });
  assert.equal(usage.refuse(flags), undefined);
  assert.match(usage.refuse(parseFlags(['--op', 'usage', '--depth', '4']).flags) ?? '', /-depth must be from 1 to 3/);
  assert.match(usage.refuse(parseFlags(['--op', 'usage', '--top', '0']).flags) ?? '', /-top must be from 1 to 100/);
  assert.throws(() => parseFlags(['--op', 'usage', '--depth', 'x']), /invalid value "x" for flag -depth/);
});

test('in a browse Pod (warm) an answer is given again while no folder changed and it is young; a name added below, or age, makes a new walk', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('world/region'), { recursive: true });
  fs.writeFileSync(w.p('world/region/r.0.0.mca'), Buffer.alloc(4096, 1));
  let t = 0;
  const warm = new WarmResults({ now: () => t });
  // The wall clock runs well after the folders' times: none is racy.
  let wall = Date.now() + 60_000;
  const ask = async () => {
    const r = await w.run({ op: 'usage', path: 'world', depth: 2, top: 3 }, { warm, now: () => wall, statfs: () => ({ bavail: 5n, bsize: 4096n, blocks: 100n }) });
    assert.equal(r.code, undefined, r.error);
    return r.report as Report & { files: number; bytes: number };
  };
  const first = await ask();
  assert.equal(first.files, 1);
  wall += 1000;
  t += 1000;
  const again = await ask();
  assert.deepEqual(again, first, 'the kept answer, its scan time the walk’s');
  // A file growing in place changes no folder: still the kept answer, until it is 10 s old.
  fs.appendFileSync(w.p('world/region/r.0.0.mca'), Buffer.alloc(65536, 2));
  assert.equal((await ask()).bytes, first.bytes);
  t = WARM_MAX_AGE_MS + 1;
  const aged = await ask();
  assert.ok(aged.bytes > first.bytes);
  assert.notEqual(aged.scanned_at, first.scanned_at);
  // A file added two levels below: seen at once.
  await new Promise((r) => setTimeout(r, 30)); // past the coarse clock's tick
  fs.writeFileSync(w.p('world/region/r.0.1.mca'), 'x');
  assert.equal((await ask()).files, 2);
  // Another shape is another answer.
  const r = await w.run({ op: 'usage', path: 'world', depth: 1, top: 3 }, { warm, now: () => wall });
  assert.equal((r.report as Report).children[0]!.name, 'region');
  assert.equal(warm.size, 2);
});

test('warm: a walk cut short (a folder too deep) is never kept; a one-shot Job keeps nothing', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p(Array.from({ length: 515 }, () => 'd').join('/')), { recursive: true });
  const warm = new WarmResults({ now: () => 0 });
  const wall = Date.now() + 60_000;
  const r = await w.run({ op: 'usage', path: '' }, { warm, now: () => wall });
  assert.equal((r.report as { truncated: boolean }).truncated, true);
  assert.equal(warm.size, 0);
  const ok = await w.run({ op: 'usage', path: 'config' }, { warm, now: () => wall });
  assert.equal(ok.code, undefined);
  assert.equal(warm.size, 1, 'the same op, a whole walk: kept');
});
