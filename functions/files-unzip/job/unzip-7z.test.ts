import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import type { SevenZipModuleFactory } from '7z-wasm';
import { forge7z } from '../../../job/archive/7z.test-kit.ts';
import type { ForgedTar } from '../../../job/archive/forge.test-kit.ts';
import { hostileSuite } from '../../../job/archive/hostile-suite.test-kit.ts';
import { forgeRar, forgeRar4, forgeRar5 } from '../../../job/archive/rar.test-kit.ts';
import { IN_FLIGHT, OUT_CHUNK, SevenZipRun } from '../../../job/archive/sevenzip.ts';
import { ArchiveTooLargeError, attributesKind, MAX_ENTRIES, methodMemory, SevenZipPass } from '../../../job/archive/sevenzip-pass.ts';
import { readWasm } from '../../../job/archive/wasm.ts';
import { makeWorld, type World } from '../../../job/testing/world.ts';
import { refused, unzip } from './unzip.test-kit.ts';

/** 7zz.wasm as the ArrayBuffer the factory takes. */
function wasmBytes(): ArrayBuffer {
  const b = readWasm('7zz.wasm');
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
}

type Forge = (entries: ForgedTar[]) => Buffer;
const FORMATS: [string, string, Forge][] = [
  ['7z', '.7z', forge7z],
  ['rar5', '.rar', forgeRar5],
  ['rar4', '.rar', forgeRar4],
];

hostileSuite('7z', '.7z', forge7z, new Set(['symlink', 'raw-name']));
hostileSuite('rar5', '.rar', forgeRar5, new Set(['symlink', 'hardlink', 'raw-name', 'nul-name']));
hostileSuite('rar4', '.rar', forgeRar4, new Set(['symlink', 'raw-name', 'nul-name']));

function put(w: World, rel: string, bytes: Buffer): void {
  fs.mkdirSync(path.dirname(w.p(rel)), { recursive: true });
  fs.writeFileSync(w.p(rel), bytes);
}

const big = randomBytes(3 << 20);
const honest: ForgedTar[] = [
  { name: 'plugins/', type: '5' },
  { name: 'plugins/Ess/config.yml', data: 'a: 1\n' },
  { name: 'run.sh', data: '#!/bin/sh\n', mode: 0o755 },
  { name: 'empty/', type: '5' },
  { name: 'empty.txt', data: '' },
  { name: 'world/region/r.0.0.mca', data: big },
  { name: 'ünï/说明.txt', data: 'utf8\n' },
];

for (const [label, ending, forge] of FORMATS) {
  test(`${label}: an honest forged tree extracts byte for byte, by the zip rules (implied parents, modes, empty files)`, async () => {
    const w = makeWorld();
    put(w, `pack${ending}`, forge(honest));
    const r = await unzip(w, `pack${ending}`);
    assert.deepEqual(r, { files: 5, bytes: 5 + 10 + big.length + 5 }, label);
    assert.equal(fs.readFileSync(w.p('plugins/Ess/config.yml'), 'utf8'), 'a: 1\n');
    assert.deepEqual(fs.readFileSync(w.p('world/region/r.0.0.mca')), big);
    assert.equal(fs.readFileSync(w.p('ünï/说明.txt'), 'utf8'), 'utf8\n');
    assert.equal(fs.readFileSync(w.p('empty.txt')).length, 0);
    assert.ok(fs.statSync(w.p('empty')).isDirectory());
    assert.equal(fs.statSync(w.p('run.sh')).mode & 0o777, 0o755, label);
    assert.deepEqual(
      fs.readdirSync(w.root).filter((n) => n.startsWith('.felis-unzip-')),
      [],
      'no working folder left',
    );
  });

  test(`${label}: hostile entries are refused with the zip codes and nothing changes`, async () => {
    const cases: [string, ForgedTar[], string][] = [
      [
        'slip',
        [
          { name: 'ok.txt', data: 'x' },
          { name: '../evil.txt', data: 'x' },
        ],
        'archive_unsafe',
      ],
      ['deep slip', [{ name: 'a/../../evil.txt', data: 'x' }], 'archive_unsafe'],
      ['backslash slip', [{ name: '..\\evil.txt', data: 'x' }], 'archive_unsafe'],
      ['absolute', [{ name: '/etc/evil', data: 'x' }], 'archive_unsafe'],
      ['drive', [{ name: 'C:/evil', data: 'x' }], 'archive_unsafe'],
      ['working name', [{ name: 'plugins/.felis-edit-0123456789ab', data: 'x' }], 'archive_unsafe'],
      [
        'duplicate',
        [
          { name: 'a.txt', data: 'x' },
          { name: 'a.txt', data: 'y' },
        ],
        'archive_invalid',
      ],
      [
        'file/folder clash',
        [
          { name: 'a', data: 'x' },
          { name: 'a/b', data: 'y' },
        ],
        'archive_invalid',
      ],
      ['damaged data (CRC)', [{ name: 'a.txt', data: 'hello', badChecksum: true }], 'archive_invalid'],
    ];
    cases.push([
      'symlink',
      [
        { name: 'ok', data: 'x' },
        { name: 'ln', type: '2', linkname: '../../etc/passwd' },
      ],
      'archive_symlink',
    ]);
    cases.push(['FIFO', [{ name: 'fifo', type: '6' }], 'archive_unsafe']);
    cases.push(['char device', [{ name: 'dev', type: '3', mode: 0o020644 }], 'archive_unsafe']);
    if (label === 'rar5') cases.push(['hard link', [{ name: 'hl', type: '1', linkname: 'server.properties' }], 'archive_unsafe']);
    for (const [what, entries, code] of cases) {
      const w = makeWorld();
      put(w, `h${ending}`, forge(entries));
      const r = await refused(w, `h${ending}`);
      assert.equal(r.code, code, `${label} ${what}: ${JSON.stringify(r)}`);
    }
  });

  test(`${label}: __MACOSX entries are skipped (their data too); a clash with the server and a full volume are refused`, async () => {
    const w = makeWorld();
    put(
      w,
      `m${ending}`,
      forge([
        { name: '__MACOSX/._a', data: 'fork' },
        { name: 'a.txt', data: 'aaa' },
        { name: '__MACOSX/._b', data: 'fork2' },
        { name: 'b.txt', data: 'bb' },
      ]),
    );
    assert.deepEqual(await unzip(w, `m${ending}`), { files: 2, bytes: 5 });
    assert.equal(fs.readFileSync(w.p('a.txt'), 'utf8'), 'aaa');
    assert.equal(fs.readFileSync(w.p('b.txt'), 'utf8'), 'bb');
    assert.ok(!fs.existsSync(w.p('__MACOSX')));
    // Again: a.txt and b.txt now exist, so without overwrite the answer is `exists`.
    assert.equal((await refused(w, `m${ending}`)).code, 'exists');
    put(w, `c${ending}`, forge([{ name: 'config/paper.yml/x', data: 'x' }]));
    assert.equal((await refused(w, `c${ending}`)).code, 'type_conflict');
    const r = await refused(w, `m${ending}`, { overwrite: true }, { statfs: () => ({ bavail: 1, bsize: 4096 }) as fs.StatsFs });
    assert.equal(r.code, 'no_space');
  });

  test(`${label}: a truncated archive and a lying size are archive_invalid, nothing changed`, async () => {
    const w = makeWorld();
    const whole = forge([
      { name: 'a.bin', data: randomBytes(50_000) },
      { name: 'b.txt', data: 'b' },
    ]);
    put(w, `t${ending}`, whole.subarray(0, whole.length - 30_000));
    assert.equal((await refused(w, `t${ending}`)).code, 'archive_invalid');
    put(w, `s${ending}`, forge([{ name: 'a.txt', data: 'hello', declaredSize: 3 }]));
    assert.equal((await refused(w, `s${ending}`)).code, 'archive_invalid');
    put(w, `n${ending}`, Buffer.from('not an archive at all'));
    assert.equal((await refused(w, `n${ending}`)).code, 'archive_invalid');
  });
}

test('a .rar that is really a 7z, or a .7z that is really a rar, is archive_invalid', async () => {
  const w = makeWorld();
  put(w, 'x.rar', forge7z([{ name: 'a', data: 'a' }]));
  put(w, 'y.7z', forgeRar5([{ name: 'a', data: 'a' }]));
  assert.match((await refused(w, 'x.rar')).error ?? '', /7z archive, not a \.rar/);
  assert.equal((await refused(w, 'y.7z')).code, 'archive_invalid');
});

test('a 7z made by 7-Zip itself (LZMA2, solid) extracts to the same bytes', async () => {
  const w = makeWorld();
  const src = path.join(w.base, 'src');
  fs.mkdirSync(path.join(src, 'mods/deep'), { recursive: true });
  const files: Record<string, Buffer> = { 'level.dat': randomBytes(300_000), 'mods/a.jar': Buffer.from('jar'.repeat(10_000)), 'mods/deep/empty.txt': Buffer.alloc(0), 'ünï.txt': Buffer.from('u\n') };
  for (const [f, b] of Object.entries(files)) fs.writeFileSync(path.join(src, f), b);
  // 7-Zip writes the archive through NODEFS into the test's own folder.
  const out = path.join(w.root, 'made.7z');
  const SevenZip = createRequire(import.meta.url)('7z-wasm') as SevenZipModuleFactory;
  const m = await SevenZip({ wasmBinary: wasmBytes(), stdout: () => {}, stderr: () => {} });
  m.FS.mkdir('/h');
  m.FS.mount(m.NODEFS, { root: w.base }, '/h');
  m.FS.chdir('/h/src');
  m.callMain(['a', '-t7z', '-m0=LZMA2', '-mx=5', '-ms=on', `/h/root/made.7z`, '.']);
  assert.ok(fs.statSync(out).size > 0);
  fs.mkdirSync(w.p('x'));
  assert.deepEqual(await unzip(w, 'made.7z', { to: 'x' }), { files: 4, bytes: Object.values(files).reduce((s, b) => s + b.length, 0) });
  for (const [f, b] of Object.entries(files)) assert.deepEqual(fs.readFileSync(w.p(`x/${f}`)), b, f);
});

test("7-Zip's attributes and methods are read as stated", () => {
  assert.deepEqual(attributesKind('D drwxr-xr-x'), { kind: 'dir', perm: 0o755 });
  assert.deepEqual(attributesKind(' -rwsr-x--T'), { kind: 'file', perm: 0o4750 & 0o777 });
  assert.deepEqual(attributesKind('A lrwxrwxrwx'), { kind: 'symlink', perm: 0o777 });
  assert.deepEqual(attributesKind(' crw-r--r--'), { kind: 'special', perm: 0o644 });
  assert.deepEqual(attributesKind('A'), { kind: 'file', perm: 0o644 });
  assert.deepEqual(attributesKind('D'), { kind: 'dir', perm: 0o755 });
  assert.equal(methodMemory('LZMA2:24'), 16 << 20);
  assert.equal(methodMemory('BCJ LZMA:26'), 64 << 20);
  assert.equal(methodMemory('LZMA2:1536m'), 1536 * 2 ** 20);
  assert.equal(methodMemory('PPMD:o6:mem24'), 16 << 20);
  assert.equal(methodMemory('v6:m3:4M'), 4 << 20);
  assert.equal(methodMemory('m0:16'), 1 << 16);
  assert.equal(methodMemory('Copy'), 0);
});

test('a 7z whose dictionary is past the limit is too_large before anything is extracted; one within it is not refused for it', async () => {
  const w = makeWorld();
  // LZMA2 (id 0x21) with one property byte: the dictionary is (2 | p & 1) << (p / 2 + 11).
  const lzma2 = (p: number) => Buffer.from([0x21, 0x21, 0x01, p]);
  put(w, 'big-dict.7z', forge7z([{ name: 'a.txt', data: 'a' }], { coder: lzma2(28) })); // 64 MiB
  const r = await refused(w, 'big-dict.7z');
  assert.equal(r.code, 'too_large', JSON.stringify(r));
  assert.match(r.error ?? '', /64 MiB dictionary/);
  put(w, 'ok-dict.7z', forge7z([{ name: 'a.txt', data: 'a' }], { coder: lzma2(24) })); // 16 MiB, but not LZMA2 data
  const r2 = await refused(w, 'ok-dict.7z');
  assert.equal(r2.code, 'archive_invalid', JSON.stringify(r2));
});

test('a 7-Zip run holds a bounded amount of output: it waits while its output is unread', async (t) => {
  const w = makeWorld();
  put(w, 'b.7z', forge7z([{ name: 'big.bin', data: randomBytes(24 << 20) }]));
  const fd = fs.openSync(w.p('b.7z'), 'r');
  t.after(() => fs.closeSync(fd));
  const run = new SevenZipRun(fd, '7z', ['x', '-so', '-p-']);
  const first = await run.read();
  assert.ok(first && first.length > 0);
  // Nothing more is read for a while: the worker must stop after a few MiB, not run ahead.
  await new Promise((r) => setTimeout(r, 1500));
  const held = run.unreadBytes;
  assert.ok(held > 0 && held <= IN_FLIGHT + OUT_CHUNK, `at most ${IN_FLIGHT + OUT_CHUNK} bytes wait unread (${held})`);
  let n = first.length;
  for (let b = await run.read(); b; b = await run.read()) n += b.length;
  assert.equal(n, 24 << 20);
  assert.equal(run.end().code, 0);
});

/** Runs 7-Zip (7z-wasm) on this thread to make an archive in the world, as a user's 7-Zip would. */
async function make7z(w: World, args: string[], files: Record<string, string>): Promise<void> {
  const src = path.join(w.base, 'src');
  fs.rmSync(src, { recursive: true, force: true });
  fs.mkdirSync(src);
  for (const [f, b] of Object.entries(files)) fs.writeFileSync(path.join(src, f), b);
  const SevenZip = createRequire(import.meta.url)('7z-wasm') as SevenZipModuleFactory;
  const m = await SevenZip({ wasmBinary: wasmBytes(), stdout: () => {}, stderr: () => {} });
  m.FS.mkdir('/h');
  m.FS.mount(m.NODEFS, { root: w.base }, '/h');
  m.FS.chdir('/h/src');
  m.callMain(args);
}

test('password-protected archives (entries, or the header too) are archive_invalid, as an encrypted zip entry is; nothing changes', async () => {
  const w = makeWorld();
  await make7z(w, ['a', '-t7z', '-pSECRET', '/h/root/enc.7z', 'a.txt'], { 'a.txt': 'secret data' });
  await make7z(w, ['a', '-t7z', '-pSECRET', '-mhe=on', '/h/root/hdr.7z', 'a.txt'], { 'a.txt': 'secret data' });
  put(w, 'enc.rar', forgeRar([{ name: 'a.txt', data: 'x' }], 4, { encrypted: true }));
  for (const rel of ['enc.7z', 'hdr.7z', 'enc.rar']) {
    const r = await refused(w, rel);
    assert.equal(r.code, 'archive_invalid', `${rel}: ${JSON.stringify(r)}`);
    assert.match(r.error ?? '', /encrypted|password-protected/, rel);
  }
});

test('one volume of a multi-volume RAR (4 or 5) is archive_invalid', async () => {
  const w = makeWorld();
  for (const v of [4, 5] as const) {
    put(w, `vol${v}.rar`, forgeRar([{ name: 'a.txt', data: 'x' }], v, { volume: true }));
    const r = await refused(w, `vol${v}.rar`);
    assert.equal(r.code, 'archive_invalid', JSON.stringify(r));
    assert.match(r.error ?? '', /multi-volume/, `rar${v}`);
  }
});

test('an archive listing more entries than the limit is refused as too large, at the first entry past it', async (t) => {
  const w = makeWorld();
  for (const [ending, bytes] of [
    ['7z', forge7z],
    ['rar', forgeRar5],
  ] as const) {
    put(
      w,
      `many.${ending}`,
      bytes([
        { name: 'a', data: 'a' },
        { name: 'b', data: 'b' },
        { name: 'c', data: 'c' },
        { name: 'd', data: 'd' },
      ]),
    );
    const fd = fs.openSync(w.p(`many.${ending}`), 'r');
    t.after(() => fs.closeSync(fd));
    const pass = SevenZipPass.open(fd, ending, false, 3);
    let seen = 0;
    await assert.rejects(
      async () => {
        for (let e = await pass.next(); e; e = await pass.next()) seen++;
      },
      (e) => e instanceof ArchiveTooLargeError && /more than 3 entries/.test(e.message),
    );
    pass.close();
    assert.equal(seen, 3);
  }
});

test('a 7z or rar of one entry more than MAX_ENTRIES (150,000) is too_large, naming the limit, and nothing changes', { timeout: 300_000 }, async () => {
  assert.equal(MAX_ENTRIES, 150_000, 'the stated limit of docs/archives.md');
  const many = Array.from({ length: MAX_ENTRIES + 1 }, (_, i) => ({ name: `d${Math.floor(i / 1000)}/f${i}`, data: '' }));
  for (const [ending, forge] of [
    ['7z', forge7z],
    ['rar', forgeRar5],
  ] as const) {
    const w = makeWorld();
    put(w, `many.${ending}`, forge(many));
    const r = await refused(w, `many.${ending}`);
    assert.equal(r.code, 'too_large', `${ending}: ${JSON.stringify(r)}`);
    assert.match(r.error ?? '', /more than 150000 entries/, ending);
  }
});
