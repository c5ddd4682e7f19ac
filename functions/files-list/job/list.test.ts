import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { entryOf, formatModTime, ZERO_TIME } from '../../../job/op-kit/list-entry.ts';
import { errnoError, makeWorld, PROPS } from '../../../job/testing/world.ts';
import { formatResultLine } from '../../../lib/protocol/result.ts';
import { availBytes } from './list.ts';

const fixedStatfs = (bavail: bigint) => () => ({ bavail, bsize: 1n });

test('the root shows server.properties with its size and config as a folder; config shows [paper.yml]', async () => {
  const w = makeWorld();
  fs.rmSync(w.p('config/paper-global.yml'));
  const r = await w.run({ op: 'list', path: '' });
  assert.equal(r.code, undefined);
  const byName = Object.fromEntries(r.entries!.map((e) => [e.name, e]));
  assert.deepEqual(Object.keys(byName).sort(), ['config', 'server.properties']);
  assert.equal(byName['server.properties'].size, Buffer.byteLength(PROPS));
  assert.equal(byName['server.properties'].is_dir, false);
  assert.equal(byName.config.is_dir, true);
  const c = await w.run({ op: 'list', path: 'config' });
  assert.deepEqual(
    c.entries!.map((e) => e.name),
    ['paper.yml'],
  );
  assert.equal(c.truncated, false);
  // "." and "./" are the root too.
  assert.deepEqual((await w.run({ op: 'list', path: '.' })).entries!.length, 2);
  assert.deepEqual((await w.run({ op: 'list', path: './' })).entries!.length, 2);
});

test('entries come in OS directory order, not sorted', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('many'));
  const names = Array.from({ length: 60 }, (_, i) => `f${(i * 37) % 60}-${'xyzabc'[i % 6]}`);
  for (const n of names) fs.writeFileSync(w.p(`many/${n}`), n);
  const osOrder: string[] = [];
  const d = fs.opendirSync(w.p('many'));
  for (let e = d.readSync(); e; e = d.readSync()) osOrder.push(e.name);
  d.closeSync();
  assert.notDeepEqual(osOrder, [...osOrder].sort(), 'precondition: this filesystem returns an unsorted order');
  const r = await w.run({ op: 'list', path: 'many' });
  assert.deepEqual(
    r.entries!.map((e) => e.name),
    osOrder,
  );
});

test('more than 2000 entries: the first 2000 and truncated; exactly 2000 is not truncated', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('big'));
  for (let i = 0; i < 2000; i++) fs.writeFileSync(w.p(`big/${i}`), '');
  const exact = await w.run({ op: 'list', path: 'big' });
  assert.equal(exact.entries!.length, 2000);
  assert.equal(exact.truncated, false);
  fs.writeFileSync(w.p('big/one-more'), '');
  const over = await w.run({ op: 'list', path: 'big' });
  assert.equal(over.entries!.length, 2000);
  assert.equal(over.truncated, true);
  const all = fs.readdirSync(w.p('big'));
  assert.equal(new Set(over.entries!.map((e) => e.name)).size, 2000);
  assert.ok(over.entries!.every((e) => all.includes(e.name)));
});

test('mod_time is Go RFC 3339 with nanoseconds in UTC', async () => {
  assert.equal(formatModTime(1795966740683989581n), '2026-11-29T15:39:00.683989581Z');
  assert.equal(formatModTime(1795966740123400000n), '2026-11-29T15:39:00.1234Z');
  assert.equal(formatModTime(1795966740000000000n), '2026-11-29T15:39:00Z');
  assert.equal(formatModTime(0n), '1970-01-01T00:00:00Z');
  assert.equal(formatModTime(-1n), '1969-12-31T23:59:59.999999999Z');
  const w = makeWorld();
  fs.utimesSync(w.p('server.properties'), 1795966740.5, 1795966740.25);
  const r = await w.run({ op: 'list', path: '' });
  const e = r.entries!.find((x) => x.name === 'server.properties')!;
  assert.equal(e.mod_time, formatModTime(fs.statSync(w.p('server.properties'), { bigint: true }).mtimeNs));
  assert.equal(e.mod_time, '2026-11-29T15:39:00.25Z');
});

test('a vanished entry is kept with size 0 and the zero time', () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('v'));
  fs.writeFileSync(w.p('v/gone'), 'xxxx');
  fs.mkdirSync(w.p('v/gone-dir'));
  const fd = fs.openSync(w.p('v'), fs.constants.O_RDONLY);
  const dir = fs.opendirSync(`/proc/self/fd/${fd}`, { encoding: 'buffer' as BufferEncoding });
  try {
    const dirents = [dir.readSync(), dir.readSync()] as unknown as fs.Dirent<Buffer>[];
    // Read from the directory, then deleted before the stat.
    fs.rmSync(w.p('v/gone'));
    fs.rmSync(w.p('v/gone-dir'), { recursive: true });
    const entries = dirents.map((d) => entryOf(fd, d)).sort((a, b) => a.name.localeCompare(b.name));
    assert.deepEqual(entries, [
      { name: 'gone', size: 0, is_dir: false, mod_time: ZERO_TIME, mode: '000', is_symlink: false },
      { name: 'gone-dir', size: 0, is_dir: true, mod_time: ZERO_TIME, mode: '000', is_symlink: false },
    ]);
  } finally {
    dir.closeSync();
    fs.closeSync(fd);
  }
});

test('avail from statfs(root): as is, capped to MaxInt64, 0, and -1 on error', async () => {
  const w = makeWorld();
  const calls: string[] = [];
  const r1 = await w.run({ op: 'list', path: '' }, { statfs: (p) => (calls.push(p), { bavail: 12345n, bsize: 1n }) });
  assert.deepEqual(calls, [w.root]);
  assert.equal(r1.avail, 12345);
  const r2 = await w.run({ op: 'list', path: '' }, { statfs: fixedStatfs((1n << 64n) - 1n) });
  assert.equal(r2.avail, Number((1n << 63n) - 1n));
  const r3 = await w.run({ op: 'list', path: '' }, { statfs: fixedStatfs(0n) });
  assert.equal(r3.avail, 0);
  assert.doesNotMatch(formatResultLine(r3), /avail/);
  const r4 = await w.run(
    { op: 'list', path: '' },
    {
      statfs: () => {
        throw errnoError('ENOSYS');
      },
    },
  );
  assert.equal(r4.avail, -1);
  assert.equal(r4.entries!.length, 2);
  assert.equal(
    availBytes(() => ({ bavail: 3, bsize: 4096 }), '/'),
    12288,
  );
  // The real statfs gives some non-negative figure.
  assert.ok((await w.run({ op: 'list', path: '' })).avail! >= 0);
});

test('list refusals: a file, a missing folder, escapes, links leading out', async () => {
  const w = makeWorld();
  fs.symlinkSync(w.outside, w.p('abs-out'));
  fs.symlinkSync('../outside', w.p('rel-out'));
  fs.symlinkSync('config', w.p('cfg-link'));
  assert.equal((await w.run({ op: 'list', path: 'server.properties' })).code, 'bad_path');
  assert.deepEqual(await w.run({ op: 'list', path: 'nope' }), { code: 'not_found', error: 'nope does not exist' });
  for (const p of ['../outside', '/etc', w.outside, 'abs-out', 'rel-out', 'config/../..']) {
    const r = await w.run({ op: 'list', path: p });
    assert.equal(r.code, 'bad_path', p);
    assert.equal(r.entries, undefined, p);
  }
  // A link inside is followed, and a link in a listing is reported as a link (not a folder).
  const viaLink = await w.run({ op: 'list', path: 'cfg-link' });
  assert.deepEqual(viaLink.entries!.map((e) => e.name).sort(), ['paper-global.yml', 'paper.yml']);
  const rootList = await w.run({ op: 'list', path: '' });
  assert.equal(rootList.entries!.find((e) => e.name === 'cfg-link')!.is_dir, false);
});

test('a name that is not valid UTF-8 is listed (lossily) with its real size', async () => {
  const w = makeWorld();
  const raw = Buffer.concat([Buffer.from(w.p('')), Buffer.from('/bad-'), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')]);
  fs.writeFileSync(raw, 'abc');
  const r = await w.run({ op: 'list', path: '' });
  const e = r.entries!.find((x) => x.name.startsWith('bad-'))!;
  assert.equal(e.size, 3);
  assert.notEqual(e.mod_time, ZERO_TIME);
  assert.ok(path.basename(e.name).includes('\ufffd'));
});
