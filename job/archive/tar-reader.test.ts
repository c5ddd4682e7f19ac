import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { forgeTar } from './forge.test-kit.ts';
import { type TarEntry, TarPass } from './tar-reader.ts';
import { ArchiveReadError } from './zip-reader.ts';

async function collect(data: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of data) parts.push(c);
  return Buffer.concat(parts);
}

function open(t: { after: (f: () => void) => void }, bytes: Buffer): number {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-tr-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'a'), bytes);
  const fd = fs.openSync(path.join(dir, 'a'), 'r');
  t.after(() => fs.closeSync(fd));
  return fd;
}

test('a pass gives raw names, kinds, modes and sizes in archive order; unread data is skipped; read data is whole', async (t) => {
  const big = randomBytes(700_000);
  const gbk = Buffer.from([0xb4, 0xe6, 0xb5, 0xb5]);
  const tar = forgeTar([
    { name: 'dir/', type: '5', mode: 0o750 },
    { name: 'dir/skipped.bin', data: randomBytes(5000) },
    { name: 'dir/big.bin', data: big, mode: 0o755 },
    { name: gbk, data: 'g' },
    { name: 'x', paxPath: 'ünï/long/path.txt', data: 'pax' },
    { name: 'ln', type: '2', linkname: 'dir' },
    { name: 'hard', type: '1', linkname: 'x' },
    { name: 'fifo', type: '6' },
  ]);
  for (const gzip of [false, true]) {
    const fd = open(t, gzip ? zlib.gzipSync(tar) : tar);
    const before = fs.readdirSync('/proc/self/fd').length;
    const pass = await TarPass.open(fd, gzip ? 'gzip' : undefined);
    const seen: TarEntry[] = [];
    for (let e = await pass.next(); e !== null; e = await pass.next()) {
      seen.push(e);
      if (e.rawName.toString() === 'dir/big.bin') assert.deepEqual(await collect(await pass.openData(e)), big);
    }
    pass.close();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(fs.readdirSync('/proc/self/fd').length, before, 'the pass closed its own open of the file, and only that');
    assert.equal(fs.fstatSync(fd).isFile(), true); // the caller's descriptor stays open
    assert.deepEqual(
      seen.map((e) => [e.rawName.toString('hex'), e.typed?.kind, e.typed?.perm, e.uncompressedSize, e.crc32, e.localHeaderOffset]),
      [
        [Buffer.from('dir/').toString('hex'), 'dir', 0o750, 0, undefined, -1],
        [Buffer.from('dir/skipped.bin').toString('hex'), 'file', 0o644, 5000, undefined, -1],
        [Buffer.from('dir/big.bin').toString('hex'), 'file', 0o755, 700_000, undefined, -1],
        [gbk.toString('hex'), 'file', 0o644, 1, undefined, -1],
        [Buffer.from('ünï/long/path.txt').toString('hex'), 'file', 0o644, 3, undefined, -1],
        [Buffer.from('ln').toString('hex'), 'symlink', 0o644, 0, undefined, -1],
        [Buffer.from('hard').toString('hex'), 'hardlink', 0o644, 0, undefined, -1],
        [Buffer.from('fifo').toString('hex'), 'special', 0o644, 0, undefined, -1],
      ],
      gzip ? 'gzip' : 'tar',
    );
  }
});

test('data asked for after the next entry, data cut short and a damaged gzip are ArchiveReadErrors', async (t) => {
  const tar = forgeTar([
    { name: 'a', data: 'aaa' },
    { name: 'b', data: randomBytes(100_000) },
  ]);
  let pass = await TarPass.open(open(t, tar));
  const a = (await pass.next())!;
  await pass.next();
  await assert.rejects(pass.openData(a), ArchiveReadError);
  pass.close();

  pass = await TarPass.open(open(t, tar.subarray(0, 512 * 3 + 50_000)));
  await pass.next();
  const b = (await pass.next())!;
  await assert.rejects(collect(await pass.openData(b)), (e) => e instanceof ArchiveReadError && /Unexpected end of data/.test(e.message));
  await assert.rejects(pass.next(), ArchiveReadError); // the pass stays failed
  pass.close();

  const gz = zlib.gzipSync(tar);
  gz[gz.length - 6] ^= 0xff; // the trailer's CRC-32
  pass = await TarPass.open(open(t, gz), 'gzip');
  await assert.rejects(async () => {
    for (let e = await pass.next(); e !== null; e = await pass.next()) await collect(await pass.openData(e));
  }, ArchiveReadError);
  pass.close();
});
