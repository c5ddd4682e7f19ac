import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { type Forged, forgeZip, S_IFCHR, S_IFIFO, S_IFLNK } from '../../../job/archive/forge.test-kit.ts';
import { forgeZipEntries, hostileSuite } from '../../../job/archive/hostile-suite.test-kit.ts';
import { LEDGER_DIR } from '../../../job/runtime/withheld.ts';
import { errnoError, makeWorld, openFds, type World } from '../../../job/testing/world.ts';
import { assertRollsBackAtEveryMove, extractInChild, refused, unzip } from './unzip.test-kit.ts';

function put(w: World, rel: string, entries: Forged[] | Buffer): void {
  fs.mkdirSync(path.dirname(w.p(rel)), { recursive: true });
  fs.writeFileSync(w.p(rel), Buffer.isBuffer(entries) ? entries : forgeZip(entries));
}

// A zip stores no hard link and no GNU sparse file (test-kit.ts forges devices and FIFOs above).
hostileSuite('zip', '.zip', forgeZipEntries, new Set(['symlink', 'raw-name', 'nul-name']));

test('extracts folders, files and implied parents; backslashes become slashes; 0644; every item chowned inside the working folder; the archive stays', async () => {
  const w = makeWorld();
  put(w, 'pack.zip', [
    { name: 'Essentials/' },
    { name: 'Essentials/config.yml', data: 'a: 1\n' },
    { name: 'empty/' },
    { name: './readme.txt', data: 'read me\n' },
    { name: 'win\\sub\\a.txt', data: 'windows\n', mode: 0o100600 },
  ]);
  const chowned: string[] = [];
  const r = await unzip(w, 'pack.zip', {}, { chown: (p, uid, gid) => chowned.push(`${fs.realpathSync(p)} ${uid}:${gid}`) });
  assert.deepEqual(r, { files: 3, bytes: 5 + 8 + 8 });
  assert.equal(fs.readFileSync(w.p('Essentials/config.yml'), 'utf8'), 'a: 1\n');
  assert.equal(fs.readFileSync(w.p('win/sub/a.txt'), 'utf8'), 'windows\n');
  assert.ok(fs.statSync(w.p('empty')).isDirectory());
  for (const f of ['Essentials/config.yml', 'readme.txt', 'win/sub/a.txt']) assert.equal(fs.statSync(w.p(f)).mode & 0o777, 0o644, f);
  for (const d of ['Essentials', 'empty', 'win', 'win/sub']) assert.equal(fs.statSync(w.p(d)).mode & 0o777, 0o755, d);
  assert.equal(chowned.length, 7);
  for (const c of chowned) assert.match(c, /\/\.felis-unzip-[0-9a-f]{12}\/new\/.* 1000:1000$/);
  assert.ok(fs.existsSync(w.p('pack.zip')));
  assert.deepEqual(
    fs.readdirSync(w.root).filter((n) => n.startsWith('.felis') && n !== LEDGER_DIR),
    [],
  );
});

test('PACK.ZIP extracts; __MACOSX is skipped; GBK names without the UTF-8 flag are decoded; valid UTF-8 without the flag is kept', async () => {
  const w = makeWorld();
  const gbk = Buffer.from([0xb4, 0xe6, 0xb5, 0xb5, 0x2f, 0xcb, 0xb5, 0xc3, 0xf7, 0x2e, 0x74, 0x78, 0x74]); // 存档/说明.txt
  put(w, 'sub/PACK.ZIP', [
    { name: '__MACOSX/', mode: 0o040755 },
    { name: '__MACOSX/._x', data: 'fork' },
    { name: gbk, data: 'gbk' },
    { name: 'ünï/ok.txt', data: 'utf8' },
  ]);
  assert.deepEqual(await unzip(w, 'sub/PACK.ZIP'), { files: 2, bytes: 7 });
  assert.equal(fs.readFileSync(w.p('sub/存档/说明.txt'), 'utf8'), 'gbk');
  assert.equal(fs.readFileSync(w.p('sub/ünï/ok.txt'), 'utf8'), 'utf8');
  assert.equal(fs.existsSync(w.p('sub/__MACOSX')), false);
});

test('a file with any execute bit gets 0755, any other 0644', async () => {
  const w = makeWorld();
  put(w, 'm.zip', [
    { name: 'run.sh', data: '#!/bin/sh\n', mode: 0o100744 },
    { name: 'secret.txt', data: 's', mode: 0o100600 },
    { name: 'dos.txt', data: 'd', dosAttrs: 0x01 },
  ]);
  assert.equal((await unzip(w, 'm.zip')).files, 3);
  assert.equal(fs.statSync(w.p('run.sh')).mode & 0o777, 0o755);
  assert.equal(fs.statSync(w.p('secret.txt')).mode & 0o777, 0o644);
  assert.equal(fs.statSync(w.p('dos.txt')).mode & 0o777, 0o644);
});

test("zip-slip in every spelling, and the editor's working names, are archive_unsafe naming the entry after backslash normalisation; nothing changes", async () => {
  const cases: [string | Buffer, string][] = [
    ['../evil.txt', '../evil.txt'],
    ['a/../../evil.txt', 'a/../../evil.txt'],
    ['..\\evil.txt', '../evil.txt'],
    ['a\\..\\..\\evil.txt', 'a/../../evil.txt'],
    ['./../evil.txt', './../evil.txt'],
    ['..', '..'],
    ['../', '../'],
    ['/evil.txt', '/evil.txt'],
    ['\\evil.txt', '/evil.txt'],
    ['//server/share/evil.txt', '//server/share/evil.txt'],
    ['C:/evil.txt', 'C:/evil.txt'],
    ['c:\\evil.txt', 'c:/evil.txt'],
    ['c:evil.txt', 'c:evil.txt'],
    ['', ''],
  ];
  const w = makeWorld();
  for (const [name, entry] of cases) {
    put(w, 'slip.zip', [
      { name: 'fine.txt', data: 'ok' },
      { name, data: 'evil' },
    ]);
    const r = await refused(w, 'slip.zip');
    assert.equal(r.code, 'archive_unsafe', String(name));
    assert.equal(r.entry, entry, String(name));
    if (entry !== '') assert.match(r.error!, /leads outside the folder/);
  }
  // Names the editor keeps for its own working files.
  for (const name of ['.felis-edit-0123456789ab', 'x/.felis-unzip-0123456789ab/new/a']) {
    put(w, 'slip.zip', [{ name, data: 'x' }]);
    const r = await refused(w, 'slip.zip');
    assert.deepEqual([r.code, r.entry], ['archive_unsafe', name]);
    assert.match(r.error!, /reserved for the editor's working files/);
  }
  // A file named for the destination itself.
  put(w, 'slip.zip', [{ name: 'a/..', data: 'x' }]);
  const r = await refused(w, 'slip.zip');
  assert.equal(r.code, 'archive_unsafe');
  assert.equal(r.entry, 'a/..');
  assert.equal(fs.existsSync(path.join(w.base, 'evil.txt')), false);
});

test('a name the volume cannot hold is archive_unsafe with the entry before anything is made, its folder on the server or not; nothing changes', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('d'));
  const long = `d/${'n'.repeat(300)}.txt`;
  for (const folder of ['new', 'd']) {
    const name = folder === 'd' ? long : `new/${'n'.repeat(300)}.txt`;
    put(w, 'n.zip', [
      { name: 'ok.txt', data: 'ok' },
      { name, data: 'x' },
    ]);
    const r = await refused(w, 'n.zip');
    assert.deepEqual([r.code, r.entry], ['archive_unsafe', name], folder);
    assert.match(r.error!, /has a name of 304 bytes; a file or folder name has at most 255/);
  }
  put(w, 'nul.zip', [
    { name: 'fine.txt', data: 'ok' },
    { name: Buffer.from('nul\0.txt'), data: 'x' },
  ]);
  const nul = await refused(w, 'nul.zip');
  assert.deepEqual([nul.code, nul.entry], ['archive_unsafe', 'nul\0.txt']);
  assert.match(nul.error!, /^nul<U\+0000>\.txt has a NUL byte in its name/);
});

test("a path fits PATH_MAX where it lands: the world path of every entry and the extraction's own spelling of it", async () => {
  const w = makeWorld();
  const part = (i: number) => String(i).padStart(2, '0').padEnd(200, 'p');
  const parts = (n: number) => Array.from({ length: n }, (_, i) => part(i)).join('/');
  // 19 parts and a name: 4,032 bytes, the most an entry may have at the world's root.
  const most = `${parts(19)}/${'f'.repeat(4032 - parts(19).length - 1)}`;
  assert.equal(Buffer.byteLength(most), 4032);
  put(w, 'most.zip', [{ name: most, data: 'x' }]);
  assert.deepEqual(await unzip(w, 'most.zip'), { files: 1, bytes: 1 });
  assert.equal(fs.readFileSync(w.p(most), 'utf8'), 'x');
  // One byte more is refused at the root; below a folder of 100 bytes the world path is what counts.
  put(w, 'more.zip', [{ name: `${most}g`, data: 'x' }]);
  assert.match((await refused(w, 'more.zip')).error!, /has a path of 4033 bytes; extracted here a path has at most 4032/);
  const folder = 'f'.repeat(100);
  fs.mkdirSync(w.p(folder));
  put(w, `${folder}/deep.zip`, [{ name: most, data: 'x' }]);
  assert.match((await refused(w, `${folder}/deep.zip`)).error!, /has a path of 4032 bytes; extracted here a path has at most 3995/);
});

test('a symlink entry is archive_symlink; a pipe or a device is archive_unsafe; nothing changes', async () => {
  const w = makeWorld();
  put(w, 'l.zip', [
    { name: 'ok.txt', data: 'x' },
    { name: 'odd', data: '../outside/secret.txt', mode: S_IFLNK | 0o777 },
  ]);
  const r = await refused(w, 'l.zip');
  assert.equal(r.code, 'archive_symlink');
  assert.equal(r.entry, 'odd');
  put(w, 'p.zip', [{ name: 'fifo', mode: S_IFIFO | 0o644 }]);
  assert.deepEqual([(await refused(w, 'p.zip')).code, (await refused(w, 'p.zip')).entry], ['archive_unsafe', 'fifo']);
  put(w, 'c.zip', [{ name: 'dev/tty', mode: S_IFCHR | 0o644 }]);
  const c = await refused(w, 'c.zip');
  assert.equal(c.code, 'archive_unsafe');
  assert.match(c.error!, /not a regular file/);
});

test('damaged or self-contradicting archives are archive_invalid with the entry; nothing changes', async () => {
  const w = makeWorld();
  const data = Buffer.alloc(10_000, 'abc');
  // Over 256 KiB both ways: read and inflated as a stream, not in one call.
  const large = Buffer.alloc(600_000, 'xyz');
  const cases: [string, Forged[] | Buffer, string, RegExp][] = [
    ['more bytes than declared, streamed', [{ name: 'a.bin', data: large, declaredSize: 400_000 }], 'a.bin', /more than the 400000 bytes it declares/],
    ['fewer bytes than declared, streamed', [{ name: 'a.bin', data: large, declaredSize: 700_000 }], 'a.bin', /600000 bytes, not the 700000/],
    ['a bad CRC, streamed', [{ name: 'a.bin', data: large, crc: 5 }], 'a.bin', /CRC-32/],
    ['truncated deflate data, streamed', [{ name: 'a.bin', data: large, raw: zlib.deflateRawSync(randomBytes(600_000)).subarray(0, 300_000) }], 'a.bin', /damaged/],
    ['more bytes than declared', [{ name: 'a.bin', data, declaredSize: 9_000 }], 'a.bin', /damaged/],
    ['fewer bytes than declared', [{ name: 'a.bin', data, declaredSize: 11_000 }], 'a.bin', /damaged/],
    [
      'a bad CRC',
      [
        { name: 'ok.txt', data: 'fine' },
        { name: 'a.bin', data, crc: 1234 },
      ],
      'a.bin',
      /CRC-32/,
    ],
    ['a bad CRC, stored', [{ name: 'a.bin', data, method: 0, crc: 99 }], 'a.bin', /CRC-32/],
    ['garbage deflate data', [{ name: 'a.bin', data, raw: Buffer.alloc(64, 0xff) }], 'a.bin', /damaged/],
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
    ['a file and a folder entry of one name', [{ name: 'a/' }, { name: './a', data: '2' }], 'a', /both a file and a folder/],
    ['an empty archive', [], '', /nothing to extract/],
    ['only __MACOSX', [{ name: '__MACOSX/._a', data: 'x' }], '', /nothing to extract/],
    [
      'overlapping entries',
      [
        { name: 'a.bin', data },
        { name: 'b.bin', data, sameDataAs: 0 },
      ],
      'b.bin',
      /overlaps/,
    ],
    ['an encrypted entry', [{ name: 'a.bin', data, extraFlags: 1 }], 'a.bin', /encrypted/],
  ];
  for (const [what, entries, entry, re] of cases) {
    put(w, 'bad.zip', entries);
    const r = await refused(w, 'bad.zip');
    assert.equal(r.code, 'archive_invalid', what);
    assert.equal(r.entry ?? '', entry, what);
    assert.match(r.error!, re, what);
  }
  put(w, 'bad.zip', Buffer.from('this is not a zip at all'));
  const r = await refused(w, 'bad.zip');
  assert.equal(r.code, 'archive_invalid');
  assert.match(r.error!, /^bad\.zip is not a readable zip archive: /);
  assert.equal(r.entry, undefined);
});

test('zip bombs: a lying ratio stops at the declared size (archive_invalid); an honest one fails the space check (no_space)', async () => {
  const w = makeWorld();
  const zeros = Buffer.alloc(64 << 20); // 64 MiB of zeros deflate to about 64 KiB
  const raw = zlib.deflateRawSync(zeros, { level: 9 });
  assert.ok(raw.length < zeros.length / 500);
  put(w, 'bomb.zip', [{ name: 'bomb.bin', raw, declaredSize: 1000, crc: zlib.crc32(zeros) }]);
  const lying = await refused(w, 'bomb.zip');
  assert.equal(lying.code, 'archive_invalid');
  assert.equal(lying.entry, 'bomb.bin');
  put(w, 'bomb.zip', [{ name: 'bomb.bin', raw, declaredSize: zeros.length, crc: zlib.crc32(zeros) }]);
  const honest = await refused(w, 'bomb.zip', {}, { statfs: () => ({ bavail: 1024, bsize: 4096 }) });
  assert.equal(honest.code, 'no_space');
  assert.equal(honest.need, zeros.length + 4096);
  assert.equal(honest.avail, 4096 * 1024);
});

test('archive path checks: not an archive ending → bad_path, missing → not_found, a folder named .zip → bad_path, escapes → bad_path', async () => {
  const w = makeWorld();
  fs.writeFileSync(w.p('a.lz'), 'x');
  fs.writeFileSync(w.p('a.zip.bak'), 'x');
  fs.mkdirSync(w.p('dir.zip'));
  fs.writeFileSync(path.join(w.outside, 'o.zip'), forgeZip([{ name: 'x', data: 'x' }]));
  fs.symlinkSync('../outside/o.zip', w.p('link.zip'));
  for (const [p, code] of [
    ['a.lz', 'bad_path'],
    ['a.zip.bak', 'bad_path'],
    ['', 'bad_path'],
    ['missing.zip', 'not_found'],
    ['dir.zip', 'bad_path'],
    ['../outside/o.zip', 'bad_path'],
    ['/etc/x.zip', 'bad_path'],
    ['link.zip', 'bad_path'],
  ] as const) {
    assert.equal((await refused(w, p)).code, code, p);
  }
});

test('without overwrite, collisions are exists with the root-relative sorted conflicts and their count', async () => {
  const w = makeWorld();
  fs.writeFileSync(w.p('config/server.properties'), 'old');
  put(w, 'config/up.zip', [
    { name: 'server.properties', data: 'new' },
    { name: 'paper.yml', data: 'new' },
    { name: 'fresh.yml', data: 'new' },
  ]);
  const r = await refused(w, 'config/up.zip');
  assert.equal(r.code, 'exists');
  assert.deepEqual(r.conflicts, ['config/paper.yml', 'config/server.properties']);
  assert.equal(r.conflict_count, 2);
  assert.match(r.error!, /^2 files in the archive already exist on the server; extract again with overwrite/);
});

test('the conflicts list stops at 200 names and at 8 KiB of names; the count is the total', async () => {
  const w = makeWorld();
  const many: Forged[] = [];
  for (let i = 0; i < 201; i++) {
    fs.writeFileSync(w.p(`f${String(i).padStart(3, '0')}`), 'x');
    many.push({ name: `f${String(i).padStart(3, '0')}`, data: 'y' });
  }
  put(w, 'many.zip', many);
  const r = await refused(w, 'many.zip');
  assert.equal(r.conflicts!.length, 200);
  assert.equal(r.conflict_count, 201);
  assert.equal(r.conflicts![0], 'f000');

  const w2 = makeWorld();
  const long: Forged[] = [];
  for (let i = 0; i < 40; i++) {
    const n = `${String(i).padStart(2, '0')}${'n'.repeat(248)}`;
    fs.writeFileSync(w2.p(n), 'x');
    long.push({ name: n, data: 'y' });
  }
  put(w2, 'long.zip', long);
  const r2 = await refused(w2, 'long.zip');
  assert.equal(r2.conflicts!.length, 32);
  assert.equal(r2.conflict_count, 40);
  const { formatResultLine } = await import('../../../lib/protocol/result.ts');
  assert.ok(Buffer.byteLength(formatResultLine(r2)) < 16 << 10);
});

test('overwrite replaces files, merges folders, keeps unrelated files and adds new ones', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('plugins/Ess'), { recursive: true });
  fs.writeFileSync(w.p('plugins/Ess/config.yml'), 'old');
  fs.writeFileSync(w.p('plugins/keep.jar'), 'keep');
  put(w, 'up.zip', [
    { name: 'plugins/Ess/config.yml', data: 'new config' },
    { name: 'plugins/new.jar', data: 'jar' },
    { name: 'server.properties', data: 'motd=new\n' },
    { name: 'fresh/a/b.txt', data: 'b' },
  ]);
  const r = await unzip(w, 'up.zip', { overwrite: true });
  assert.deepEqual(r, { files: 4, bytes: 10 + 3 + 9 + 1 });
  assert.equal(fs.readFileSync(w.p('plugins/Ess/config.yml'), 'utf8'), 'new config');
  assert.equal(fs.readFileSync(w.p('plugins/keep.jar'), 'utf8'), 'keep');
  assert.equal(fs.readFileSync(w.p('plugins/new.jar'), 'utf8'), 'jar');
  assert.equal(fs.readFileSync(w.p('server.properties'), 'utf8'), 'motd=new\n');
  assert.equal(fs.readFileSync(w.p('fresh/a/b.txt'), 'utf8'), 'b');
  assert.deepEqual(
    fs.readdirSync(w.root).filter((n) => n.startsWith('.felis') && n !== LEDGER_DIR),
    [],
  );
});

test('type conflicts refuse even with overwrite, naming the server path; nothing inside or outside changes', async () => {
  const w = makeWorld();
  fs.writeFileSync(w.p('afile'), 'x');
  fs.mkdirSync(w.p('adir'));
  fs.symlinkSync('../outside', w.p('alink'));
  fs.symlinkSync('config', w.p('inlink'));
  execFileSync('mkfifo', [w.p('apipe')]);
  const cases: [Forged[], string, RegExp][] = [
    [[{ name: 'afile/x.txt', data: 'x' }], 'afile', /is a file on the server, and the archive has a folder/],
    [[{ name: 'adir', data: 'x' }], 'adir', /is a folder on the server, and the archive has a file/],
    [[{ name: 'alink/secret.txt', data: 'pwned' }], 'alink', /is a link on the server, and the archive has a folder/],
    [[{ name: 'inlink/paper.yml', data: 'x' }], 'inlink', /is a link on the server/],
    [[{ name: 'alink', data: 'x' }], 'alink', /is a link on the server, and the archive has a file/],
    [[{ name: 'apipe', data: 'x' }], 'apipe', /special file/],
  ];
  for (const [entries, entry, re] of cases) {
    put(w, 't.zip', entries);
    const r = await refused(w, 't.zip', { overwrite: true });
    assert.equal(r.code, 'type_conflict', entry);
    assert.equal(r.entry, entry);
    assert.match(r.error!, re);
    assert.match(r.error!, /; nothing was changed$/);
  }
});

test('the space check needs exactly bytes + 4096 per file and folder', async () => {
  const w = makeWorld();
  put(w, 's.zip', [
    { name: 'd/a.txt', data: 'aaaa' },
    { name: 'd/b.txt', data: 'bb' },
  ]);
  const need = 6 + 3 * 4096;
  const short = await refused(w, 's.zip', {}, { statfs: () => ({ bavail: need - 1, bsize: 1 }) });
  assert.deepEqual([short.code, short.need, short.avail], ['no_space', need, need - 1]);
  assert.deepEqual(await unzip(w, 's.zip', {}, { statfs: () => ({ bavail: need, bsize: 1 }) }), { files: 2, bytes: 6 });
});

test('when one syncfs is not available, every file is fsynced; ENOSPC at the second file is no_space and nothing changes', async () => {
  const w = makeWorld();
  put(w, 'f.zip', [
    { name: 'a.txt', data: 'a' },
    { name: 'b.txt', data: 'b' },
    { name: 'c.txt', data: 'c' },
  ]);
  // The extracted files, not the journal's own (which are fsynced whatever the volume offers).
  const staged = (fd: number) => fs.fstatSync(fd).isFile() && fs.readlinkSync(`/proc/self/fd/${fd}`).includes('/new/');
  let files = 0;
  const r = await refused(
    w,
    'f.zip',
    {},
    {
      syncfs: () => {
        throw new Error('no syncfs here');
      },
      fsync: (fd) => {
        if (staged(fd) && ++files === 2) throw errnoError('ENOSPC');
      },
    },
  );
  assert.equal(r.code, 'no_space');
  assert.match(r.error!, /filled up while extracting; nothing was changed/);
  let synced = 0;
  assert.equal(
    (
      await unzip(
        w,
        'f.zip',
        {},
        {
          syncfs: () => {
            throw new Error('no');
          },
          fsync: (fd) => void (staged(fd) && synced++),
        },
      )
    ).files,
    3,
  );
  assert.equal(synced, 3);
});

test('a rename failure at any placement move rolls the whole tree back; a clean run makes exactly 6 moves', async () => {
  const entries: Forged[] = [
    { name: 'server.properties', data: 'new props' },
    { name: 'config/paper.yml', data: 'new paper' },
    { name: 'plugins/a.jar', data: 'a' },
    { name: 'top.txt', data: 't' },
  ];
  const count = makeWorld();
  put(count, 'u.zip', entries);
  let moves = 0;
  assert.equal((await unzip(count, 'u.zip', { overwrite: true }, { rename: (a, b) => (moves++, fs.renameSync(a, b)) })).files, 4);
  assert.equal(moves, 6);
  await assertRollsBackAtEveryMove(
    () => {
      const w = makeWorld();
      put(w, 'u.zip', entries);
      return w;
    },
    'u.zip',
    6,
  );
});

test('stale working folders are removed; lookalikes stay', async () => {
  const w = makeWorld();
  for (const n of ['.felis-unzip-0123456789ab', '.felis-unzip-zzzzzzzzzzzz', '.felis-unzip-0123456789', '.felis-unzip-0123456789abcd']) {
    fs.mkdirSync(w.p(n), { mode: 0o700 }); // as an extraction makes its working folder
    fs.mkdirSync(w.p(`${n}/new`));
  }
  put(w, 'ok.zip', [{ name: 'x.txt', data: 'x' }]);
  assert.equal((await unzip(w, 'ok.zip')).files, 1);
  assert.deepEqual(
    fs
      .readdirSync(w.root)
      .filter((n) => n.startsWith('.felis-unzip-'))
      .sort(),
    ['.felis-unzip-0123456789', '.felis-unzip-0123456789abcd', '.felis-unzip-zzzzzzzzzzzz'],
  );
});

test('large entries stream from the archive; every descriptor is released and nothing else is closed', async () => {
  const w = makeWorld();
  const big = Buffer.from(Array.from({ length: 3 << 20 }, (_, i) => (i * 2654435761) >>> 24)); // incompressible enough
  put(w, 'l.zip', [
    { name: 'a.bin', data: big },
    { name: 'b.bin', data: big.subarray(1 << 20) },
    { name: 'c.txt', data: 'c' },
  ]);
  const keep = fs.openSync(w.p('server.properties'), 'r');
  const fds = openFds();
  assert.equal((await unzip(w, 'l.zip')).files, 3);
  await new Promise((r) => setTimeout(r, 50)); // closes that yauzl schedules
  assert.equal(openFds(), fds);
  assert.deepEqual(fs.readFileSync(w.p('a.bin')), big);
  assert.equal(fs.readSync(keep, Buffer.alloc(4), 0, 4, 0), 4); // still open: no stray close hit it
  fs.closeSync(keep);
});

test('progress never goes backwards, ends at the total declared bytes, and prints at least twice', async () => {
  const w = makeWorld();
  put(w, 'p.zip', [
    { name: 'a.bin', data: Buffer.alloc(100 << 10, 1) },
    { name: 'b.bin', data: Buffer.alloc(100 << 10, 2) },
  ]);
  const lines: string[] = [];
  assert.equal((await unzip(w, 'p.zip', {}, { progress: (l) => lines.push(l) })).bytes, 200 << 10);
  const seen = lines.map((l) => JSON.parse(l.replace(/^FELIS-FILES-PROGRESS: /, '')) as { done: number; total: number });
  assert.ok(seen.length >= 2);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].done >= seen[i - 1].done);
  assert.deepEqual(seen.at(-1), { done: 200 << 10, total: 200 << 10 });
});

test('--to extracts into another existing folder; a missing one is not_found, a file is bad_path, an escape bad_path', async () => {
  const w = makeWorld();
  fs.mkdirSync(w.p('dest'));
  put(w, 'archives/a.zip', [{ name: 'x/y.txt', data: 'y' }]);
  assert.equal((await unzip(w, 'archives/a.zip', { to: 'dest' })).files, 1);
  assert.equal(fs.readFileSync(w.p('dest/x/y.txt'), 'utf8'), 'y');
  assert.equal(fs.existsSync(w.p('archives/x')), false);
  assert.equal((await refused(w, 'archives/a.zip', { to: 'nope' })).code, 'not_found');
  assert.equal((await refused(w, 'archives/a.zip', { to: 'server.properties' })).code, 'bad_path');
  assert.equal((await refused(w, 'archives/a.zip', { to: '../outside' })).code, 'bad_path');
  const conflict = await refused(w, 'archives/a.zip', { to: 'dest' });
  assert.deepEqual(conflict.conflicts, ['dest/x/y.txt']);
});

test('50,000 entries extract with the peak memory of the extracting process bounded', async () => {
  const w = makeWorld();
  const entries: Forged[] = [];
  for (let i = 0; i < 50_000; i++) entries.push({ name: `d${i % 100}/f${i}.txt`, data: `file ${i}\n`, method: i % 2 ? 8 : 0 });
  put(w, 'big.zip', entries);
  const { result, maxRssMiB } = await extractInChild(w, 'big.zip');
  assert.equal(result.files, 50_000);
  assert.equal(fs.readFileSync(w.p('d7/f49907.txt'), 'utf8'), 'file 49907\n');
  // The Job's memory limit is 256 MiB and the plan never holds the entries; the aim is half of it
  // at any entry count.
  assert.ok(maxRssMiB < 128, `peak RSS ${maxRssMiB} MiB`);
});
