import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { ZipPass } from './zip-reader.ts';
import { FileSpill, MemorySpill, type Spill, ZIP64_ENTRY_FROM, ZipWriter } from './zip-writer.ts';

const hasInfoZip = spawnSync('unzip', ['-v'], { stdio: 'ignore' }).status === 0;

function tmp(t: { after: (fn: () => void) => void }): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-zipw-'));
  t.after(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

async function write(file: string, spill: Spill, fill: (z: ZipWriter) => Promise<void>): Promise<void> {
  const out = fs.createWriteStream(file);
  const z = new ZipWriter(out, spill);
  await fill(z);
  await z.finish();
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
}

/** Every entry as our reader sees it: name, sizes, and the data's CRC checked against the record. */
async function readAll(file: string): Promise<{ name: string; size: number; data?: Buffer }[]> {
  const fd = fs.openSync(file, 'r');
  const pass = await ZipPass.open(fd);
  const got: { name: string; size: number; data?: Buffer }[] = [];
  try {
    for (let e = await pass.next(); e; e = await pass.next()) {
      const chunks: Buffer[] = [];
      for await (const c of await pass.openData(e)) chunks.push(c as Buffer);
      const data = Buffer.concat(chunks);
      assert.equal(data.length, e.uncompressedSize);
      assert.equal(zlib.crc32(data) >>> 0, e.crc32);
      got.push({ name: e.rawName.toString('utf8'), size: e.uncompressedSize, data });
    }
  } finally {
    pass.close();
    fs.closeSync(fd);
  }
  return got;
}

test('stored and deflated files, folders with their modes, UTF-8 names: read back byte for byte, by Info-ZIP too', async (t) => {
  const d = tmp(t);
  const file = path.join(d, 'a.zip');
  const big = Buffer.alloc(300_000, 'compressible ');
  const mtime = new Date(2024, 4, 6, 7, 8, 10);
  await write(file, new MemorySpill(), async (z) => {
    await z.addDirectory({ name: 'w', mtime, mode: 0o040755 });
    await z.addFile({ name: 'w/stored.txt', mtime, mode: 0o100644 }, [Buffer.from('hello '), Buffer.from('world')], 0, 11);
    await z.addFile({ name: 'w/deflated.txt', mtime, mode: 0o100755 }, [big.subarray(0, 1000), big.subarray(1000)], 1, big.length);
    await z.addFile({ name: 'w/空.txt', mtime, mode: 0o100644 }, [], 0, 0);
  });
  const got = await readAll(file);
  assert.deepEqual(
    got.map((g) => [g.name, g.size]),
    [
      ['w/', 0],
      ['w/stored.txt', 11],
      ['w/deflated.txt', big.length],
      ['w/空.txt', 0],
    ],
  );
  assert.equal(got[1].data!.toString(), 'hello world');
  assert.ok(got[2].data!.equals(big));
  assert.ok(fs.statSync(file).size < big.length / 10, 'the large file was deflated');
  if (hasInfoZip) {
    const r = spawnSync('unzip', ['-t', file], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const z = spawnSync('zipinfo', [file], { encoding: 'utf8' });
    assert.match(z.stdout, /drwxr-xr-x .* w\//);
    assert.match(z.stdout, /-rwxr-xr-x .* w\/deflated\.txt/);
  }
});

test('more than 65,535 entries: zip64 end records, the central directory spilled to a file, every entry read back', { timeout: 120_000 }, async (t) => {
  const d = tmp(t);
  const file = path.join(d, 'many.zip');
  const spillFile = path.join(d, 'spill');
  const spillFd = fs.openSync(spillFile, 'w+');
  const n = 70_000;
  const mtime = new Date();
  try {
    await write(file, new FileSpill(spillFd), async (z) => {
      for (let i = 0; i < n; i++) await z.addFile({ name: `d${i % 50}/f${i}`, mtime, mode: 0o100644 }, [Buffer.from(`file ${i}`)], 0, 1);
    });
    // The records went to the spill file, not memory: about 50 bytes each.
    assert.ok(fs.fstatSync(spillFd).size > n * 46);
  } finally {
    fs.closeSync(spillFd);
  }
  const tail = fs.readFileSync(file).subarray(-98);
  assert.equal(tail.readUInt32LE(0), 0x06064b50, 'zip64 end of central directory record');
  assert.equal(tail.readBigUInt64LE(32), BigInt(n));
  const fd = fs.openSync(file, 'r');
  const pass = await ZipPass.open(fd);
  assert.equal(pass.declaredEntries, n);
  let count = 0;
  let last = '';
  for (let e = await pass.next(); e; e = await pass.next()) {
    count++;
    last = e.rawName.toString();
  }
  pass.close();
  fs.closeSync(fd);
  assert.equal(count, n);
  assert.equal(last, `d${(n - 1) % 50}/f${n - 1}`);
  if (hasInfoZip) {
    const r = spawnSync('unzip', ['-tq', file], { encoding: 'utf8', maxBuffer: 64 << 20 });
    assert.equal(r.status, 0, r.stdout.slice(-2000) + r.stderr);
    assert.match(r.stdout, /No errors detected/);
  }
});

test('an entry that may pass 4 GiB gets zip64 sizes in its local header, descriptor and record', async (t) => {
  const d = tmp(t);
  const file = path.join(d, 'z64.zip');
  const data = Buffer.alloc(5000, 'q');
  await write(file, new MemorySpill(), async (z) => {
    await z.addFile({ name: 'huge.bin', mtime: new Date(), mode: 0o100644 }, [data], 1, ZIP64_ENTRY_FROM);
    await z.addFile({ name: 'small.bin', mtime: new Date(), mode: 0o100644 }, [data], 0, data.length);
  });
  const bytes = fs.readFileSync(file);
  assert.equal(bytes.readUInt16LE(4), 45, 'version needed 4.5');
  assert.equal(bytes.readUInt32LE(18), 0xffffffff);
  assert.equal(bytes.readUInt16LE(30 + 'huge.bin'.length), 0x0001, 'zip64 extra field');
  const got = await readAll(file);
  assert.deepEqual(
    got.map((g) => [g.name, g.size]),
    [
      ['huge.bin', 5000],
      ['small.bin', 5000],
    ],
  );
  assert.ok(got[0].data!.equals(data));
  if (hasInfoZip) assert.equal(spawnSync('unzip', ['-tq', file]).status, 0);
});

test('a file that grows past 4 GiB without zip64 sizes is an error, not a damaged archive', { timeout: 120_000 }, async () => {
  const chunk = Buffer.alloc(64 << 20);
  // 65 pieces of the same 64 MiB buffer: 4 GiB + 64 MiB, never held at once.
  const chunks = async function* () {
    for (let i = 0; i < 65; i++) yield chunk;
  };
  const nowhere = fs.createWriteStream('/dev/null');
  const z = new ZipWriter(nowhere, new MemorySpill());
  await assert.rejects(z.addFile({ name: 'grew.bin', mtime: new Date(), mode: 0o100644 }, chunks(), 0, 10), /grew past 4 GiB/);
  nowhere.destroy();
});

test('an output that fails mid-entry rejects the entry, deflated or stored', { timeout: 30_000 }, async () => {
  for (const level of [0, 1]) {
    let written = 0;
    const out = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _enc, cb) {
        written += chunk.length;
        setImmediate(() => cb(written > 300_000 ? new Error('disk gone') : null));
      },
    });
    const z = new ZipWriter(out, new MemorySpill());
    // Random bytes do not deflate: the deflater keeps producing output for the failing stream.
    const chunks = function* () {
      for (let i = 0; i < 40; i++) yield randomBytes(256 << 10);
    };
    await assert.rejects(z.addFile({ name: 'x.bin', mtime: new Date(), mode: 0o100644 }, chunks(), level, 40 << 18), /disk gone/);
  }
});
