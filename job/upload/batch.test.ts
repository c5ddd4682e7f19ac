import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { BLOCK_BYTES, BlockWriter, blocks } from './batch.ts';

async function* chunksOf(sizes: number[]): AsyncGenerator<Buffer> {
  let n = 0;
  for (const s of sizes) {
    const b = Buffer.alloc(s);
    for (let i = 0; i < s; i++) b[i] = (n + i) & 0xff;
    n += s;
    yield b;
  }
}

test('blocks gathers chunks into groups of at least the block size without copying them, the rest last', async () => {
  const got: { chunks: Buffer[]; bytes: number }[] = [];
  for await (const b of blocks(chunksOf([3, 0, 4, 2, 5, 1]), 6)) got.push(b);
  assert.deepEqual(
    got.map((b) => [b.chunks.map((c) => c.length), b.bytes]),
    [
      [[3, 4], 7],
      [[2, 5], 7],
      [[1], 1],
    ],
  );
});

function tmpFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-batch-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'data');
}

test('queued blocks land at their positions, in order of the stream, whatever order the disk finishes them in', async () => {
  const file = tmpFile();
  const fh = await fs.promises.open(file, 'w+');
  // A disk that finishes later writes first: the positions, not the order of completion, decide.
  const delays = [30, 20, 10, 0];
  let call = 0;
  const slow = {
    writev: async (bufs: Buffer[], at: number) => {
      const d = delays[call++ % delays.length]!;
      await new Promise((r) => setTimeout(r, d));
      return fh.writev(bufs, at);
    },
  } as unknown as FileHandle;
  const w = new BlockWriter(slow, 5, 1 << 20);
  let expected = Buffer.alloc(5);
  for await (const b of blocks(chunksOf([100, 200, 50, 300, 7]), 120)) {
    await w.write(b);
    expected = Buffer.concat([expected, ...b.chunks]);
  }
  await w.flush();
  await fh.close();
  assert.deepEqual(fs.readFileSync(file), expected);
});

test('at most the in-flight bytes are queued: write waits for the disk beyond them', async () => {
  let inFlight = 0;
  let most = 0;
  const release: (() => void)[] = [];
  const fh = {
    writev: async (bufs: Buffer[]) => {
      const n = bufs.reduce((a, b) => a + b.length, 0);
      inFlight += n;
      most = Math.max(most, inFlight);
      await new Promise<void>((r) => release.push(r));
      inFlight -= n;
      return { bytesWritten: n, buffers: bufs };
    },
  } as unknown as FileHandle;
  const w = new BlockWriter(fh, 0, 250);
  const b = () => ({ chunks: [Buffer.alloc(100)], bytes: 100 });
  await w.write(b());
  await w.write(b());
  // The third takes the queue past 250 bytes: it waits until one of the first finishes.
  let third = false;
  const p = w.write(b()).then(() => (third = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(third, false);
  release.shift()!();
  await p;
  assert.equal(third, true);
  while (release.length) release.shift()!();
  await w.flush();
  assert.equal(most, 300);
});

test('a short write is carried on from where it stopped; a failed one fails the next call, and settle waits for the rest', async () => {
  const file = tmpFile();
  const real = await fs.promises.open(file, 'w+');
  let calls = 0;
  const partial = {
    // Takes at most 3 bytes per call, across chunk boundaries.
    writev: async (bufs: Buffer[], at: number) => {
      calls++;
      const all = Buffer.concat(bufs).subarray(0, 3);
      return real.writev([all], at);
    },
  } as unknown as FileHandle;
  const w = new BlockWriter(partial, 0);
  await w.write({ chunks: [Buffer.from('ab'), Buffer.from('cdefg')], bytes: 7 });
  await w.flush();
  await real.close();
  assert.equal(fs.readFileSync(file, 'utf8'), 'abcdefg');
  assert.equal(calls, 3);

  const failing = {
    writev: async () => {
      await new Promise((r) => setTimeout(r, 5));
      throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    },
  } as unknown as FileHandle;
  const f = new BlockWriter(failing, 0);
  await f.write({ chunks: [Buffer.alloc(1)], bytes: 1 });
  await f.settle();
  await assert.rejects(f.write({ chunks: [Buffer.alloc(1)], bytes: 1 }), { code: 'ENOSPC' });
  await assert.rejects(f.flush(), { code: 'ENOSPC' });
});

test('write-back starts in the background once enough bytes are written, one at a time, and settle waits for it', async () => {
  let syncs = 0;
  let syncing = 0;
  let overlap = false;
  let finishSync: (() => void) | undefined;
  const fh = {
    writev: async (bufs: Buffer[]) => ({ bytesWritten: bufs.reduce((a, b) => a + b.length, 0), buffers: bufs }),
    datasync: () => {
      syncs++;
      if (syncing > 0) overlap = true;
      syncing++;
      return new Promise<void>((r) => {
        finishSync = () => {
          syncing--;
          r();
        };
      });
    },
  } as unknown as FileHandle;
  const w = new BlockWriter(fh, 0, 1 << 20, 300);
  const b = () => ({ chunks: [Buffer.alloc(100)], bytes: 100 });
  await w.write(b());
  await w.write(b());
  await w.settle();
  assert.equal(syncs, 0, 'not before 300 bytes');
  await w.write(b());
  await new Promise((r) => setImmediate(r));
  assert.equal(syncs, 1);
  // Another 300 bytes while the first write-back runs: no second one alongside it.
  for (let i = 0; i < 3; i++) await w.write(b());
  await new Promise((r) => setImmediate(r));
  assert.equal(syncs, 1);
  let settled = false;
  const s = w.settle().then(() => (settled = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(settled, false, 'settle waits for the write-back under way');
  finishSync!();
  await s;
  assert.equal(overlap, false);
});

test('receive writes the stream from its start, feeds every hash, and refuses a block past the limit unwritten', async () => {
  const file = tmpFile();
  fs.writeFileSync(file, Buffer.from('head'));
  const fh = await fs.promises.open(file, 'r+');
  try {
    const sizes = [3000, 5000, 2000];
    const parts: Buffer[] = [];
    for await (const c of chunksOf(sizes)) parts.push(c);
    const expected = Buffer.concat(parts);
    const a = createHash('sha256');
    const b = createHash('sha256');
    const out = new BlockWriter(fh, 4);
    await out.receive(chunksOf(sizes), expected.length, [a, b], () => new Error('too long'));
    assert.equal(out.received, expected.length);
    assert.deepEqual(fs.readFileSync(file), Buffer.concat([Buffer.from('head'), expected]));
    const sum = createHash('sha256').update(expected).digest('hex');
    assert.equal(a.digest('hex'), sum);
    assert.equal(b.digest('hex'), sum);

    const over = new BlockWriter(fh, 0);
    await assert.rejects(
      over.receive(chunksOf([BLOCK_BYTES, BLOCK_BYTES]), BLOCK_BYTES + 1, [], () => new Error('too long')),
      /too long/,
    );
    await over.settle();
    assert.equal(over.received, BLOCK_BYTES, 'the block past the limit was not handed over');
  } finally {
    await fh.close();
  }
});
