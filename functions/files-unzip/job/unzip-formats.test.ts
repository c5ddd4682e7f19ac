/**
 * Every tar format (plain and in each compression) against the hostile-entry suite, and the
 * formats' own round trips and damage.
 */

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { test } from 'node:test';
import { type Codec, compress } from '../../../job/archive/codec.test-kit.ts';
import { type ForgedTar, forgeTar } from '../../../job/archive/forge.test-kit.ts';
import { hostileSuite } from '../../../job/archive/hostile-suite.test-kit.ts';
import { makeWorld } from '../../../job/testing/world.ts';
import { extractInChild, refused, unzip } from './unzip.test-kit.ts';

const TAR_CARRIES = new Set(['symlink', 'hardlink', 'special', 'raw-name', 'pax', 'dir-entry', 'nul-name']);
const TARS: [format: string, ending: string, codec: Codec | undefined][] = [
  ['tar', '.tar', undefined],
  ['tar.gz', '.tar.gz', 'gzip'],
  ['tar.bz2', '.tar.bz2', 'bzip2'],
  ['tar.xz', '.tar.xz', 'xz'],
  ['tar.zst', '.tar.zst', 'zstd'],
];

const forgeWith = (codec: Codec | undefined) => async (entries: ForgedTar[]) => (codec ? compress(codec, forgeTar(entries)) : forgeTar(entries));

for (const [format, ending, codec] of TARS) hostileSuite(format, ending, forgeWith(codec), TAR_CARRIES);

const tree: ForgedTar[] = [
  { name: 'plugins/', type: '5' },
  { name: 'plugins/Ess/config.yml', data: 'a: 1\n' },
  { name: './run.sh', data: '#!/bin/sh\n', mode: 0o744 },
  { name: 'big.bin', data: randomBytes(700_000) },
];

for (const [format, ending, codec] of TARS.slice(1)) {
  const short = { 'tar.gz': '.tgz', 'tar.bz2': '.tbz2', 'tar.xz': '.txz', 'tar.zst': '.tzst' }[format]!;
  test(`${format} (${ending} and ${short.toUpperCase()}) extracts every entry by the zip rules`, async () => {
    for (const rel of [`pack${ending}`, `sub/PACK${short.toUpperCase()}`]) {
      const w = makeWorld();
      fs.mkdirSync(w.p('sub'), { recursive: true });
      fs.writeFileSync(w.p(rel), await forgeWith(codec)(tree));
      const r = await unzip(w, rel);
      assert.deepEqual(r, { files: 3, bytes: 5 + 10 + 700_000 }, rel);
      const at = (f: string) => w.p(rel.includes('/') ? `sub/${f}` : f);
      assert.deepEqual(fs.readFileSync(at('big.bin')), tree[3]!.data);
      assert.equal(fs.statSync(at('run.sh')).mode & 0o777, 0o755);
      assert.deepEqual(
        fs.readdirSync(w.p(rel.includes('/') ? 'sub' : '.')).filter((n) => n.startsWith('.felis-unzip')),
        [],
      );
    }
  });

  test(`${format}: a stream cut short, corrupt, or with garbage after it is archive_invalid; nothing changes`, async () => {
    const good = await forgeWith(codec)(tree);
    const corrupt = Buffer.from(good);
    for (let i = Math.floor(good.length / 2); i < Math.floor(good.length / 2) + 64; i++) corrupt[i]! ^= 0x5a;
    const cases: [string, Buffer][] = [
      ['cut short', good.subarray(0, Math.floor(good.length * 0.6))],
      ['corrupt', corrupt],
      ['not compressed at all', forgeTar(tree)],
    ];
    for (const [what, bytes] of cases) {
      const w = makeWorld();
      fs.writeFileSync(w.p(`t${ending}`), bytes);
      const r = await refused(w, `t${ending}`);
      assert.equal(r.code, 'archive_invalid', `${what}: ${JSON.stringify(r)}`);
    }
  });
}

const SINGLES: [format: string, ending: string, codec: Codec][] = [
  ['gz', '.gz', 'gzip'],
  ['bz2', '.BZ2', 'bzip2'],
  ['xz', '.xz', 'xz'],
  ['zst', '.zst', 'zstd'],
];

for (const [format, ending, codec] of SINGLES) {
  test(`a single ${format} file extracts to its name without the ending, byte for byte, next to it or into to`, async () => {
    const w = makeWorld();
    const data = Buffer.concat([randomBytes(1_200_000), Buffer.from('tail\n'.repeat(50_000))]);
    fs.mkdirSync(w.p('logs'));
    fs.mkdirSync(w.p('into'));
    fs.writeFileSync(w.p(`logs/latest.log${ending}`), await compress(codec, data));
    assert.deepEqual(await unzip(w, `logs/latest.log${ending}`), { files: 1, bytes: data.length });
    assert.deepEqual(fs.readFileSync(w.p('logs/latest.log')), data);
    assert.equal(fs.statSync(w.p('logs/latest.log')).mode & 0o777, 0o644);
    assert.ok(fs.existsSync(w.p(`logs/latest.log${ending}`)), 'the compressed file stays');
    assert.deepEqual(await unzip(w, `logs/latest.log${ending}`, { to: 'into' }), { files: 1, bytes: data.length });
    assert.deepEqual(fs.readFileSync(w.p('into/latest.log')), data);
    assert.deepEqual(fs.readdirSync(w.p('logs')).sort(), ['latest.log', `latest.log${ending}`]);
  });

  test(`a single ${format} file never lands on an existing file without overwrite, nor on a folder`, async () => {
    const w = makeWorld();
    fs.writeFileSync(w.p(`a.txt${ending}`), await compress(codec, Buffer.from('new')));
    fs.writeFileSync(w.p('a.txt'), 'old');
    const r = await refused(w, `a.txt${ending}`);
    assert.equal(r.code, 'exists');
    assert.deepEqual(r.conflicts, ['a.txt']);
    assert.deepEqual(await unzip(w, `a.txt${ending}`, { overwrite: true }), { files: 1, bytes: 3 });
    assert.equal(fs.readFileSync(w.p('a.txt'), 'utf8'), 'new');
    fs.writeFileSync(w.p(`d${ending}`), await compress(codec, Buffer.from('x')));
    fs.mkdirSync(w.p('d'));
    assert.equal((await refused(w, `d${ending}`, { overwrite: true })).code, 'type_conflict');
    fs.writeFileSync(w.p(`.felis-unzip-0123456789ab${ending}`), await compress(codec, Buffer.from('x')));
    const work = await refused(w, `.felis-unzip-0123456789ab${ending}`);
    assert.equal(work.code, 'archive_unsafe');
    assert.match(work.error!, /reserved for the editor's working files/);
  });

  test(`a single ${format} file cut short, corrupt, followed by garbage, or not ${format} at all is archive_invalid; nothing changes`, async () => {
    const data = randomBytes(300_000);
    const good = await compress(codec, data);
    const corrupt = Buffer.from(good);
    for (let i = Math.floor(good.length / 2); i < Math.floor(good.length / 2) + 64; i++) corrupt[i]! ^= 0x5a;
    const cases: [string, Buffer][] = [
      ['cut short', good.subarray(0, Math.floor(good.length * 0.7))],
      ['corrupt', corrupt],
      ['garbage after it', Buffer.concat([good, Buffer.from('garbage after the stream')])],
      ['not compressed', data],
      ['empty', Buffer.alloc(0)],
    ];
    for (const [what, bytes] of cases) {
      const w = makeWorld();
      fs.writeFileSync(w.p(`f.bin${ending}`), bytes);
      const r = await refused(w, `f.bin${ending}`);
      assert.equal(r.code, 'archive_invalid', `${what}: ${JSON.stringify(r)}`);
      assert.equal(fs.existsSync(w.p('f.bin')), false);
    }
  });

  test(`a single ${format} file that decompresses past the volume's free space stops with no_space; nothing is left`, async () => {
    const w = makeWorld();
    const zeros = Buffer.alloc(8 << 20);
    fs.writeFileSync(w.p(`z${ending}`), await compress(codec, zeros));
    const r = await refused(w, `z${ending}`, {}, { statfs: () => ({ bavail: 1024, bsize: 1024 }) });
    assert.equal(r.code, 'no_space', JSON.stringify(r));
    assert.equal(r.entry, 'z');
    assert.deepEqual(await unzip(w, `z${ending}`, {}, { statfs: () => ({ bavail: 9 << 10, bsize: 1024 }) }), { files: 1, bytes: zeros.length });
  });
}

for (const [format, ending, codec] of SINGLES.filter(([f]) => f === 'zst' || f === 'xz')) {
  test(`a single ${format} file stating a size past the volume's free space is no_space before it is decoded`, async () => {
    const w = makeWorld();
    const stated = await compress(codec, Buffer.alloc(8 << 20), { xzPreset: 0 });
    // Damaged right after the header (the first block): decoding would fail at once (archive_invalid); the stated size refuses first.
    const damaged = Buffer.from(stated);
    for (let i = 10; i < 16; i++) damaged[i]! ^= 0x5a;
    fs.writeFileSync(w.p(`z${ending}`), damaged);
    const room = { statfs: () => ({ bavail: 1024, bsize: 1024 }) };
    const r = await refused(w, `z${ending}`, {}, room);
    assert.equal(r.code, 'no_space', JSON.stringify(r));
    assert.equal(r.entry, 'z');
    const enough = await refused(w, `z${ending}`, {}, { statfs: () => ({ bavail: 9 << 10, bsize: 1024 }) });
    assert.equal(enough.code, 'archive_invalid', `with room, the damage is what refuses it: ${JSON.stringify(enough)}`);
  });
}

test('a single compressed file extracted into a deep folder: a path past PATH_MAX in the world is archive_unsafe; nothing changes', async () => {
  const w = makeWorld();
  // 20 folders of 200 bytes (4,019 bytes with their slashes), made by the Job one level at a time.
  let deep = '';
  for (let i = 0; i < 20; i++) {
    deep = deep === '' ? 'd'.repeat(200) : `${deep}/${'d'.repeat(200)}`;
    assert.deepEqual(await w.run({ op: 'mkdir', path: deep }), {});
  }
  const name = `${'g'.repeat(248)}.log`; // the archive's own name 255 bytes
  fs.writeFileSync(w.p(`${name}.gz`), await compress('gzip', Buffer.from('log\n')));
  const r = await refused(w, `${name}.gz`, { to: deep });
  assert.deepEqual([r.code, r.entry], ['archive_unsafe', name]);
  assert.match(r.error!, /has a path of 252 bytes; extracted here a path has at most 76$/);
});

test('concatenated streams are one file, as the tools read them (gzip members, zstd frames, xz streams, bzip2 streams)', async () => {
  for (const [, ending, codec] of SINGLES) {
    const w = makeWorld();
    const a = randomBytes(100_000);
    const b = Buffer.from('second part\n'.repeat(1000));
    fs.writeFileSync(w.p(`two${ending}`), Buffer.concat([await compress(codec, a), await compress(codec, b)]));
    assert.deepEqual(await unzip(w, `two${ending}`), { files: 1, bytes: a.length + b.length }, codec);
    assert.deepEqual(fs.readFileSync(w.p('two')), Buffer.concat([a, b]), codec);
  }
});

test('an xz stream that needs a dictionary past the memory limit is archive_invalid, saying so', async () => {
  const w = makeWorld();
  // A forged xz stream header plus a block header whose LZMA2 filter asks for a 1.5 GiB dictionary
  // (property byte 38): liblzma refuses it at the block header, before allocating.
  const good = await compress('xz', Buffer.from('hello'));
  const forged = Buffer.from(good);
  // The block header starts at 12: its size byte, flags, the optional compressed and
  // uncompressed sizes (varints), then the first filter's id (0x21, LZMA2), props size and dict byte.
  const flags = forged[13]!;
  let at = 14;
  const skipVarint = () => {
    while (forged[at++]! & 0x80);
  };
  if (flags & 0x40) skipVarint();
  if (flags & 0x80) skipVarint();
  assert.deepEqual([forged[at], forged[at + 1]], [0x21, 1], 'the first filter is LZMA2');
  forged[at + 2] = 38;
  const { crc32 } = await import('node:zlib');
  const headerSize = (forged[12]! + 1) * 4;
  forged.writeUInt32LE(crc32(forged.subarray(12, 12 + headerSize - 4)), 12 + headerSize - 4);
  fs.writeFileSync(w.p('huge.xz'), forged);
  const r = await refused(w, 'huge.xz');
  assert.equal(r.code, 'archive_invalid');
  assert.match(r.error!, /needs more than the 72 MiB of memory the Job allows/);
});

test('50,000 entries of a tar.xz and a tar.zst extract with the peak memory of the extracting process bounded', async () => {
  const entries: ForgedTar[] = [];
  for (let i = 0; i < 50_000; i++) entries.push({ name: `d${i % 100}/f${i}.txt`, data: `file ${i}\n` });
  const tar = forgeTar(entries);
  for (const [ending, codec] of [
    ['.tar.xz', 'xz'],
    ['.tar.zst', 'zstd'],
  ] as const) {
    const w = makeWorld();
    fs.writeFileSync(w.p(`big${ending}`), await compress(codec, tar));
    const { result, maxRssMiB } = await extractInChild(w, `big${ending}`);
    assert.equal(result.files, 50_000, ending);
    assert.equal(fs.readFileSync(w.p('d7/f49907.txt'), 'utf8'), 'file 49907\n');
    // The same bound as a zip's: half the Job's 256 MiB, whatever the entry count.
    assert.ok(maxRssMiB < 128, `${ending}: peak RSS ${maxRssMiB} MiB`);
  }
});
