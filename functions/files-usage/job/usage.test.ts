import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { parseFlags } from '../../../job/program/flags.ts';
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
