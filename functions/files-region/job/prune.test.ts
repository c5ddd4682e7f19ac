/**
 * region, region-plan and region-prune in the Job program, on a world the kit writes: the table
 * through the result line; the plan changes nothing; the prune removes exactly the chunks below
 * the bound, from region/, entities/ and poi/ (and the external chunk's .mcc), keeps every other
 * chunk's stored bytes, packs the files, removes a file left empty, puts the old files in the
 * trash, and leaves no working folder; a corrupt slot leaves its file alone; hostile paths refused.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { makeWorld, snapshot, TRASH_ON } from '../../../job/testing/world.ts';
import { formatResultLine, RESULT_PREFIX } from '../../../lib/protocol/result.ts';
import { parseResultPayload } from '../../../lib/protocol/result-parse.ts';
import { isWorkFolderName } from '../../../lib/protocol/working-names.ts';
import type { PruneReport, RegionReport } from '../op.ts';
import { pruneWorld, regionFile, writeRegion } from '../region.test-kit.ts';
import { readRegion } from './region-io.ts';

const table = (file: string, region = { x: 0, z: 0 }) => {
  const fd = fs.openSync(file, 'r');
  try {
    return readRegion(fd, fs.fstatSync(fd).size, region, (n) => (fs.existsSync(path.join(path.dirname(file), n)) ? fs.readFileSync(path.join(path.dirname(file), n)) : null), true);
  } finally {
    fs.closeSync(fd);
  }
};
const viaLine = (r: object) => parseResultPayload(formatResultLine(r).slice(RESULT_PREFIX.length).trimEnd());

test('the table through the result line: a long past 2^53 as a string, the others numbers', async () => {
  const w = makeWorld();
  pruneWorld(w.p('world'));
  const r = viaLine(await w.run({ op: 'region', path: 'world/region/r.0.0.mca' }));
  const t = r.report as RegionReport;
  assert.equal(t.chunks.length, 7);
  const by = new Map(t.chunks.map((c) => [`${c.x},${c.z}`, c]));
  assert.equal(by.get('31,31')!.inhabited_ticks, String(2n ** 60n));
  assert.equal(by.get('1,0')!.inhabited_ticks, 5000);
  assert.equal(by.get('20,15')!.external, true);
  assert.equal(by.get('20,15')!.inhabited_ticks, 3);
  assert.equal(by.get('0,0')!.compression, 'gzip');
  for (const [p, code] of [
    ['world/region/r.0.0.mcr', 'region_invalid'],
    ['world/region/missing/r.0.0.mca', 'not_found'],
    ['world/region/r.5.5.mca', 'not_found'],
    ['../outside/r.0.0.mca', 'bad_path'],
  ] as const) {
    assert.equal((await w.run({ op: 'region', path: p })).code, code, p);
  }
  fs.writeFileSync(w.p('world/region/r.9.9.mca'), 'short');
  const short = await w.run({ op: 'region', path: 'world/region/r.9.9.mca' });
  assert.equal(short.code, 'region_invalid');
  assert.match(short.error!, /world\/region\/r\.9\.9\.mca .*shorter than a region header/);
});

test('the plan says what would go and changes nothing', async () => {
  const w = makeWorld();
  pruneWorld(w.p('world'));
  const before = snapshot(w.root);
  const r = await w.run({ op: 'region-plan', path: 'world', below: '1000' });
  assert.equal(r.code, undefined, JSON.stringify(r));
  const p = r.report as PruneReport;
  assert.deepEqual(snapshot(w.root), before);
  assert.equal(p.region, 'world/region');
  assert.equal(p.scanned, 3);
  assert.equal(p.files_changed, 2);
  assert.deepEqual(
    p.files.map((f) => [f.path, f.chunks_removed, f.removed]),
    [
      ['world/region/r.0.0.mca', 4, false],
      ['world/region/r.1.0.mca', 2, true],
    ],
  );
  assert.equal(p.chunks_removed, 6);
  assert.ok(p.bytes_freed > 0);
  // The region folder named itself plans the same.
  const same = await w.run({ op: 'region-plan', path: 'world/region', below: '1000' });
  assert.deepEqual(same.report, p);
});

test('the prune removes exactly what the plan said, in region/, entities/ and poi/, keeps the rest byte for byte, the old files in the trash', async () => {
  const w = makeWorld();
  const { low, kept } = pruneWorld(w.p('world'));
  const sizeOf = (rels: string[]) => rels.reduce((n, r) => n + (fs.existsSync(w.p(r)) ? fs.statSync(w.p(r)).size : 0), 0);
  const all = ['region/r.0.0.mca', 'entities/r.0.0.mca', 'poi/r.0.0.mca', 'region/r.1.0.mca', 'entities/r.1.0.mca', 'region/c.20.15.mcc', 'region/r.0.1.mca'].map((r) => `world/${r}`);
  const sizeBefore = sizeOf(all);
  const oldTable = table(w.p('world/region/r.0.0.mca'));
  const oldBytes = fs.readFileSync(w.p('world/region/r.0.0.mca'));
  const untouched = fs.readFileSync(w.p('world/region/r.0.1.mca'));
  const plan = (await w.run({ op: 'region-plan', path: 'world', below: '1000' })).report as PruneReport;
  const r = await w.run({ op: 'region-prune', path: 'world', below: '1000' }, { trash: TRASH_ON });
  assert.equal(r.code, undefined, JSON.stringify(r));
  const p = r.report as PruneReport;
  assert.equal(r.files, 2);
  assert.equal(r.bytes, plan.bytes_freed);
  assert.equal(p.chunks_removed, plan.chunks_removed);
  assert.equal(sizeBefore - sizeOf(all), plan.bytes_freed, 'the bytes freed are what the disk gave back');

  const now = table(w.p('world/region/r.0.0.mca'));
  assert.deepEqual(
    now.chunks.map((c) => c.index),
    kept,
  );
  assert.equal(now.sectorsFree, 0, 'packed');
  const newBytes = fs.readFileSync(w.p('world/region/r.0.0.mca'));
  for (const c of now.chunks) {
    const o = oldTable.chunks.find((x) => x.index === c.index)!;
    assert.deepEqual(newBytes.subarray(c.offset * 4096, c.offset * 4096 + 4 + c.bytes!), oldBytes.subarray(o.offset * 4096, o.offset * 4096 + 4 + o.bytes!));
    assert.equal(c.timestamp, o.timestamp);
  }
  for (const side of ['entities', 'poi']) {
    const t = table(w.p(`world/${side}/r.0.0.mca`));
    assert.deepEqual(
      t.chunks.map((c) => c.index),
      [1, 40, 1023],
      side,
    );
    assert.ok(low.every((i) => !t.chunks.some((c) => c.index === i)));
  }
  assert.ok(!fs.existsSync(w.p('world/region/c.20.15.mcc')), 'the external chunk that went');
  assert.ok(!fs.existsSync(w.p('world/region/r.1.0.mca')) && !fs.existsSync(w.p('world/entities/r.1.0.mca')), 'a trio whose chunks all went');
  assert.deepEqual(fs.readFileSync(w.p('world/region/r.0.1.mca')), untouched);
  assert.deepEqual(
    fs.readdirSync(w.root).filter((n) => isWorkFolderName(n)),
    [],
    'no working folder or journal left',
  );
  assert.ok(p.trash_ids && p.trash_ids.length > 0, 'the old files are in the trash');
  const list = await w.run({ op: 'trash-list', path: '' }, { trash: TRASH_ON });
  const item = list.trash_items!.find((i) => i.id === p.trash_ids![0]);
  assert.ok(item?.paths.includes('world/region/r.0.0.mca'), JSON.stringify(list.trash_items));
  assert.equal(item!.op, 'region-prune');
  assert.deepEqual([...item!.paths].sort(), [...all.filter((r) => !r.endsWith('r.0.1.mca'))].sort(), 'one record holds every old file');
  // Undo: with the new files out of the way, the trash restores the old ones.
  for (const r of ['region', 'entities', 'poi']) fs.unlinkSync(w.p(`world/${r}/r.0.0.mca`));
  const back = await w.run({ op: 'trash-restore', path: '', trashId: p.trash_ids![0]! }, { trash: TRASH_ON });
  assert.equal(back.code, undefined, JSON.stringify(back));
  assert.deepEqual(fs.readFileSync(w.p('world/region/r.0.0.mca')), oldBytes);
  assert.equal(sizeOf(all), sizeBefore);
});

test('a corrupt slot leaves its file (and its entities and poi) alone; unreadable chunks are kept', async () => {
  const w = makeWorld();
  const r = regionFile(
    [
      { index: 0, inhabited: 1 },
      { index: 1, inhabited: 2 },
    ],
    { raw: [{ index: 9, offset: 1, sectors: 1 }] },
  );
  writeRegion(w.p('w/region'), 'r.0.0.mca', r);
  const ok = regionFile([{ index: 0, inhabited: 1 }]);
  writeRegion(w.p('w/region'), 'r.1.1.mca', ok);
  // The entities file of r.1.1 has a corrupt slot: its region is left alone too.
  writeRegion(w.p('w/entities'), 'r.1.1.mca', regionFile([{ index: 0, inhabited: 0 }], { raw: [{ index: 3, offset: 9999, sectors: 1 }] }));
  const before = snapshot(w.root);
  const res = await w.run({ op: 'region-prune', path: 'w', below: '100' });
  assert.equal(res.code, undefined, JSON.stringify(res));
  const p = res.report as PruneReport;
  assert.equal(p.files_changed, 0);
  assert.deepEqual(
    p.skipped.map((s) => s.path),
    ['w/region/r.0.0.mca', 'w/region/r.1.1.mca'],
  );
  assert.match(p.skipped[0]!.reason, /inside the header/);
  assert.match(p.skipped[1]!.reason, /w\/entities\/r\.1\.1\.mca.*past the file's end/);
  assert.deepEqual(snapshot(w.root), before);
});

test('hostile paths: outside, a file, no region folder, a region folder that is a link', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('empty'));
  fs.mkdirSync(w.p('linked'));
  fs.mkdirSync(path.join(w.outside, 'region'));
  writeRegion(path.join(w.outside, 'region'), 'r.0.0.mca', regionFile([{ index: 0, inhabited: 0 }]));
  fs.symlinkSync(path.join(w.outside, 'region'), w.p('linked/region'));
  fs.symlinkSync(w.outside, w.p('out'));
  for (const [p, code] of [
    ['../outside', 'bad_path'],
    ['out', 'bad_path'],
    ['empty', 'not_found'],
    ['linked', 'bad_path'],
    ['server.properties', 'bad_path'],
    ['empty/region/r.0.0.mca', 'bad_path'],
  ] as const) {
    const r = await w.run({ op: 'region-prune', path: p, below: '100' });
    assert.equal(r.code, code, `${p}: ${JSON.stringify(r)}`);
  }
  assert.ok(fs.existsSync(path.join(w.outside, 'region', 'r.0.0.mca')));
});
