import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { FileSink } from './sink.ts';

function withFile(run: (fd: number, file: string) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'felis-sink-'));
  const file = path.join(dir, 'f');
  const fd = fs.openSync(file, 'wx');
  return run(fd, file).finally(() => {
    fs.closeSync(fd);
    fs.rmSync(dir, { recursive: true, force: true });
  });
}

test('every chunk lands in order, across batch boundaries and a tail smaller than a batch', () =>
  withFile(async (fd, file) => {
    const sink = new FileSink(fd, { batchBytes: 1000, syncEvery: 1 << 30 });
    const chunks = [1, 999, 1000, 1, 2500, 7, 0, 333].map((n) => randomBytes(n));
    for (const c of chunks) sink.write(c);
    // Before `end`, only what filled a batch is on disk: 1+999, 1000, 1+2500; the last 340 wait.
    assert.equal(fs.statSync(file).size, 4501);
    await sink.end();
    assert.deepEqual(fs.readFileSync(file), Buffer.concat(chunks));
    assert.equal(sink.received, 4841);
  }));

test('a background sync starts every syncEvery bytes, never two at once, and end waits for the running one', () =>
  withFile(async (fd) => {
    const started: number[] = [];
    let release: (() => void) | undefined;
    const sink = new FileSink(fd, {
      batchBytes: 10,
      syncEvery: 30,
      fdatasync: (_fd, cb) => {
        started.push(sink.received);
        release = () => cb(null);
      },
    });
    for (let i = 0; i < 10; i++) sink.write(Buffer.alloc(10)); // 100 bytes: syncs due at 30, 60, 90
    assert.deepEqual(started, [30], 'the first sync is still running: no second one starts');
    let ended = false;
    const end = sink.end().then(() => (ended = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(ended, false, 'end waits for the running sync');
    release!();
    await end;
    assert.equal(sink.syncs, 1);
  }));

test("a background sync's error is thrown by end: the kernel reports a failed write-back only once", () =>
  withFile(async (fd) => {
    const eio = Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO', syscall: 'fdatasync' });
    const sink = new FileSink(fd, { batchBytes: 4, syncEvery: 4, fdatasync: (_fd, cb) => setImmediate(() => cb(eio)) });
    sink.write(Buffer.alloc(8));
    await assert.rejects(sink.end(), (e: NodeJS.ErrnoException) => e.code === 'EIO' && e.syscall === 'fdatasync');
  }));

test('settle waits for a running sync and never throws (the descriptor is closed after it)', () =>
  withFile(async (fd) => {
    let done = false;
    const sink = new FileSink(fd, { batchBytes: 1, syncEvery: 1, fdatasync: (_fd, cb) => setTimeout(() => ((done = true), cb(new Error('x') as NodeJS.ErrnoException)), 20) });
    sink.write(Buffer.alloc(1));
    await sink.settle();
    assert.equal(done, true);
  }));
