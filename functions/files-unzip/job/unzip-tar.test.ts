import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { type ForgedTar, forgeTar } from '../../../job/archive/forge.test-kit.ts';
import { makeWorld, openFds, type World } from '../../../job/testing/world.ts';
import { assertRollsBackAtEveryMove, extractInChild, refused, unzip } from './unzip.test-kit.ts';

/** Writes a forged tar at `rel`, gzipped when the name says so. */
function put(w: World, rel: string, entries: ForgedTar[] | Buffer): void {
  fs.mkdirSync(path.dirname(w.p(rel)), { recursive: true });
  const tar = Buffer.isBuffer(entries) ? entries : forgeTar(entries);
  fs.writeFileSync(w.p(rel), /\.(tar\.gz|tgz)$/i.test(rel) && !Buffer.isBuffer(entries) ? zlib.gzipSync(tar) : tar);
}

const tree: ForgedTar[] = [
  { name: 'plugins/', type: '5' },
  { name: 'plugins/Ess/config.yml', data: 'a: 1\n' },
  { name: './run.sh', data: '#!/bin/sh\n', mode: 0o744 },
  { name: 'empty/', type: '5' },
  { name: 'win\\sub\\a.txt', data: 'windows\n', mode: 0o600 },
];

test('.tar, .tar.gz and .TGZ extract by the zip rules: implied parents, backslashes, modes, chown inside the working folder', async () => {
  for (const rel of ['pack.tar', 'pack.tar.gz', 'sub/PACK.TGZ']) {
    const w = makeWorld();
    put(w, rel, tree);
    const chowned: string[] = [];
    const r = await unzip(w, rel, {}, { chown: (p, uid, gid) => chowned.push(`${fs.realpathSync(p)} ${uid}:${gid}`) });
    assert.deepEqual(r, { files: 3, bytes: 5 + 10 + 8 }, rel);
    const at = (f: string) => w.p(path.join(path.dirname(rel), f));
    assert.equal(fs.readFileSync(at('plugins/Ess/config.yml'), 'utf8'), 'a: 1\n');
    assert.equal(fs.readFileSync(at('win/sub/a.txt'), 'utf8'), 'windows\n');
    assert.equal(fs.statSync(at('run.sh')).mode & 0o777, 0o755);
    assert.equal(fs.statSync(at('win/sub/a.txt')).mode & 0o777, 0o644);
    assert.ok(fs.statSync(at('empty')).isDirectory());
    assert.equal(chowned.length, 8, rel); // 3 files, plugins, plugins/Ess, empty, win, win/sub
    for (const c of chowned) assert.match(c, /\/\.felis-unzip-[0-9a-f]{12}\/new\/.* 1000:1000$/);
    assert.ok(fs.existsSync(w.p(rel)));
  }
});

test('a tree packed by the tar tool (GNU long names, gzip) extracts to the same bytes as the tar tool extracts it', async () => {
  const w = makeWorld();
  const src = path.join(w.base, 'src');
  const longDir = `deep/${'d'.repeat(120)}/${'e'.repeat(90)}`;
  fs.mkdirSync(path.join(src, longDir), { recursive: true });
  fs.writeFileSync(path.join(src, longDir, `${'f'.repeat(150)}.txt`), 'long name\n');
  fs.writeFileSync(path.join(src, 'level.dat'), randomBytes(700_000));
  fs.writeFileSync(path.join(src, 'ünï.txt'), 'utf8\n');
  fs.writeFileSync(path.join(src, 'empty.txt'), '');
  for (const [rel, flags] of [
    ['gnu.tar', ['--format=gnu', '-cf']],
    ['pax.tar.gz', ['--format=pax', '-czf']],
  ] as const) {
    execFileSync('tar', ['-C', src, ...flags, w.p(rel), '.']);
    const mine = path.join(w.base, `mine-${rel}`);
    fs.mkdirSync(mine);
    const r = await unzip(w, rel, { to: '' });
    assert.equal(r.files, 4, rel);
    const theirs = path.join(w.base, `theirs-${rel}`);
    fs.mkdirSync(theirs);
    execFileSync('tar', ['-C', theirs, '-xf', w.p(rel)]);
    for (const f of [`${longDir}/${'f'.repeat(150)}.txt`, 'level.dat', 'ünï.txt', 'empty.txt']) {
      assert.deepEqual(fs.readFileSync(w.p(f)), fs.readFileSync(path.join(theirs, f)), `${rel} ${f}`);
    }
    for (const f of ['deep', 'level.dat', 'ünï.txt', 'empty.txt']) fs.rmSync(w.p(f), { recursive: true });
  }
});

test("a pax path (long, UTF-8) is honoured and judged; a GBK name in a ustar header is decoded as a zip's is", async () => {
  const w = makeWorld();
  const long = `mods/${'m'.repeat(200)}.jar`;
  const gbk = Buffer.from([0xb4, 0xe6, 0xb5, 0xb5, 0x2f, 0xcb, 0xb5, 0xc3, 0xf7, 0x2e, 0x74, 0x78, 0x74]); // 存档/说明.txt
  put(w, 'p.tar', [
    { name: 'ignored', paxPath: long, data: 'jar' },
    { name: gbk, data: 'gbk' },
  ]);
  assert.deepEqual(await unzip(w, 'p.tar'), { files: 2, bytes: 6 });
  assert.equal(fs.readFileSync(w.p(long), 'utf8'), 'jar');
  assert.equal(fs.readFileSync(w.p('存档/说明.txt'), 'utf8'), 'gbk');
  // A pax path that slips out is refused under the name the pax record gives, not the header's.
  put(w, 'slip.tar', [{ name: 'innocent.txt', paxPath: '../../evil.txt', data: 'x' }]);
  const r = await refused(w, 'slip.tar');
  assert.deepEqual([r.code, r.entry], ['archive_unsafe', '../../evil.txt']);
});

test("tar-slip in every spelling, __MACOSX and the editor's working names are judged as in a zip; nothing changes", async () => {
  const cases: [string | Buffer, string][] = [
    ['../evil.txt', '../evil.txt'],
    ['a/../../evil.txt', 'a/../../evil.txt'],
    ['..\\evil.txt', '../evil.txt'],
    ['./../evil.txt', './../evil.txt'],
    ['/etc/cron.d/evil', '/etc/cron.d/evil'],
    ['\\evil.txt', '/evil.txt'],
    ['C:/evil.txt', 'C:/evil.txt'],
    ['c:evil.txt', 'c:evil.txt'],
  ];
  const w = makeWorld();
  for (const [name, entry] of cases) {
    for (const rel of ['slip.tar', 'slip.tgz']) {
      put(w, rel, [
        { name: 'fine.txt', data: 'ok' },
        { name, data: 'evil' },
      ]);
      const r = await refused(w, rel);
      assert.deepEqual([r.code, r.entry], ['archive_unsafe', entry], `${rel} ${String(name)}`);
      assert.match(r.error!, /leads outside the folder/);
    }
  }
  // A NUL ends a name in a ustar header, but not in a pax record.
  put(w, 'nul.tar', [{ name: 'x', paxPath: 'nul\0.txt', data: 'x' }]);
  assert.deepEqual([(await refused(w, 'nul.tar')).code], ['archive_unsafe']);
  put(w, 'self.tar', [{ name: 'a/..', data: 'x' }]);
  assert.equal((await refused(w, 'self.tar')).code, 'archive_unsafe');
  put(w, 'work.tar', [{ name: 'x/.felis-unzip-0123456789ab/new/a', data: 'x' }]);
  assert.match((await refused(w, 'work.tar')).error!, /reserved for the editor's working files/);
  put(w, 'mac.tar', [
    { name: '__MACOSX/._a', data: 'x' },
    { name: 'a', data: 'a' },
  ]);
  assert.deepEqual(await unzip(w, 'mac.tar'), { files: 1, bytes: 1 });
  assert.equal(fs.existsSync(w.p('__MACOSX')), false);
});

test('a symlink is archive_symlink; a hard link, a device, a FIFO or an unknown type is archive_unsafe; nothing changes', async () => {
  const w = makeWorld();
  const cases: [ForgedTar, string, RegExp][] = [
    [{ name: 'odd', type: '2', linkname: '../outside/secret.txt' }, 'archive_symlink', /symbolic link/],
    [{ name: 'hard', type: '1', linkname: '../outside/secret.txt' }, 'archive_unsafe', /hard link/],
    [{ name: 'hard2', type: '1', linkname: 'fine.txt' }, 'archive_unsafe', /hard link/],
    [{ name: 'dev/tty', type: '3' }, 'archive_unsafe', /not a regular file/],
    [{ name: 'dev/sda', type: '4' }, 'archive_unsafe', /not a regular file/],
    [{ name: 'fifo', type: '6' }, 'archive_unsafe', /not a regular file/],
    [{ name: 'sparse', type: 'S', data: 'x' }, 'archive_unsafe', /not a regular file/],
  ];
  for (const [entry, code, re] of cases) {
    put(w, 'l.tar.gz', [{ name: 'fine.txt', data: 'ok' }, entry]);
    const r = await refused(w, 'l.tar.gz');
    assert.deepEqual([r.code, r.entry], [code, entry.name], String(entry.name));
    assert.match(r.error!, re);
  }
});

test('damaged tars and gzip streams are archive_invalid; nothing changes', async () => {
  const w = makeWorld();
  const large = randomBytes(600_000);
  const good = forgeTar([
    { name: 'ok.txt', data: 'fine' },
    { name: 'a.bin', data: large },
  ]);
  const cases: [string, string, Buffer, RegExp][] = [
    ['data cut short', 't.tar', good.subarray(0, 512 * 3 + 100_000), /not a readable tar archive: Unexpected end of data/],
    ['a size that lies (more than the data)', 't.tar', forgeTar([{ name: 'a.bin', data: 'abc', declaredSize: 100_000 }]), /not a readable tar archive/],
    ['a header cut short', 't.tar', good.subarray(0, 1024 + 300), /not a readable tar archive/],
    [
      'a bad header checksum',
      't.tar',
      forgeTar([
        { name: 'ok.txt', data: 'x' },
        { name: 'a', data: 'y', badChecksum: true },
      ]),
      /not a readable tar archive: Invalid tar header/,
    ],
    ['not a tar at all', 't.tar', Buffer.alloc(4096, 'not a tar '), /not a readable tar archive/],
    ['a gzip stream cut short', 't.tgz', zlib.gzipSync(good).subarray(0, 200_000), /not a readable gzipped tar archive/],
    ['a corrupt gzip stream', 't.tar.gz', Buffer.concat([zlib.gzipSync(good).subarray(0, 100), Buffer.alloc(5000, 0xa5)]), /not a readable gzipped tar archive/],
    ['not gzip at all', 't.tgz', good, /not a readable gzipped tar archive/],
    ['a zip named .tar', 't.tar', Buffer.from('PK\x03\x04 this is a zip, not a tar'), /not a readable tar archive/],
  ];
  for (const [what, rel, bytes, re] of cases) {
    put(w, rel, bytes);
    const r = await refused(w, rel);
    assert.equal(r.code, 'archive_invalid', what);
    assert.match(r.error!, re, what);
    assert.match(r.error!, /nothing was changed$/, what);
  }
  for (const [what, entries, entry, re] of [
    [
      'the same file twice',
      [
        { name: 'x/a', data: '1' },
        { name: 'x/b', data: '2' },
        { name: 'x\\a', data: '3' },
      ],
      'x/a',
      /twice/,
    ],
    [
      'a file and a folder of one name',
      [
        { name: 'a', data: '1' },
        { name: 'a/b', data: '2' },
      ],
      'a',
      /both a file and a folder/,
    ],
    [
      'a file and a folder entry of one name',
      [
        { name: 'a/', type: '5' },
        { name: './a', data: '2' },
      ],
      'a',
      /both a file and a folder/,
    ],
    ['an empty archive', [], '', /nothing to extract/],
    ['only __MACOSX', [{ name: '__MACOSX/._a', data: 'x' }], '', /nothing to extract/],
  ] as [string, ForgedTar[], string, RegExp][]) {
    put(w, 'd.tar', entries);
    const r = await refused(w, 'd.tar');
    assert.equal(r.code, 'archive_invalid', what);
    assert.equal(r.entry ?? '', entry, what);
    assert.match(r.error!, re, what);
  }
});

test('an honest tar too big for the volume is no_space by the same sum; type conflicts and exists as for a zip', async () => {
  const w = makeWorld();
  put(w, 's.tar', [
    { name: 'd/a.txt', data: 'aaaa' },
    { name: 'd/b.txt', data: 'bb' },
  ]);
  const need = 6 + 3 * 4096;
  const short = await refused(w, 's.tar', {}, { statfs: () => ({ bavail: need - 1, bsize: 1 }) });
  assert.deepEqual([short.code, short.need, short.avail], ['no_space', need, need - 1]);
  assert.deepEqual(await unzip(w, 's.tar', {}, { statfs: () => ({ bavail: need, bsize: 1 }) }), { files: 2, bytes: 6 });

  put(w, 'c.tgz', [
    { name: 'server.properties', data: 'new' },
    { name: 'config/paper.yml', data: 'new' },
    { name: 'fresh', data: 'x' },
  ]);
  const ex = await refused(w, 'c.tgz');
  assert.equal(ex.code, 'exists');
  assert.deepEqual(ex.conflicts, ['config/paper.yml', 'server.properties']);
  assert.equal(ex.conflict_count, 2);
  put(w, 't.tgz', [{ name: 'server.properties/x', data: 'x' }]);
  assert.equal((await refused(w, 't.tgz', { overwrite: true })).code, 'type_conflict');
  assert.deepEqual(await unzip(w, 'c.tgz', { overwrite: true }), { files: 3, bytes: 7 });
  assert.equal(fs.readFileSync(w.p('server.properties'), 'utf8'), 'new');
});

test('a rename failure during placement of a tar rolls the tree back; descriptors are all released', async () => {
  const entries: ForgedTar[] = [
    { name: 'server.properties', data: 'new props' },
    { name: 'config/paper.yml', data: 'new paper' },
    { name: 'plugins/a.jar', data: randomBytes(300_000) },
  ];
  await assertRollsBackAtEveryMove(
    () => {
      const w = makeWorld();
      put(w, 'u.tar.gz', entries);
      return w;
    },
    'u.tar.gz',
    4,
  );
  const w = makeWorld();
  put(w, 'u.tar.gz', entries);
  const fds = openFds();
  assert.equal((await unzip(w, 'u.tar.gz', { overwrite: true })).files, 3);
  put(w, 'bad.tar', forgeTar(entries).subarray(0, 5000));
  assert.equal((await refused(w, 'bad.tar')).code, 'archive_invalid');
  // Refused at the first entry of a long archive: the pass stops reading and closes its file.
  put(w, 'slip.tgz', [{ name: '../x', data: 'x' }, ...entries.map((e) => ({ ...e, name: `n/${String(e.name)}` }))]);
  assert.equal((await refused(w, 'slip.tgz')).code, 'archive_unsafe');
  // Refused at the last entry, after the large one: a name the volume cannot hold.
  const long = `d/${'n'.repeat(300)}.txt`;
  put(w, 'long.tgz', [...entries.map((e) => ({ ...e, name: `m/${String(e.name)}` })), { name: 'x', paxPath: long, data: 'x' }]);
  const r = await refused(w, 'long.tgz');
  assert.deepEqual([r.code, r.entry], ['archive_unsafe', long]);
  assert.match(r.error!, /has a name of 304 bytes/);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(openFds(), fds);
});

test('progress for a tar ends at the total declared bytes and never goes backwards', async () => {
  const w = makeWorld();
  put(w, 'p.tar', [
    { name: 'a.bin', data: Buffer.alloc(100 << 10, 1) },
    { name: 'b.bin', data: Buffer.alloc(100 << 10, 2) },
  ]);
  const lines: string[] = [];
  assert.equal((await unzip(w, 'p.tar', {}, { progress: (l) => lines.push(l) })).bytes, 200 << 10);
  const seen = lines.map((l) => JSON.parse(l.replace(/^FELIS-FILES-PROGRESS: /, '')) as { done: number; total: number });
  assert.ok(seen.length >= 2);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].done >= seen[i - 1].done);
  assert.deepEqual(seen.at(-1), { done: 200 << 10, total: 200 << 10 });
});

test('50,000 tar.gz entries extract with the peak memory of the extracting process bounded', async () => {
  const w = makeWorld();
  const entries: ForgedTar[] = [];
  for (let i = 0; i < 50_000; i++) entries.push({ name: `d${i % 100}/f${i}.txt`, data: `file ${i}\n` });
  put(w, 'big.tar.gz', entries);
  const { result, maxRssMiB } = await extractInChild(w, 'big.tar.gz');
  assert.equal(result.files, 50_000);
  assert.equal(fs.readFileSync(w.p('d7/f49907.txt'), 'utf8'), 'file 49907\n');
  // The same bound as a zip's: half the Job's 256 MiB, whatever the entry count.
  assert.ok(maxRssMiB < 128, `peak RSS ${maxRssMiB} MiB`);
});
