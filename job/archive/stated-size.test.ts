import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { compress } from './codec.test-kit.ts';
import { xzStatedSize, zstdContentSize, zstdStatedSize } from './stated-size.ts';

function withFile<T>(bytes: Buffer, f: (fd: number) => T): T {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-stated-'));
  const p = path.join(dir, 'f');
  fs.writeFileSync(p, bytes);
  const fd = fs.openSync(p, 'r');
  try {
    return f(fd);
  } finally {
    fs.closeSync(fd);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('a zstd frame header states its content size in each of its field widths', async () => {
  // 1-byte (single segment), 2-byte (stored less 256), 4-byte and 8-byte fields.
  for (const n of [0, 100, 255, 256, 1000, 65_791, 100_000, 9 << 20]) {
    const frame = await compress('zstd', Buffer.alloc(n, 7));
    assert.equal(zstdContentSize(frame), n, `${n} bytes`);
  }
  const eight = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0, 1, 0, 0, 0]); // FCS flag 3, single segment
  assert.equal(zstdContentSize(eight), 2 ** 32);
});

test('a zstd frame that states no size, or what is not zstd, states nothing', async () => {
  const streamed = await new Promise<Buffer>((resolve, reject) => {
    const c = zlib.createZstdCompress();
    const out: Buffer[] = [];
    c.on('data', (b: Buffer) => out.push(b))
      .on('end', () => resolve(Buffer.concat(out)))
      .on('error', reject);
    c.end(Buffer.alloc(300_000));
  });
  assert.equal(zstdContentSize(streamed), undefined);
  assert.equal(zstdContentSize(Buffer.from('not zstd at all, no')), undefined);
  assert.equal(zstdContentSize(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x40])), undefined, 'a header cut short');
  assert.equal(withFile(await compress('zstd', Buffer.alloc(5000)), zstdStatedSize), 5000);
});

test("an xz file's index states its uncompressed size; padding, damage or no xz states nothing", async () => {
  const data = Buffer.alloc(3 << 20, 1);
  const xz = await compress('xz', data, { xzPreset: 0 });
  assert.equal(withFile(xz, xzStatedSize), data.length);
  const two = Buffer.concat([await compress('xz', Buffer.alloc(10)), await compress('xz', Buffer.alloc(20))]);
  assert.equal(withFile(two, xzStatedSize), 20, 'the last stream only: a lower bound');
  assert.equal(withFile(Buffer.concat([xz, Buffer.alloc(4)]), xzStatedSize), undefined, 'stream padding');
  const badBackward = Buffer.from(xz);
  badBackward.writeUInt32LE(0xffffff, badBackward.length - 8);
  assert.equal(withFile(badBackward, xzStatedSize), undefined);
  assert.equal(withFile(Buffer.from('plain text, certainly not xz'), xzStatedSize), undefined);
});
